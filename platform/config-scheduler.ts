/**
 * The settings of the scheduler driver apps run on (docs/kubernetes.md), part of {@link VARIABLES} in
 * config.ts.
 */
import path from 'node:path';
import { ConfigError } from '../domain/errors.js';
import { oneOf, optional, type VariableSpec } from './config-parsers.js';

/** Scheduler settings of {@link SvcConfig}. */
export interface SchedulerConfig {
  /** Scheduler driver apps run on: `local` (this host), `kubernetes` (docs/kubernetes.md) or `swarm` (docs/swarm.md). @default local */
  readonly schedulerDriver: 'local' | 'kubernetes' | 'swarm';
  /** Engine API address of the swarm driver's manager (`unix:///…` or `tcp://…`); unset: Docker's `DOCKER_HOST`. */
  readonly swarmHost: string | undefined;
  /** Address the swarm's nodes pull the managed registry's images from; unset: as released (loopback). */
  readonly swarmRegistry: string | undefined;
  /** Kubeconfig file of the kubernetes driver; unset: `$KUBECONFIG`, `~/.kube/config`, else in-cluster. */
  readonly kubeconfig: string | undefined;
  /** Namespace the kubernetes driver writes to. @default svc-apps */
  readonly kubernetesNamespace: string;
}

export const SCHEDULER_VARIABLES = {
  schedulerDriver: {
    name: 'SVC_SCHEDULER_DRIVER',
    description: 'Scheduler driver: local (this host), kubernetes or swarm',
    defaultText: 'local',
    parse: oneOf('SVC_SCHEDULER_DRIVER', ['local', 'kubernetes', 'swarm'] as const, 'local'),
  },
  swarmHost: {
    name: 'SVC_SWARM_HOST',
    description:
      "Engine API address of the swarm driver's manager: unix:///path or tcp://host:port (TLS from DOCKER_TLS_VERIFY and DOCKER_CERT_PATH)",
    defaultText: '(DOCKER_HOST, else /var/run/docker.sock)',
    parse: (raw) => {
      const value = optional(raw);
      if (value !== undefined && !/^(unix|tcp):\/\/./.test(value))
        throw new ConfigError(
          'SVC_SWARM_HOST',
          `"${value}" is not an engine address: use unix:///path or tcp://host:port`,
        );
      return value;
    },
  },
  swarmRegistry: {
    name: 'SVC_SWARM_REGISTRY',
    description:
      "Address (host:port) the swarm's nodes pull the managed registry's images from, e.g. a TLS proxy in front of it; the registry itself listens on the manager's loopback",
    defaultText: '(the managed registry on 127.0.0.1: only the manager node can pull)',
    parse: (raw) => {
      const value = optional(raw);
      if (value !== undefined && !/^[a-zA-Z0-9.-]+(:\d{1,5})?$/.test(value))
        throw new ConfigError('SVC_SWARM_REGISTRY', `"${value}" is not a registry address: use host or host:port`);
      return value;
    },
  },
  kubeconfig: {
    name: 'SVC_KUBECONFIG',
    description: 'Kubeconfig file of the kubernetes driver (a region uses the context of its name when there is one)',
    defaultText: '(KUBECONFIG, ~/.kube/config, else in-cluster)',
    parse: (raw) => {
      const value = optional(raw);
      return value === undefined ? undefined : path.resolve(value);
    },
  },
  kubernetesNamespace: {
    name: 'SVC_KUBERNETES_NAMESPACE',
    description: 'Namespace the kubernetes driver writes to',
    defaultText: 'svc-apps',
    parse: (raw) => {
      const value = optional(raw) ?? 'svc-apps';
      if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(value))
        throw new ConfigError(
          'SVC_KUBERNETES_NAMESPACE',
          `"${value}" is not a namespace name (lower-case letters, digits and "-", at most 63)`,
        );
      return value;
    },
  },
} satisfies { [K in keyof SchedulerConfig]: VariableSpec<SchedulerConfig[K]> };
