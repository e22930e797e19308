/**
 * The settings of the container runtime of the local driver (ADR 0219): whether apps run in their own
 * images, with which OCI runtime, network and limits, and the managed registry's port; part of
 * {@link VARIABLES} in config.ts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError } from '../domain/errors.js';
import { bool, oneOf, port, wholeNumber, type VariableSpec } from './config-parsers.js';

/** Container settings of {@link SvcConfig}. */
export interface ContainerConfig {
  /**
   * `auto` runs Dockerfile and `build.image` releases as podman containers where podman answers, and
   * says why not otherwise; `podman` requires it (the start fails without it); `native` runs every
   * app as host processes (ADR 0043). @default auto
   */
  readonly containerRuntime: 'auto' | 'podman' | 'native';
  /** OCI runtime podman starts containers with. @default runc */
  readonly containerOciRuntime: string;
  /** `host` (the host's network, as host processes) or `bridge` (ports published on 127.0.0.1 only). @default host */
  readonly containerNetwork: 'host' | 'bridge';
  /**
   * Creates the next container of a group scaled to zero, and the replacement of a container on a
   * fixed host port, ahead of its start, on the host network (ADR 0228). @default true
   */
  readonly containerPrepare: boolean;
  /** `RLIMIT_NOFILE` of every container; capped at the host's hard limit. @default 4096 */
  readonly containerNofile: number;
  /** `RLIMIT_NPROC` of every container; capped at the host's hard limit. @default 1024 */
  readonly containerNproc: number;
  /** Loopback port of the managed image registry; 0 picks a free one at first start and keeps it. @default 0 */
  readonly registryPort: number;
  /**
   * Pushes the host's offline base images into the registry's docker.io mirror at start (ADR 0222);
   * builds on this host read them from the engine's storage either way. @default true
   */
  readonly registryMirror: boolean;
  /**
   * OpenPGP public keys (files) trusted beside the platform's own for images in the managed
   * registry: an operator's key for images built and signed elsewhere (ADR 0223). @default none
   */
  readonly imageTrustedKeys: readonly string[];
}

export const CONTAINER_VARIABLES = {
  containerRuntime: {
    name: 'SVC_CONTAINER_RUNTIME',
    description:
      'Run apps in their own images: auto (where podman answers), podman (required), native (host processes)',
    defaultText: 'auto',
    parse: oneOf('SVC_CONTAINER_RUNTIME', ['auto', 'podman', 'native'] as const, 'auto'),
  },
  containerOciRuntime: {
    name: 'SVC_CONTAINER_OCI_RUNTIME',
    description: 'OCI runtime of app containers (crun refuses hybrid cgroup layouts)',
    defaultText: 'runc',
    parse: (raw) => (raw === undefined || raw === '' ? 'runc' : raw),
  },
  containerNetwork: {
    name: 'SVC_CONTAINER_NETWORK',
    description: 'Network of app containers: host, or bridge (ports published on 127.0.0.1 only)',
    defaultText: 'host',
    parse: oneOf('SVC_CONTAINER_NETWORK', ['host', 'bridge'] as const, 'host'),
  },
  containerPrepare: {
    name: 'SVC_CONTAINER_PREPARE',
    description:
      'Create containers ahead of their start (a wake from zero, a fixed host port) so that only the start waits',
    defaultText: 'true',
    parse: bool('SVC_CONTAINER_PREPARE', true),
  },
  containerNofile: {
    name: 'SVC_CONTAINER_NOFILE',
    description: 'Open-file limit of app containers (at most the host hard limit)',
    defaultText: '4096',
    parse: wholeNumber('SVC_CONTAINER_NOFILE', 4096, 16, 1_048_576),
  },
  containerNproc: {
    name: 'SVC_CONTAINER_NPROC',
    description: 'Process limit of app containers (at most the host hard limit)',
    defaultText: '1024',
    parse: wholeNumber('SVC_CONTAINER_NPROC', 1024, 16, 4_194_304),
  },
  registryPort: {
    name: 'SVC_REGISTRY_PORT',
    description: 'Loopback port of the managed image registry (0: chosen at first start, then kept)',
    defaultText: '0',
    parse: port('SVC_REGISTRY_PORT', 0),
  },
  registryMirror: {
    name: 'SVC_REGISTRY_MIRROR',
    description: "Mirror the host's offline base images into the managed registry at start",
    defaultText: 'true',
    parse: bool('SVC_REGISTRY_MIRROR', true),
  },
  imageTrustedKeys: {
    name: 'SVC_IMAGE_TRUSTED_KEYS',
    description: 'Comma-separated OpenPGP public key files trusted beside the platform key for signed images',
    defaultText: '(none)',
    parse: (raw) =>
      (raw ?? '')
        .split(',')
        .map((file) => file.trim())
        .filter(Boolean)
        .map((file) => {
          if (!fs.existsSync(file))
            throw new ConfigError('SVC_IMAGE_TRUSTED_KEYS', `${file} does not exist (a public key file is expected)`);
          return path.resolve(file);
        }),
  },
} satisfies { [K in keyof ContainerConfig]: VariableSpec<ContainerConfig[K]> };
