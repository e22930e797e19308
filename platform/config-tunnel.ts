/**
 * The settings of the edge tunnel config the routing controller writes, part of {@link VARIABLES} in
 * config.ts.
 */
import path from 'node:path';
import { ConfigError } from '../domain/errors.js';
import { dataPath, oneOf, optional, type VariableSpec } from './config-parsers.js';

/** Edge tunnel settings of {@link SvcConfig}. */
export interface TunnelConfig {
  /** Tunnel config file the routing controller writes. @default <SVC_DATA_DIR>/edge/tunnel.yml */
  readonly tunnelConfigFile: string;
  /** Tunnel name written to the tunnel config (`tunnel`). @default svc */
  readonly tunnelName: string;
  /** Credentials file path written to the tunnel config (`credentials-file`). @default <SVC_DATA_DIR>/edge/<tunnel>.json */
  readonly tunnelCredentialsFile: string;
  /** Command run with `/bin/sh -c` after the tunnel config changed; unset: none. */
  readonly tunnelReloadCommand: string | undefined;
  /** How the edge reaches app processes: `host` (loopback) or `bridge` (node IP). @default host */
  readonly tunnelNetworking: 'host' | 'bridge';
  /** Node IP used for bridge networking. @default 127.0.0.1 */
  readonly tunnelNodeIp: string;
}

export const TUNNEL_VARIABLES = {
  tunnelConfigFile: {
    name: 'SVC_TUNNEL_CONFIG',
    description: 'Tunnel config file written by the routing controller',
    defaultText: '<SVC_DATA_DIR>/edge/tunnel.yml',
    parse: (raw, env) => {
      const value = optional(raw);
      return value === undefined ? dataPath(env, 'edge', 'tunnel.yml') : path.resolve(value);
    },
  },
  tunnelName: {
    name: 'SVC_TUNNEL_NAME',
    description: 'Tunnel name in the tunnel config',
    defaultText: 'svc',
    parse: (raw) => {
      const value = optional(raw) ?? 'svc';
      if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(value))
        throw new ConfigError('SVC_TUNNEL_NAME', `"${value}" must be letters, digits, dots, underscores and hyphens`);
      return value;
    },
  },
  tunnelCredentialsFile: {
    name: 'SVC_TUNNEL_CREDENTIALS_FILE',
    description: 'Credentials file path written to the tunnel config (the file itself is never read)',
    defaultText: '<SVC_DATA_DIR>/edge/<tunnel>.json',
    parse: (raw, env) => {
      const value = optional(raw);
      return value === undefined
        ? dataPath(env, 'edge', `${optional(env.SVC_TUNNEL_NAME) ?? 'svc'}.json`)
        : path.resolve(value);
    },
  },
  tunnelReloadCommand: {
    name: 'SVC_TUNNEL_RELOAD_COMMAND',
    description: 'Command (sh -c) run after the tunnel config changed',
    defaultText: '(none)',
    parse: optional,
  },
  tunnelNetworking: {
    name: 'SVC_TUNNEL_NETWORKING',
    description: 'How the edge reaches processes: host (127.0.0.1:<port>) or bridge (<node-ip>:<static-port>)',
    defaultText: 'host',
    parse: oneOf('SVC_TUNNEL_NETWORKING', ['host', 'bridge'] as const, 'host'),
  },
  tunnelNodeIp: {
    name: 'SVC_TUNNEL_NODE_IP',
    description: 'Node IP for bridge networking',
    defaultText: '127.0.0.1',
    parse: (raw) => {
      const value = optional(raw) ?? '127.0.0.1';
      if (!/^\d{1,3}(\.\d{1,3}){3}$/.test(value))
        throw new ConfigError('SVC_TUNNEL_NODE_IP', `"${value}" is not an IPv4 address`);
      return value;
    },
  },
} satisfies { [K in keyof TunnelConfig]: VariableSpec<TunnelConfig[K]> };
