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
import {
  bool,
  durationMs,
  wholeNumber,
  httpUrl,
  oneOf,
  optional,
  parseByteSize,
  port,
  requestTimeoutMs,
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
export interface SvcConfig extends BackupConfig, KnowledgeMaintenanceConfig {
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
  /** Knowledge store tokens, `tenant:permissions:secret` separated by commas; never logged. */
  readonly knowledgeTokens: string | undefined;
  /**
   * The platform runs its own PostgreSQL server for app databases (in `<dataDir>/postgres`, ADR 0011):
   * true unless `SVC_POSTGRES_HOST` selects an external server or `SVC_POSTGRES_MANAGED=false`.
   */
  readonly postgresManaged: boolean;
  /** External PostgreSQL server for app databases (snapshots, migrations), when not managed. @default 127.0.0.1:5432, user postgres */
  readonly postgresHost: string;
  readonly postgresPort: number;
  readonly postgresUser: string;
  /** File holding the PostgreSQL password; never logged. */
  readonly postgresPasswordFile: string | undefined;
  /** Folder of pg_dump, pg_restore and psql. @default the newest /usr/lib/postgresql/<v>/bin */
  readonly postgresBinDir: string | undefined;
  /** libpq `sslmode` of the external server (restricted mode requires `verify-full`). @default libpq's own (prefer) */
  readonly postgresSslMode: 'disable' | 'prefer' | 'require' | 'verify-ca' | 'verify-full' | undefined;
  /** CA certificate file that verifies the external server's certificate (`sslrootcert`). */
  readonly postgresSslRootCert: string | undefined;
  /** Restricted (authority-only) mode: only the fleet authority routes are served (docs/restricted-mode.md). @default false */
  readonly fleetAuthorityOnly: boolean;
  /** Local snapshot folder. @default <working dir>/snapshots */
  readonly snapshotsDir: string;
  /** S3-compatible endpoint for snapshot export and import. */
  readonly s3Endpoint: string | undefined;
  readonly s3AccessKey: string | undefined;
  /** Never logged. */
  readonly s3SecretKey: string | undefined;
  readonly s3Region: string;
  /** Path-style addressing (needed by most self-hosted stores). @default true */
  readonly s3ForcePathStyle: boolean;
  /** Port of the S3 proxy on loopback (ADR 0188); undefined: no proxy. */
  readonly s3ProxyPort: number | undefined;
  /** File of knowledge store tokens, one `tenant:permissions:secret` per line (`#` comments). */
  readonly knowledgeTokensFile: string | undefined;
  /** Base URL of an OpenAI-compatible embeddings endpoint; unset means no embedder. */
  readonly knowledgeEmbedderUrl: string | undefined;
  /** Embedding model name sent to the embedder. @default text-embedding-3-small */
  readonly knowledgeEmbedderModel: string;
  /** Requested embedding dimensions (sent as `dimensions`); unset lets the model decide. */
  readonly knowledgeEmbedderDimensions: number | undefined;
  /** API key for the embedder (`Authorization: Bearer`); never logged. */
  readonly knowledgeEmbedderApiKey: string | undefined;
  /** Per-request embedder timeout in milliseconds. @default 10000 */
  readonly knowledgeEmbedderTimeoutMs: number;
  /** Most texts per embedder request. @default 64 */
  readonly knowledgeEmbedderBatchSize: number;
  /** Base URL of an optional reranker (`POST {url}/rerank`); unset: fused scores stand. */
  readonly knowledgeRerankerUrl: string | undefined;
  /** Rerank model name. @default rerank-v1 */
  readonly knowledgeRerankerModel: string;
  /** API key for the reranker (`Authorization: Bearer`); never logged. */
  readonly knowledgeRerankerApiKey: string | undefined;
  /** Per-request reranker timeout in milliseconds. @default 5000 */
  readonly knowledgeRerankerTimeoutMs: number;
  /** Deduplicate writes by content fingerprint unless a write says skip_dedup. @default false */
  readonly knowledgeDedupDefault: boolean;
  /** Thesaurus of lexical query expansion: `wordnet` (WordNet 3.1, bundled) or `off`. @default wordnet */
  readonly knowledgeThesaurus: 'wordnet' | 'off';
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
  /** Idle period after which a gateway-managed process is scaled to zero, in ms; 0 disables. @default 15 minutes */
  readonly wakeIdleTimeoutMs: number;
  /** Period between autoscaler evaluations, in ms; 0 disables autoscaling. @default 15 s */
  readonly autoscaleIntervalMs: number;
  /** Stabilization window of the autoscaler (lower recommendations this long before a scale-in), in ms. @default 5 minutes */
  readonly autoscaleWindowMs: number;
  /** Time after an app's deletion before its system user and files are removed, in ms; 0 never removes them. @default 7 days */
  readonly appRemovalGraceMs: number;
  /** Open exec sessions (and one-shot commands) per app. @default 4 */
  readonly execMaxSessionsPerApp: number;
  /** Open exec sessions on the platform. @default 16 */
  readonly execMaxSessions: number;
  /** An exec session without input or output this long is closed, in ms. @default 15 minutes */
  readonly execIdleTimeoutMs: number;
  /** An exec session is closed this long after it started, in ms. @default 4 hours */
  readonly execMaxDurationMs: number;
  /** Edge analytics API token (Bearer); never logged. */
  readonly edgeApiToken: string | undefined;
  /** Edge zone id for the analytics sync. */
  readonly edgeZoneId: string | undefined;
  /** Edge API base URL; the analytics sync posts to `<url>/graphql`. @default https://api.cloudflare.com/client/v4 */
  readonly edgeApiUrl: string;
  /** Shared secret of the edge log push receiver; never logged. Unset: the receiver refuses every batch. */
  readonly edgeLogpushToken: string | undefined;
  /** Edge access team domain (issuer `https://<domain>`); with `edgeAccessAud`, validated edge identities are administrators. */
  readonly edgeAccessTeamDomain: string | undefined;
  /** Audience tag edge access assertions must carry. */
  readonly edgeAccessAud: string | undefined;
  /** Where the edge access signing keys (JWKS) are read. @default https://<team domain>/cdn-cgi/access/certs */
  readonly edgeAccessCertsUrl: string | undefined;
  /** How far back each analytics sync reads, in ms. @default 24 hours */
  readonly edgeLookbackMs: number;
  /** Ceiling of the analytics lookback, in ms. @default 7 days */
  readonly edgeLookbackMaxMs: number;
  /** Period of the analytics sync, in ms; 0 disables the periodic sync. @default 1 hour */
  readonly edgeSyncIntervalMs: number;
  /** Signed event sink URL; unset: no sink. */
  readonly eventSinkUrl: string | undefined;
  /** Key id sent as X-Sink-Key-Id. */
  readonly eventSinkKeyId: string | undefined;
  /** HMAC-SHA-256 key of the sink signature; never logged. */
  readonly eventSinkSecret: string | undefined;
  /** Environment carried by events. @default SVC_ENVIRONMENT */
  readonly eventEnvironment: string | undefined;
  /** Source name of the platform's own events (X-Event-Source). @default svc-control-plane */
  readonly eventSource: string;
  /** Host id of capacity events; unset: the first short hostname, persisted. */
  readonly hostId: string | undefined;
  /** Allow notification targets on loopback, private and link-local addresses. @default false */
  readonly notifyAllowPrivate: boolean;
  /** Allocation watcher scan period, in ms. @default 60 s */
  readonly allocationWatchIntervalMs: number;
  /** Host capacity check period, in ms; 0 disables. @default 60 s */
  readonly capacityCheckIntervalMs: number;
  /** Minimum free host memory, in bytes. @default 64 MiB */
  readonly capacityMinMemoryBytes: number;
  /** Minimum free disk of the data folder, in bytes. @default 512 MiB */
  readonly capacityMinDiskBytes: number;
  /** Shared secret of the push webhooks (X-Hub-Signature-256); never logged. Unset: webhooks are refused. */
  readonly webhookSecret: string | undefined;
  /** Behaviour while operations are active and the platform drains: fail, wait or force. @default fail */
  readonly drainMode: 'fail' | 'wait' | 'force';
  /** Operations run at once by the worker (never two of one app). @default 2 */
  readonly operationWorkers: number;
  /** Lease of a claimed operation, renewed by heartbeat, in ms. @default 30 s */
  readonly operationLeaseMs: number;
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
  /** Evaluator webhook of the knowledge review worker (`evaluator: webhook`); unset: only the rules evaluator. */
  readonly knowledgeReviewWebhookUrl: string | undefined;
  /** HMAC-SHA-256 key signing review worker evaluator requests; never logged. */
  readonly knowledgeReviewWebhookSecret: string | undefined;
  /** Allow knowledge webhook targets (handoffs, evaluator) on loopback, private and link-local addresses. @default false */
  readonly knowledgeAllowPrivateTargets: boolean;
  /** Base URL of an OpenAI-compatible chat endpoint for `POST /ingest` ({url}/chat/completions); unset: ingest answers 503. */
  readonly knowledgeExtractorUrl: string | undefined;
  /** Model sent to the extractor. @default gpt-4o-mini */
  readonly knowledgeExtractorModel: string;
  /** API key for the extractor (`Authorization: Bearer`); never logged. */
  readonly knowledgeExtractorApiKey: string | undefined;
  /** Per-request extractor timeout in milliseconds. @default 30000 */
  readonly knowledgeExtractorTimeoutMs: number;
  /** Scheduler driver apps run on: `local` (host processes) or `kubernetes` (docs/kubernetes.md). @default local */
  readonly schedulerDriver: 'local' | 'kubernetes';
  /** Kubeconfig file of the kubernetes driver; unset: `$KUBECONFIG`, `~/.kube/config`, else in-cluster. */
  readonly kubeconfig: string | undefined;
  /** Namespace the kubernetes driver writes to. @default svc-apps */
  readonly kubernetesNamespace: string;
}

function dataPath(env: Env, ...parts: string[]): string {
  return path.resolve(optional(env.SVC_DATA_DIR) ?? '.data', ...parts);
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
  knowledgeTokens: {
    name: 'SVC_KNOWLEDGE_TOKENS',
    description: 'Knowledge store tokens tenant:permissions:secret, comma separated',
    secret: true,
    defaultText: '(none: open)',
    parse: optional,
  },
  knowledgeTokensFile: {
    name: 'SVC_KNOWLEDGE_TOKENS_FILE',
    description: 'File of knowledge store tokens, one tenant:permissions:secret per line',
    defaultText: '(none)',
    parse: (raw) => {
      const value = optional(raw);
      return value === undefined ? undefined : path.resolve(value);
    },
  },
  knowledgeEmbedderUrl: {
    name: 'SVC_KNOWLEDGE_EMBEDDER_URL',
    description: 'OpenAI-compatible embeddings base URL ({url}/embeddings); unset: no embedder',
    defaultText: '(none)',
    parse: httpUrl('SVC_KNOWLEDGE_EMBEDDER_URL'),
  },
  knowledgeEmbedderModel: {
    name: 'SVC_KNOWLEDGE_EMBEDDER_MODEL',
    description: 'Embedding model name',
    defaultText: 'text-embedding-3-small',
    parse: (raw) => optional(raw) ?? 'text-embedding-3-small',
  },
  knowledgeEmbedderDimensions: {
    name: 'SVC_KNOWLEDGE_EMBEDDER_DIMENSIONS',
    description: 'Requested embedding dimensions',
    defaultText: '(model default)',
    parse: (raw) => {
      const value = optional(raw);
      if (value === undefined) return undefined;
      if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 4096)
        throw new ConfigError('SVC_KNOWLEDGE_EMBEDDER_DIMENSIONS', `"${value}" is not a whole number in 1-4096`);
      return Number(value);
    },
  },
  knowledgeEmbedderApiKey: {
    name: 'SVC_KNOWLEDGE_EMBEDDER_API_KEY',
    description: 'Embedder API key',
    secret: true,
    defaultText: '(none)',
    parse: optional,
  },
  knowledgeEmbedderTimeoutMs: {
    name: 'SVC_KNOWLEDGE_EMBEDDER_TIMEOUT',
    description: 'Embedder request timeout (e.g. 10s, 500ms)',
    defaultText: '10s',
    parse: requestTimeoutMs('SVC_KNOWLEDGE_EMBEDDER_TIMEOUT', '10s'),
  },
  knowledgeEmbedderBatchSize: {
    name: 'SVC_KNOWLEDGE_EMBEDDER_BATCH_SIZE',
    description: 'Most texts per embedder request',
    defaultText: '64',
    parse: (raw) => {
      const value = optional(raw) ?? '64';
      if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 2048)
        throw new ConfigError('SVC_KNOWLEDGE_EMBEDDER_BATCH_SIZE', `"${value}" is not a whole number in 1-2048`);
      return Number(value);
    },
  },
  knowledgeRerankerUrl: {
    name: 'SVC_KNOWLEDGE_RERANKER_URL',
    description: 'Reranker base URL (POST {url}/rerank, the Cohere/Jina/vLLM protocol); unset: no reranking',
    defaultText: '(none)',
    parse: httpUrl('SVC_KNOWLEDGE_RERANKER_URL'),
  },
  knowledgeRerankerModel: {
    name: 'SVC_KNOWLEDGE_RERANKER_MODEL',
    description: 'Rerank model name',
    defaultText: 'rerank-v1',
    parse: (raw) => optional(raw) ?? 'rerank-v1',
  },
  knowledgeRerankerApiKey: {
    name: 'SVC_KNOWLEDGE_RERANKER_API_KEY',
    description: 'Reranker API key',
    secret: true,
    defaultText: '(none)',
    parse: optional,
  },
  knowledgeRerankerTimeoutMs: {
    name: 'SVC_KNOWLEDGE_RERANKER_TIMEOUT',
    description: 'Reranker request timeout (e.g. 5s, 800ms); a slower answer leaves the fused order',
    defaultText: '5s',
    parse: requestTimeoutMs('SVC_KNOWLEDGE_RERANKER_TIMEOUT', '5s'),
  },
  knowledgeThesaurus: {
    name: 'SVC_KNOWLEDGE_THESAURUS',
    description: 'Thesaurus that expands text queries with related words: wordnet or off',
    defaultText: 'wordnet',
    parse: (raw) => {
      const value = optional(raw) ?? 'wordnet';
      if (value !== 'wordnet' && value !== 'off')
        throw new ConfigError('SVC_KNOWLEDGE_THESAURUS', `"${value}" is not wordnet or off`);
      return value;
    },
  },
  knowledgeDedupDefault: {
    name: 'SVC_KNOWLEDGE_DEDUP_DEFAULT',
    description: 'Deduplicate knowledge writes by content fingerprint unless skip_dedup',
    defaultText: 'false',
    parse: bool('SVC_KNOWLEDGE_DEDUP_DEFAULT', false),
  },
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
  wakeIdleTimeoutMs: {
    name: 'SVC_WAKE_IDLE_TIMEOUT',
    description: 'Idle period before a gateway-managed process (scaling.min 0) is scaled to zero; off disables',
    defaultText: '15m',
    parse: durationMs('SVC_WAKE_IDLE_TIMEOUT', 15 * 60_000, true),
  },
  autoscaleIntervalMs: {
    name: 'SVC_AUTOSCALE_INTERVAL',
    description: 'Period between autoscaler evaluations of processes with scaling.auto; off disables autoscaling',
    defaultText: '15s',
    parse: durationMs('SVC_AUTOSCALE_INTERVAL', 15_000, true),
  },
  autoscaleWindowMs: {
    name: 'SVC_AUTOSCALE_WINDOW',
    description:
      'Stabilization window: every recommendation must stay below the count this long before the autoscaler scales in (or to zero)',
    defaultText: '5m',
    parse: durationMs('SVC_AUTOSCALE_WINDOW', 5 * 60_000, false),
  },
  appRemovalGraceMs: {
    name: 'SVC_APP_REMOVAL_GRACE',
    description:
      "Time after an app's deletion before its system user (svc-app-<name>) and its data folder are removed, unless its volumes hold data; off keeps them",
    defaultText: '7d',
    parse: durationMs('SVC_APP_REMOVAL_GRACE', 7 * 86_400_000, true),
  },
  execMaxSessionsPerApp: {
    name: 'SVC_EXEC_MAX_SESSIONS_PER_APP',
    description: 'Open exec sessions and one-shot exec commands per app; one more answers 429',
    defaultText: '4',
    parse: wholeNumber('SVC_EXEC_MAX_SESSIONS_PER_APP', 4, 1, 1000),
  },
  execMaxSessions: {
    name: 'SVC_EXEC_MAX_SESSIONS',
    description: 'Open exec sessions and one-shot exec commands on the platform; one more answers 429',
    defaultText: '16',
    parse: wholeNumber('SVC_EXEC_MAX_SESSIONS', 16, 1, 10000),
  },
  execIdleTimeoutMs: {
    name: 'SVC_EXEC_IDLE_TIMEOUT',
    description: 'An exec session with no input or output this long is closed',
    defaultText: '15m',
    parse: durationMs('SVC_EXEC_IDLE_TIMEOUT', 15 * 60_000),
  },
  execMaxDurationMs: {
    name: 'SVC_EXEC_MAX_DURATION',
    description: 'An exec session is closed this long after it started, active or not',
    defaultText: '4h',
    parse: durationMs('SVC_EXEC_MAX_DURATION', 4 * 3_600_000),
  },
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
  eventSinkUrl: {
    name: 'SVC_EVENT_SINK_URL',
    description: 'Signed event sink URL (events are POSTed as JSON)',
    defaultText: '(none)',
    parse: httpUrl('SVC_EVENT_SINK_URL'),
  },
  eventSinkKeyId: {
    name: 'SVC_EVENT_SINK_KEY_ID',
    description: 'Key id sent as X-Sink-Key-Id',
    defaultText: '(none)',
    parse: optional,
  },
  eventSinkSecret: {
    name: 'SVC_EVENT_SINK_SECRET',
    description: 'HMAC-SHA-256 key of X-Sink-Signature',
    secret: true,
    defaultText: '(none)',
    parse: optional,
  },
  eventEnvironment: {
    name: 'SVC_EVENT_ENVIRONMENT',
    description: 'Environment carried by events (default SVC_ENVIRONMENT)',
    defaultText: '(SVC_ENVIRONMENT)',
    parse: optional,
  },
  eventSource: {
    name: 'SVC_EVENT_SOURCE',
    description: "Source name of the platform's own events (X-Event-Source)",
    defaultText: 'svc-control-plane',
    parse: (raw) => optional(raw) ?? 'svc-control-plane',
  },
  hostId: {
    name: 'SVC_HOST_ID',
    description: 'Host id of capacity events (default: first short hostname, persisted)',
    defaultText: '(hostname)',
    parse: (raw) => {
      const value = optional(raw);
      if (value !== undefined && !/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/.test(value))
        throw new ConfigError(
          'SVC_HOST_ID',
          `"${value}" must be letters, digits, dots, hyphens and underscores (no colons)`,
        );
      return value;
    },
  },
  notifyAllowPrivate: {
    name: 'SVC_NOTIFY_ALLOW_PRIVATE',
    description: 'Allow notification targets on loopback, private and link-local addresses',
    defaultText: 'false',
    parse: bool('SVC_NOTIFY_ALLOW_PRIVATE', false),
  },
  allocationWatchIntervalMs: {
    name: 'SVC_ALLOCATION_WATCH_INTERVAL',
    description: 'Allocation watcher scan period',
    defaultText: '60s',
    parse: durationMs('SVC_ALLOCATION_WATCH_INTERVAL', 60_000),
  },
  capacityCheckIntervalMs: {
    name: 'SVC_CAPACITY_CHECK_INTERVAL',
    description: 'Host capacity check period; off disables it',
    defaultText: '60s',
    parse: durationMs('SVC_CAPACITY_CHECK_INTERVAL', 60_000, true),
  },
  capacityMinMemoryBytes: {
    name: 'SVC_CAPACITY_MIN_MEMORY',
    description: 'Minimum free host memory (e.g. 64mb)',
    defaultText: '64mb',
    parse: (raw) => {
      const bytes = parseByteSize(optional(raw) ?? '64mb');
      if (bytes === undefined)
        throw new ConfigError('SVC_CAPACITY_MIN_MEMORY', `"${raw}" is not a size such as 64mb or 1gb`);
      return bytes;
    },
  },
  capacityMinDiskBytes: {
    name: 'SVC_CAPACITY_MIN_DISK',
    description: 'Minimum free disk of the data folder (e.g. 512mb)',
    defaultText: '512mb',
    parse: (raw) => {
      const bytes = parseByteSize(optional(raw) ?? '512mb');
      if (bytes === undefined)
        throw new ConfigError('SVC_CAPACITY_MIN_DISK', `"${raw}" is not a size such as 512mb or 2gb`);
      return bytes;
    },
  },
  webhookSecret: {
    name: 'SVC_WEBHOOK_SECRET',
    description: 'Shared secret of the push webhooks (HMAC-SHA-256, X-Hub-Signature-256); unset refuses webhooks',
    secret: true,
    defaultText: '(none: webhooks refused)',
    parse: optional,
  },
  drainMode: {
    name: 'SVC_DRAIN_MODE',
    description:
      'While operations are active and the platform drains: fail (refuse), wait (for completion) or force (skip the gate)',
    defaultText: 'fail',
    parse: oneOf('SVC_DRAIN_MODE', ['fail', 'wait', 'force'] as const, 'fail'),
  },
  operationWorkers: {
    name: 'SVC_OPERATION_WORKERS',
    description: 'Operations run at once (never two of one app)',
    defaultText: '2',
    parse: (raw) => {
      const value = optional(raw) ?? '2';
      if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 64)
        throw new ConfigError('SVC_OPERATION_WORKERS', `"${value}" is not a whole number in 1-64`);
      return Number(value);
    },
  },
  operationLeaseMs: {
    name: 'SVC_OPERATION_LEASE',
    description: 'Lease of a claimed operation, renewed by heartbeat; an expired lease is recovered',
    defaultText: '30s',
    parse: durationMs('SVC_OPERATION_LEASE', 30_000),
  },
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
  postgresManaged: {
    name: 'SVC_POSTGRES_MANAGED',
    description: 'Run a managed PostgreSQL server for app databases when SVC_POSTGRES_HOST is unset',
    defaultText: 'true (when SVC_POSTGRES_HOST is unset)',
    parse: (raw, env) => bool('SVC_POSTGRES_MANAGED', true)(raw) && optional(env.SVC_POSTGRES_HOST) === undefined,
  },
  postgresHost: {
    name: 'SVC_POSTGRES_HOST',
    description: 'PostgreSQL server of app databases',
    defaultText: '127.0.0.1',
    parse: (raw) => optional(raw) ?? '127.0.0.1',
  },
  postgresPort: {
    name: 'SVC_POSTGRES_PORT',
    description: 'PostgreSQL port',
    defaultText: '5432',
    parse: port('SVC_POSTGRES_PORT', 5432),
  },
  postgresUser: {
    name: 'SVC_POSTGRES_USER',
    description: 'PostgreSQL user for snapshots and migrations',
    defaultText: 'postgres',
    parse: (raw) => optional(raw) ?? 'postgres',
  },
  postgresPasswordFile: {
    name: 'SVC_POSTGRES_PASSWORD_FILE',
    description: 'file holding the PostgreSQL password',
    defaultText: '(none)',
    parse: optional,
  },
  postgresBinDir: {
    name: 'SVC_POSTGRES_BIN_DIR',
    description: 'folder of pg_dump, pg_restore, psql',
    defaultText: '(newest installed)',
    parse: optional,
  },
  postgresSslMode: {
    name: 'SVC_POSTGRES_SSLMODE',
    description: 'libpq sslmode of the external PostgreSQL server (verify-full verifies its certificate and host name)',
    defaultText: '(libpq default)',
    parse: (raw) => {
      const value = optional(raw);
      return value === undefined
        ? undefined
        : oneOf(
            'SVC_POSTGRES_SSLMODE',
            ['disable', 'prefer', 'require', 'verify-ca', 'verify-full'] as const,
            'prefer',
          )(value);
    },
  },
  postgresSslRootCert: {
    name: 'SVC_POSTGRES_SSL_ROOT_CERT',
    description: 'CA certificate file verifying the external PostgreSQL server',
    defaultText: '(none)',
    parse: (raw) => {
      const value = optional(raw);
      return value === undefined ? undefined : path.resolve(value);
    },
  },
  fleetAuthorityOnly: {
    name: 'SVC_FLEET_AUTHORITY_ONLY',
    description: 'Restricted (authority-only) mode: serve only the fleet authority routes (docs/restricted-mode.md)',
    defaultText: 'false',
    parse: bool('SVC_FLEET_AUTHORITY_ONLY', false),
  },
  snapshotsDir: {
    name: 'SVC_SNAPSHOTS_DIR',
    description: 'local snapshot folder',
    defaultText: './snapshots',
    parse: (raw) => path.resolve(optional(raw) ?? 'snapshots'),
  },
  s3Endpoint: {
    name: 'SVC_S3_ENDPOINT',
    description: 'S3-compatible endpoint for snapshot export and import',
    defaultText: '(none)',
    parse: optional,
  },
  s3AccessKey: { name: 'SVC_S3_ACCESS_KEY', description: 'S3 access key', defaultText: '(none)', parse: optional },
  s3SecretKey: {
    name: 'SVC_S3_SECRET_KEY',
    description: 'S3 secret key',
    secret: true,
    defaultText: '(none)',
    parse: optional,
  },
  s3Region: {
    name: 'SVC_S3_REGION',
    description: 'S3 region',
    defaultText: 'us-east-1',
    parse: (raw) => optional(raw) ?? 'us-east-1',
  },
  s3ProxyPort: {
    name: 'SVC_S3_PROXY_PORT',
    description:
      "Loopback port of the S3 proxy that enforces apps' bucket access (ADR 0188); needs SVC_S3_*; 0 picks a free port. Unset: no proxy, and apps get no S3 credentials",
    defaultText: '(off)',
    parse: (raw) => {
      const value = optional(raw);
      if (value === undefined) return undefined;
      if (!/^\d+$/.test(value) || Number(value) > 65535)
        throw new ConfigError('SVC_S3_PROXY_PORT', `"${value}" is not a port number (0-65535)`);
      return Number(value);
    },
  },
  s3ForcePathStyle: {
    name: 'SVC_S3_FORCE_PATH_STYLE',
    description: 'path-style S3 addressing',
    defaultText: 'true',
    parse: bool('SVC_S3_FORCE_PATH_STYLE', true),
  },
  knowledgeReviewWebhookUrl: {
    name: 'SVC_KNOWLEDGE_REVIEW_WEBHOOK_URL',
    description: 'Evaluator webhook of the knowledge review worker (evaluator: webhook)',
    defaultText: '(none: rules only)',
    parse: httpUrl('SVC_KNOWLEDGE_REVIEW_WEBHOOK_URL'),
  },
  knowledgeReviewWebhookSecret: {
    name: 'SVC_KNOWLEDGE_REVIEW_WEBHOOK_SECRET',
    description: 'HMAC-SHA-256 key of review worker evaluator requests (x-svc-signature-256)',
    secret: true,
    defaultText: '(none)',
    parse: optional,
  },
  knowledgeAllowPrivateTargets: {
    name: 'SVC_KNOWLEDGE_ALLOW_PRIVATE_TARGETS',
    description: 'Allow knowledge webhook targets on loopback, private and link-local addresses',
    defaultText: 'false',
    parse: bool('SVC_KNOWLEDGE_ALLOW_PRIVATE_TARGETS', false),
  },
  knowledgeExtractorUrl: {
    name: 'SVC_KNOWLEDGE_EXTRACTOR_URL',
    description: 'OpenAI-compatible chat base URL of the ingest extractor ({url}/chat/completions); unset: no ingest',
    defaultText: '(none)',
    parse: httpUrl('SVC_KNOWLEDGE_EXTRACTOR_URL'),
  },
  knowledgeExtractorModel: {
    name: 'SVC_KNOWLEDGE_EXTRACTOR_MODEL',
    description: 'Chat model of the ingest extractor',
    defaultText: 'gpt-4o-mini',
    parse: (raw) => optional(raw) ?? 'gpt-4o-mini',
  },
  knowledgeExtractorApiKey: {
    name: 'SVC_KNOWLEDGE_EXTRACTOR_API_KEY',
    description: 'Ingest extractor API key',
    secret: true,
    defaultText: '(none)',
    parse: optional,
  },
  knowledgeExtractorTimeoutMs: {
    name: 'SVC_KNOWLEDGE_EXTRACTOR_TIMEOUT',
    description: 'Ingest extractor request timeout (e.g. 30s, 500ms)',
    defaultText: '30s',
    parse: requestTimeoutMs('SVC_KNOWLEDGE_EXTRACTOR_TIMEOUT', '30s'),
  },
  schedulerDriver: {
    name: 'SVC_SCHEDULER_DRIVER',
    description: 'Scheduler driver: local (host processes) or kubernetes',
    defaultText: 'local',
    parse: oneOf('SVC_SCHEDULER_DRIVER', ['local', 'kubernetes'] as const, 'local'),
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
