/**
 * The settings of the edge: analytics sync, access identities and the log push receiver, part of {@link
 * VARIABLES} in config.ts.
 */
import { ConfigError } from '../domain/errors.js';
import { durationMs, httpUrl, optional, type VariableSpec } from './config-parsers.js';

/** Edge settings of {@link SvcConfig}. */
export interface EdgeConfig {
  /** Edge analytics API token (Bearer); never logged. */
  readonly edgeApiToken: string | undefined;
  /** Edge zone id for the analytics sync. */
  readonly edgeZoneId: string | undefined;
  /** Edge API base URL; the analytics sync posts to `<url>/graphql`. @default https://api.cloudflare.com/client/v4 */
  readonly edgeApiUrl: string;
  /** Edge access team domain (issuer `https://<domain>`); with `edgeAccessAud`, validated edge identities are administrators. */
  readonly edgeAccessTeamDomain: string | undefined;
  /** Audience tag edge access assertions must carry. */
  readonly edgeAccessAud: string | undefined;
  /** Where the edge access signing keys (JWKS) are read. @default https://<team domain>/cdn-cgi/access/certs */
  readonly edgeAccessCertsUrl: string | undefined;
  /** Shared secret of the edge log push receiver; never logged. Unset: the receiver refuses every batch. */
  readonly edgeLogpushToken: string | undefined;
  /** How far back each analytics sync reads, in ms. @default 24 hours */
  readonly edgeLookbackMs: number;
  /** Ceiling of the analytics lookback, in ms. @default 7 days */
  readonly edgeLookbackMaxMs: number;
  /** Period of the analytics sync, in ms; 0 disables the periodic sync. @default 1 hour */
  readonly edgeSyncIntervalMs: number;
}

export const EDGE_VARIABLES = {
  edgeApiToken: {
    name: 'SVC_EDGE_API_TOKEN',
    description: 'Edge analytics API token',
    secret: true,
    defaultText: '(none: no analytics sync)',
    parse: optional,
  },
  edgeZoneId: {
    name: 'SVC_EDGE_ZONE_ID',
    description: 'Edge zone id for the analytics sync',
    defaultText: '(none: no analytics sync)',
    parse: optional,
  },
  edgeApiUrl: {
    name: 'SVC_EDGE_API_URL',
    description: 'Edge API base URL (analytics at <url>/graphql)',
    defaultText: 'https://api.cloudflare.com/client/v4',
    parse: (raw) => {
      const value = optional(raw) ?? 'https://api.cloudflare.com/client/v4';
      if (!/^https?:\/\/[^\s]+$/.test(value))
        throw new ConfigError('SVC_EDGE_API_URL', `"${value}" is not an http(s) URL`);
      return value;
    },
  },
  edgeAccessTeamDomain: {
    name: 'SVC_EDGE_ACCESS_TEAM_DOMAIN',
    description:
      'Edge access team domain; with SVC_EDGE_ACCESS_AUD, Edge-Access-Jwt-Assertion is validated and a valid identity is an administrator',
    defaultText: '(none: edge identities are ignored)',
    parse: (raw) => {
      const value = optional(raw)
        ?.replace(/^https:\/\//, '')
        .replace(/\/+$/, '');
      if (
        value !== undefined &&
        !/^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)+(:\d+)?$/.test(value)
      )
        throw new ConfigError('SVC_EDGE_ACCESS_TEAM_DOMAIN', `"${value}" is not a domain name`);
      return value;
    },
  },
  edgeAccessAud: {
    name: 'SVC_EDGE_ACCESS_AUD',
    description: 'Audience tag of the edge access application',
    defaultText: '(none)',
    parse: optional,
  },
  edgeAccessCertsUrl: {
    name: 'SVC_EDGE_ACCESS_CERTS_URL',
    description: 'JWKS URL of the edge access signing keys',
    defaultText: 'https://<team domain>/cdn-cgi/access/certs',
    parse: httpUrl('SVC_EDGE_ACCESS_CERTS_URL'),
  },
  edgeLogpushToken: {
    name: 'SVC_EDGE_LOGPUSH_TOKEN',
    description: 'Shared secret of POST /api/access/edge/logpush',
    secret: true,
    defaultText: '(none: receiver refuses)',
    parse: optional,
  },
  edgeLookbackMs: {
    name: 'SVC_EDGE_LOOKBACK',
    description: 'How far back each analytics sync reads',
    defaultText: '24h',
    parse: durationMs('SVC_EDGE_LOOKBACK', 24 * 3_600_000),
  },
  edgeLookbackMaxMs: {
    name: 'SVC_EDGE_LOOKBACK_MAX',
    description: 'Ceiling of the analytics lookback',
    defaultText: '7d',
    parse: durationMs('SVC_EDGE_LOOKBACK_MAX', 7 * 86_400_000),
  },
  edgeSyncIntervalMs: {
    name: 'SVC_EDGE_SYNC_INTERVAL',
    description: 'Period of the analytics sync; off disables it',
    defaultText: '1h',
    parse: durationMs('SVC_EDGE_SYNC_INTERVAL', 3_600_000, true),
  },
} satisfies { [K in keyof EdgeConfig]: VariableSpec<EdgeConfig[K]> };
