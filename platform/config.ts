/**
 * Configuration: the one typed view of the `SVC_*` environment variables.
 *
 * Every variable is declared once in {@link VARIABLES} with its parser, default and whether it is a
 * secret. `loadConfig` validates all of them at start and throws a `ConfigError` naming the first
 * broken variable, so a typo fails fast instead of surfacing as a strange runtime error.
 */
import path from 'node:path';
import { ConfigError } from '../domain/errors.js';
import type { SignaturePolicy } from '../domain/platform/release-policy.js';
import type { ReleasePublicKey } from './platform-lane/release-signature.js';
import { PLATFORM_LANE_VARIABLES } from './config-platform-lane.js';
import { LOGS_VARIABLES } from './config-logs.js';
import { BACKUP_VARIABLES, type BackupConfig } from './config-backup.js';
import { KNOWLEDGE_MAINTENANCE_VARIABLES, type KnowledgeMaintenanceConfig } from './config-knowledge-maintenance.js';
import { KNOWLEDGE_VARIABLES, type KnowledgeConfig } from './config-knowledge.js';
import { TUNNEL_VARIABLES, type TunnelConfig } from './config-tunnel.js';
import { SCALING_VARIABLES, type ScalingConfig } from './config-scaling.js';
import { EXEC_VARIABLES, type ExecConfig } from './config-exec.js';
import { EDGE_VARIABLES, type EdgeConfig } from './config-edge.js';
import { EVENT_VARIABLES, type EventConfig } from './config-events.js';
import { CAPACITY_VARIABLES, type CapacityConfig } from './config-capacity.js';
import { OPERATION_VARIABLES, type OperationConfig } from './config-operations.js';
import { POSTGRES_VARIABLES, type PostgresConfig } from './config-postgres.js';
import { SNAPSHOT_VARIABLES, type SnapshotConfig } from './config-snapshots.js';
import { KNOWLEDGE_WORKER_VARIABLES, type KnowledgeWorkerConfig } from './config-knowledge-workers.js';
import { KNOWLEDGE_ACQUISITION_VARIABLES, type KnowledgeAcquisitionConfig } from './config-knowledge-acquisition.js';
import { SCHEDULER_VARIABLES, type SchedulerConfig } from './config-scheduler.js';
import { CONTAINER_VARIABLES, type ContainerConfig } from './config-containers.js';
import {
  bool,
  dataPath,
  durationMs,
  oneOf,
  optional,
  parseByteSize,
  port,
  type Env,
  type VariableSpec,
} from './config-parsers.js';

export { parseByteSize } from './config-parsers.js';

/** Deployment profile; `production` tightens authentication and admission. */
export const Profile = { development: 'development', production: 'production' } as const;
export type Profile = (typeof Profile)[keyof typeof Profile];

export const LogLevel = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LogLevel)[number];

/** The validated configuration of one platform process. */
export interface SvcConfig
  extends
    KnowledgeConfig,
    TunnelConfig,
    ScalingConfig,
    ExecConfig,
    EdgeConfig,
    EventConfig,
    CapacityConfig,
    OperationConfig,
    BackupConfig,
    KnowledgeMaintenanceConfig,
    PostgresConfig,
    SnapshotConfig,
    KnowledgeWorkerConfig,
    KnowledgeAcquisitionConfig,
    SchedulerConfig,
    ContainerConfig {
  /** Control plane API port. @default 8800 */
  readonly port: number;
  /** Knowledge store REST and GraphQL port. @default 7701 */
  readonly knowledgePort: number;
  /** Knowledge store admin and metrics port. @default 7702 */
  readonly knowledgeAdminPort: number;
  /** Address every listener binds to. @default 127.0.0.1 */
  readonly host: string;
  /** Folder holding `<app>/infraspec.yaml` and `deploy-groups/*.yaml`. @default ./apps */
  readonly appsDir: string;
  /** Folder holding `control.db`, `knowledge.db`, releases and snapshots. @default ./.data */
  readonly dataDir: string;
  /** Static control token for the control plane API; never logged. */
  readonly apiToken: string | undefined;
  /** Require an authenticated principal for metrics and the service manifest. @default false */
  readonly requireExplicitAuth: boolean;
  readonly profile: Profile;
  /** Allowed-signers file (ssh-keygen format); under the production profile, deployed commits must be signed by one of its keys. Unset: signatures are not required. */
  readonly sourceAllowedSigners: string | undefined;
  /** Environment name carried by events and fleet documents. @default development */
  readonly environment: string;
  readonly logLevel: LogLevel;
  /** Largest accepted request body, in bytes. @default 1 MiB */
  readonly bodyLimitBytes: number;
  /** Restricted (authority-only) mode: only the fleet authority routes are served (docs/restricted-mode.md). @default false */
  readonly fleetAuthorityOnly: boolean;
  /** Time after an app's deletion before its system user and files are removed, in ms; 0 never removes them. @default 7 days */
  readonly appRemovalGraceMs: number;
  /** Bytes of captured app log lines kept per app (`SVC_LOGS_MAX_BYTES`). @default 256 MiB */
  readonly logsMaxBytesPerApp: number;
  /** Age past which captured app log lines are dropped (`SVC_LOGS_MAX_AGE`). @default 7 days */
  readonly logsMaxAgeMs: number;
  /** Run the operation worker and operation recovery (candidate APIs disable it). @default true */
  readonly operationWorkerEnabled: boolean;
  /** Folder of platform releases (`releases/<id>/`, the `current` link), the API record and the host agent's lock. @default <dataDir>/platform */
  readonly platformDir: string;
  /** The verify hook of platform releases: a command that must exit 0 for a release to be promoted; unset: none. `SVC_RELEASE_VERIFY_COMMAND` is its deprecated name. */
  readonly releaseVerifyHook: string | undefined;
  /** `require-signed`: only a release the verify hook or a signature verified is promoted; `none`: an unsigned one too. @default require-signed when SVC_PROFILE=production, else none */
  readonly releaseSignaturePolicy: SignaturePolicy;
  /** Public key checking the detached `.sig` of release artifacts (PEM text or a PEM file); shown by fingerprint only. */
  readonly releasePublicKey: ReleasePublicKey | undefined;
  /** Command fetching a release artifact by its tag `platform-<sha>` (the fetch selector); unset: fetching is off. */
  readonly releaseFetchHook: string | undefined;
  /** Release repository passed to the fetch hook (`SVC_RELEASE_REPOSITORY`). */
  readonly releaseRepository: string | undefined;
  /** Platform releases kept on disk after an upgrade ends (the current one and the previous included; older ones are removed). @default 3 */
  readonly releaseKeep: number;
  /** How long the upgrade's drain gate waits in `wait` mode, in ms. @default 10 minutes */
  readonly drainTimeoutMs: number;
  /** How long a candidate or restarted API may take to be healthy on its release, in ms. @default 60 s */
  readonly upgradeBootTimeoutMs: number;
  /** `auto`: `svc serve` starts the host agent when lane work is queued; `off`: never (a service unit runs `svc agent`). @default auto */
  readonly agentMode: 'auto' | 'off';
  /** Repository whose refs `git:<ref>` release sources build. @default the running package's folder */
  readonly platformRepo: string | undefined;
  /** Run by the host agent (with /bin/sh -c) to restart the API instead of stopping and starting the process (service units). */
  readonly agentRestartCommand: string | undefined;
  /**
   * `spawn`: the host agent stops the API and starts `current`'s itself; `stop`: it only stops the API
   * and its supervisor (the installed unit, `Restart=always`) starts `current/svc serve` again. @default spawn
   */
  readonly agentRestartMode: 'spawn' | 'stop';
  /** Deadline of the deploy pipeline's healthy step, in ms. @default 2 minutes */
  readonly deployHealthyTimeoutMs: number;
  /** Limit of the deploy pipeline's test command, in ms. @default 10 minutes */
  readonly deployTestTimeoutMs: number;
  /** `host:port` at which the metrics store scrapes the control plane; unset: `host.docker.internal:<port>` when the API binds loopback. */
  readonly observabilityTarget: string | undefined;
}

/** Every `SVC_*` variable the platform reads, with its meaning and default. */
export const VARIABLES = {
  port: { name: 'SVC_PORT', description: 'Control plane API port', defaultText: '8800', parse: port('SVC_PORT', 8800) },
  knowledgePort: {
    name: 'SVC_KNOWLEDGE_PORT',
    description: 'Knowledge store REST and GraphQL port',
    defaultText: '7701',
    parse: port('SVC_KNOWLEDGE_PORT', 7701),
  },
  knowledgeAdminPort: {
    name: 'SVC_KNOWLEDGE_ADMIN_PORT',
    description: 'Knowledge store admin and metrics port',
    defaultText: '7702',
    parse: port('SVC_KNOWLEDGE_ADMIN_PORT', 7702),
  },
  host: {
    name: 'SVC_HOST',
    description: 'Address the listeners bind to',
    defaultText: '127.0.0.1',
    parse: (raw) => optional(raw) ?? '127.0.0.1',
  },
  appsDir: {
    name: 'SVC_APPS_DIR',
    description: 'Folder of app specs (<app>/infraspec.yaml, deploy-groups/*.yaml)',
    defaultText: './apps',
    parse: (raw) => path.resolve(optional(raw) ?? 'apps'),
  },
  dataDir: {
    name: 'SVC_DATA_DIR',
    description: 'Folder for control.db, knowledge.db, releases and snapshots',
    defaultText: './.data',
    parse: (raw) => path.resolve(optional(raw) ?? '.data'),
  },
  apiToken: {
    name: 'SVC_API_TOKEN',
    description: 'Static control token (Authorization: Bearer)',
    secret: true,
    defaultText: '(none)',
    parse: optional,
  },
  requireExplicitAuth: {
    name: 'SVC_REQUIRE_EXPLICIT_AUTH',
    description: 'Require authentication for /metrics and the service manifest',
    defaultText: 'false',
    parse: bool('SVC_REQUIRE_EXPLICIT_AUTH', false),
  },
  profile: {
    name: 'SVC_PROFILE',
    description: 'development or production',
    defaultText: 'development',
    parse: oneOf('SVC_PROFILE', Object.values(Profile), 'development'),
  },
  sourceAllowedSigners: {
    name: 'SVC_SOURCE_ALLOWED_SIGNERS',
    description:
      'Allowed-signers file (ssh-keygen format): with SVC_PROFILE=production, deploys and preflights admit only commits signed by one of its keys',
    defaultText: '(none: signatures not required)',
    parse: (raw) => {
      const value = optional(raw);
      return value === undefined ? undefined : path.resolve(value);
    },
  },
  environment: {
    name: 'SVC_ENVIRONMENT',
    description: 'Environment name for events and fleet documents',
    defaultText: 'development',
    parse: (raw) => {
      const value = optional(raw) ?? 'development';
      if (!/^[a-z0-9][a-z0-9-]{0,62}$/.test(value))
        throw new ConfigError('SVC_ENVIRONMENT', `"${value}" must be lowercase letters, digits and hyphens`);
      return value;
    },
  },
  logLevel: {
    name: 'SVC_LOG_LEVEL',
    description: 'pino log level',
    defaultText: 'info',
    parse: oneOf('SVC_LOG_LEVEL', LogLevel, 'info'),
  },
  bodyLimitBytes: {
    name: 'SVC_BODY_LIMIT',
    description: 'Largest accepted request body (e.g. 1mb)',
    defaultText: '1mb',
    parse: (raw) => {
      if (raw === undefined || raw === '') return 1024 * 1024;
      const bytes = parseByteSize(raw);
      if (bytes === undefined || bytes <= 0)
        throw new ConfigError('SVC_BODY_LIMIT', `"${raw}" is not a size such as 512kb or 2mb`);
      return bytes;
    },
  },
  ...KNOWLEDGE_VARIABLES,
  ...TUNNEL_VARIABLES,
  ...SCALING_VARIABLES,
  appRemovalGraceMs: {
    name: 'SVC_APP_REMOVAL_GRACE',
    description:
      "Time after an app's deletion before its system user (svc-app-<name>) and its data folder are removed, unless its volumes hold data; off keeps them",
    defaultText: '7d',
    parse: durationMs('SVC_APP_REMOVAL_GRACE', 7 * 86_400_000, true),
  },
  ...EXEC_VARIABLES,
  ...EDGE_VARIABLES,
  ...EVENT_VARIABLES,
  ...CAPACITY_VARIABLES,
  ...OPERATION_VARIABLES,
  platformDir: {
    name: 'SVC_PLATFORM_DIR',
    description: 'Platform releases (releases/<id>, current link), the API record and the host agent lock',
    defaultText: '<SVC_DATA_DIR>/platform',
    parse: (raw, env) => {
      const value = optional(raw);
      return value === undefined ? dataPath(env, 'platform') : path.resolve(value);
    },
  },
  // The platform self-upgrade lane (docs/platform-upgrades.md).
  ...PLATFORM_LANE_VARIABLES,
  // App log capture (docs/adr/0165).
  ...LOGS_VARIABLES,
  // Platform backups (ADR 0173).
  ...BACKUP_VARIABLES,
  // Knowledge store backups and lifecycle (docs/adr/0174, 0175).
  ...KNOWLEDGE_MAINTENANCE_VARIABLES,
  operationWorkerEnabled: {
    name: 'SVC_OPERATION_WORKER',
    description: 'Run the operation worker and recovery (false for candidate APIs)',
    defaultText: 'true',
    parse: bool('SVC_OPERATION_WORKER', true),
  },
  deployHealthyTimeoutMs: {
    name: 'SVC_DEPLOY_HEALTHY_TIMEOUT',
    description: 'Deadline of the deploy healthy step',
    defaultText: '2m',
    parse: durationMs('SVC_DEPLOY_HEALTHY_TIMEOUT', 120_000),
  },
  deployTestTimeoutMs: {
    name: 'SVC_DEPLOY_TEST_TIMEOUT',
    description: 'Limit of the build.test command',
    defaultText: '10m',
    parse: durationMs('SVC_DEPLOY_TEST_TIMEOUT', 600_000),
  },
  observabilityTarget: {
    name: 'SVC_OBSERVABILITY_TARGET',
    description: 'host:port at which the metrics store scrapes the control plane (generated scrape config and bundle)',
    defaultText: 'host.docker.internal:<SVC_PORT> when SVC_HOST is loopback, else <SVC_HOST>:<SVC_PORT>',
    parse: (raw) => {
      const value = optional(raw);
      if (
        value !== undefined &&
        !/^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?):([1-9]\d{0,4})$/.test(value)
      )
        throw new ConfigError('SVC_OBSERVABILITY_TARGET', `"${value}" is not host:port (e.g. 127.0.0.1:8800)`);
      if (value !== undefined && Number(value.slice(value.lastIndexOf(':') + 1)) > 65535)
        throw new ConfigError('SVC_OBSERVABILITY_TARGET', `"${value}" has a port outside 1-65535`);
      return value;
    },
  },
  ...POSTGRES_VARIABLES,
  fleetAuthorityOnly: {
    name: 'SVC_FLEET_AUTHORITY_ONLY',
    description: 'Restricted (authority-only) mode: serve only the fleet authority routes (docs/restricted-mode.md)',
    defaultText: 'false',
    parse: bool('SVC_FLEET_AUTHORITY_ONLY', false),
  },
  ...SNAPSHOT_VARIABLES,
  ...KNOWLEDGE_WORKER_VARIABLES,
  ...KNOWLEDGE_ACQUISITION_VARIABLES,
  ...SCHEDULER_VARIABLES,
  ...CONTAINER_VARIABLES,
} satisfies { [K in keyof SvcConfig]: VariableSpec<SvcConfig[K]> };

/**
 * Reads and validates the configuration from `env`.
 * @throws ConfigError naming the variable when a value is malformed or the profile's rules are broken.
 */
export function loadConfig(env: Env = process.env): SvcConfig {
  // Fleet and bridge settings only mean something in restricted mode: outside it they would be
  // ignored silently, and an operator would believe the bridge is on.
  const fleet = Object.keys(env)
    .filter(
      (name) =>
        (name.startsWith('SVC_EXTERNAL_FLEET_') ||
          (name.startsWith('SVC_FLEET_') && name !== 'SVC_FLEET_AUTHORITY_ONLY')) &&
        env[name] !== undefined &&
        env[name] !== '',
    )
    .sort();
  if (fleet.length > 0 && !bool('SVC_FLEET_AUTHORITY_ONLY', false)(env.SVC_FLEET_AUTHORITY_ONLY)) {
    throw new ConfigError(
      fleet[0]!,
      `fleet authority and external admission settings are read only in restricted mode (SVC_FLEET_AUTHORITY_ONLY=true), so they are refused rather than ignored; set SVC_FLEET_AUTHORITY_ONLY=true or unset ${fleet.join(', ')}`,
    );
  }
  const entries = Object.entries(VARIABLES).map(([key, spec]) => [
    key,
    (spec as VariableSpec<unknown>).parse(env[spec.name], env),
  ]);
  const config = Object.fromEntries(entries) as unknown as SvcConfig;
  if (config.profile === 'production') {
    if (!config.requireExplicitAuth) {
      throw new ConfigError('SVC_REQUIRE_EXPLICIT_AUTH', 'must be true when SVC_PROFILE=production');
    }
    if (config.apiToken === undefined) {
      throw new ConfigError('SVC_API_TOKEN', 'must be set when SVC_PROFILE=production');
    }
  }
  if (
    config.releaseSignaturePolicy === 'require-signed' &&
    config.releaseVerifyHook === undefined &&
    config.releasePublicKey === undefined
  ) {
    throw new ConfigError(
      'SVC_RELEASE_SIGNATURE_POLICY',
      `require-signed${config.profile === 'production' && optional(env.SVC_RELEASE_SIGNATURE_POLICY) === undefined ? ' (the default when SVC_PROFILE=production)' : ''} needs a way to verify platform releases: set SVC_RELEASE_VERIFY_HOOK or SVC_RELEASE_PUBLIC_KEY (or both), or SVC_RELEASE_SIGNATURE_POLICY=none`,
    );
  }
  if ((config.edgeAccessTeamDomain === undefined) !== (config.edgeAccessAud === undefined)) {
    throw new ConfigError(
      config.edgeAccessTeamDomain === undefined ? 'SVC_EDGE_ACCESS_TEAM_DOMAIN' : 'SVC_EDGE_ACCESS_AUD',
      'SVC_EDGE_ACCESS_TEAM_DOMAIN and SVC_EDGE_ACCESS_AUD are set together or not at all',
    );
  }
  if (config.requireExplicitAuth && config.apiToken === undefined && config.edgeAccessTeamDomain === undefined) {
    throw new ConfigError(
      'SVC_API_TOKEN',
      'must be set when SVC_REQUIRE_EXPLICIT_AUTH=true (or configure edge access), or no request could authenticate',
    );
  }
  return Object.freeze(config);
}

/** The configuration with secrets replaced by `<set>` or `<unset>`, safe to log or print. */
export function redactConfig(config: SvcConfig): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(VARIABLES) as [keyof SvcConfig, VariableSpec<unknown>][]) {
    const value = config[key] as unknown;
    // A loaded key (SVC_RELEASE_PUBLIC_KEY) is shown by its fingerprint: public, but not worth a PEM in every log.
    const shown = typeof value === 'object' && value !== null && 'fingerprint' in value ? value.fingerprint : value;
    out[key] = spec.secret ? (value === undefined ? '<unset>' : '<set>') : shown;
  }
  return out;
}
