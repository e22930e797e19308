/**
 * Configuration: the one typed view of the `SVC_*` environment variables.
 *
 * Every variable is declared once in {@link VARIABLES} with its parser, default and whether it is a
 * secret. `loadConfig` validates all of them at start and throws a `ConfigError` naming the first
 * broken variable, so a typo fails fast instead of surfacing as a strange runtime error.
 */
import path from 'node:path';
import { ConfigError } from '../domain/errors.js';

/** Deployment profile; `production` tightens authentication and admission. */
export const Profile = { development: 'development', production: 'production' } as const;
export type Profile = (typeof Profile)[keyof typeof Profile];

export const LogLevel = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LogLevel)[number];

/** The validated configuration of one platform process. */
export interface SvcConfig {
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
  /** Environment name carried by events and fleet documents. @default development */
  readonly environment: string;
  readonly logLevel: LogLevel;
  /** Largest accepted request body, in bytes. @default 1 MiB */
  readonly bodyLimitBytes: number;
  /** Knowledge store tokens, `tenant:permissions:secret` separated by commas; never logged. */
  readonly knowledgeTokens: string | undefined;
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
  /** Deduplicate writes by content fingerprint unless a write says skip_dedup. @default false */
  readonly knowledgeDedupDefault: boolean;
}

type Env = Readonly<Record<string, string | undefined>>;

interface VariableSpec<T> {
  readonly name: string;
  readonly description: string;
  readonly secret?: boolean;
  readonly defaultText: string;
  parse(raw: string | undefined, env: Env): T;
}

function port(name: string, fallback: number): (raw: string | undefined) => number {
  return (raw) => {
    if (raw === undefined || raw === '') return fallback;
    if (!/^\d+$/.test(raw)) throw new ConfigError(name, `"${raw}" is not a port number`);
    const value = Number(raw);
    if (value < 0 || value > 65535) throw new ConfigError(name, `${value} is outside 0-65535`);
    return value;
  };
}

function bool(name: string, fallback: boolean): (raw: string | undefined) => boolean {
  return (raw) => {
    if (raw === undefined || raw === '') return fallback;
    const v = raw.toLowerCase();
    if (['1', 'true', 'yes', 'on'].includes(v)) return true;
    if (['0', 'false', 'no', 'off'].includes(v)) return false;
    throw new ConfigError(name, `"${raw}" is not a boolean (use true or false)`);
  };
}

function oneOf<T extends string>(name: string, values: readonly T[], fallback: T): (raw: string | undefined) => T {
  return (raw) => {
    if (raw === undefined || raw === '') return fallback;
    if ((values as readonly string[]).includes(raw)) return raw as T;
    throw new ConfigError(name, `"${raw}" is not one of ${values.join(', ')}`);
  };
}

/** Parses a byte size such as `512kb`, `1mb`, `1048576`. */
export function parseByteSize(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)\s*(b|kb|kib|mb|mib|gb|gib)?$/i.exec(text.trim());
  if (!match) return undefined;
  const unit = (match[2] ?? 'b').toLowerCase();
  const factor: Record<string, number> = { b: 1, kb: 1024, kib: 1024, mb: 1024 ** 2, mib: 1024 ** 2, gb: 1024 ** 3, gib: 1024 ** 3 };
  return Math.floor(Number(match[1]) * (factor[unit] ?? 1));
}

function optional(raw: string | undefined): string | undefined {
  return raw === undefined || raw === '' ? undefined : raw;
}

/** Every `SVC_*` variable the platform reads, with its meaning and default. */
export const VARIABLES = {
  port: { name: 'SVC_PORT', description: 'Control plane API port', defaultText: '8800', parse: port('SVC_PORT', 8800) },
  knowledgePort: { name: 'SVC_KNOWLEDGE_PORT', description: 'Knowledge store REST and GraphQL port', defaultText: '7701', parse: port('SVC_KNOWLEDGE_PORT', 7701) },
  knowledgeAdminPort: { name: 'SVC_KNOWLEDGE_ADMIN_PORT', description: 'Knowledge store admin and metrics port', defaultText: '7702', parse: port('SVC_KNOWLEDGE_ADMIN_PORT', 7702) },
  host: { name: 'SVC_HOST', description: 'Address the listeners bind to', defaultText: '127.0.0.1', parse: (raw) => optional(raw) ?? '127.0.0.1' },
  appsDir: { name: 'SVC_APPS_DIR', description: 'Folder of app specs (<app>/infraspec.yaml, deploy-groups/*.yaml)', defaultText: './apps', parse: (raw) => path.resolve(optional(raw) ?? 'apps') },
  dataDir: { name: 'SVC_DATA_DIR', description: 'Folder for control.db, knowledge.db, releases and snapshots', defaultText: './.data', parse: (raw) => path.resolve(optional(raw) ?? '.data') },
  apiToken: { name: 'SVC_API_TOKEN', description: 'Static control token (Authorization: Bearer)', secret: true, defaultText: '(none)', parse: optional },
  requireExplicitAuth: { name: 'SVC_REQUIRE_EXPLICIT_AUTH', description: 'Require authentication for /metrics and the service manifest', defaultText: 'false', parse: bool('SVC_REQUIRE_EXPLICIT_AUTH', false) },
  profile: { name: 'SVC_PROFILE', description: 'development or production', defaultText: 'development', parse: oneOf('SVC_PROFILE', Object.values(Profile), 'development') },
  environment: { name: 'SVC_ENVIRONMENT', description: 'Environment name for events and fleet documents', defaultText: 'development', parse: (raw) => {
    const value = optional(raw) ?? 'development';
    if (!/^[a-z0-9][a-z0-9-]{0,62}$/.test(value)) throw new ConfigError('SVC_ENVIRONMENT', `"${value}" must be lowercase letters, digits and hyphens`);
    return value;
  } },
  logLevel: { name: 'SVC_LOG_LEVEL', description: 'pino log level', defaultText: 'info', parse: oneOf('SVC_LOG_LEVEL', LogLevel, 'info') },
  bodyLimitBytes: { name: 'SVC_BODY_LIMIT', description: 'Largest accepted request body (e.g. 1mb)', defaultText: '1mb', parse: (raw) => {
    if (raw === undefined || raw === '') return 1024 * 1024;
    const bytes = parseByteSize(raw);
    if (bytes === undefined || bytes <= 0) throw new ConfigError('SVC_BODY_LIMIT', `"${raw}" is not a size such as 512kb or 2mb`);
    return bytes;
  } },
  knowledgeTokens: { name: 'SVC_KNOWLEDGE_TOKENS', description: 'Knowledge store tokens tenant:permissions:secret, comma separated', secret: true, defaultText: '(none: open)', parse: optional },
  knowledgeTokensFile: { name: 'SVC_KNOWLEDGE_TOKENS_FILE', description: 'File of knowledge store tokens, one tenant:permissions:secret per line', defaultText: '(none)', parse: (raw) => {
    const value = optional(raw);
    return value === undefined ? undefined : path.resolve(value);
  } },
  knowledgeEmbedderUrl: { name: 'SVC_KNOWLEDGE_EMBEDDER_URL', description: 'OpenAI-compatible embeddings base URL ({url}/embeddings); unset: no embedder', defaultText: '(none)', parse: (raw) => {
    const value = optional(raw);
    if (value !== undefined && !/^https?:\/\/[^\s]+$/.test(value)) throw new ConfigError('SVC_KNOWLEDGE_EMBEDDER_URL', `"${value}" is not an http(s) URL`);
    return value;
  } },
  knowledgeEmbedderModel: { name: 'SVC_KNOWLEDGE_EMBEDDER_MODEL', description: 'Embedding model name', defaultText: 'text-embedding-3-small', parse: (raw) => optional(raw) ?? 'text-embedding-3-small' },
  knowledgeEmbedderDimensions: { name: 'SVC_KNOWLEDGE_EMBEDDER_DIMENSIONS', description: 'Requested embedding dimensions', defaultText: '(model default)', parse: (raw) => {
    const value = optional(raw);
    if (value === undefined) return undefined;
    if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 4096) throw new ConfigError('SVC_KNOWLEDGE_EMBEDDER_DIMENSIONS', `"${value}" is not a whole number in 1-4096`);
    return Number(value);
  } },
  knowledgeEmbedderApiKey: { name: 'SVC_KNOWLEDGE_EMBEDDER_API_KEY', description: 'Embedder API key', secret: true, defaultText: '(none)', parse: optional },
  knowledgeEmbedderTimeoutMs: { name: 'SVC_KNOWLEDGE_EMBEDDER_TIMEOUT', description: 'Embedder request timeout (e.g. 10s, 500ms)', defaultText: '10s', parse: (raw) => {
    const value = optional(raw) ?? '10s';
    const match = /^(\d+)(ms|s)?$/.exec(value);
    if (!match || Number(match[1]) <= 0) throw new ConfigError('SVC_KNOWLEDGE_EMBEDDER_TIMEOUT', `"${value}" is not a duration such as 10s or 500ms`);
    return Number(match[1]) * (match[2] === 'ms' ? 1 : match[2] === 's' ? 1000 : 1);
  } },
  knowledgeEmbedderBatchSize: { name: 'SVC_KNOWLEDGE_EMBEDDER_BATCH_SIZE', description: 'Most texts per embedder request', defaultText: '64', parse: (raw) => {
    const value = optional(raw) ?? '64';
    if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 2048) throw new ConfigError('SVC_KNOWLEDGE_EMBEDDER_BATCH_SIZE', `"${value}" is not a whole number in 1-2048`);
    return Number(value);
  } },
  knowledgeDedupDefault: { name: 'SVC_KNOWLEDGE_DEDUP_DEFAULT', description: 'Deduplicate knowledge writes by content fingerprint unless skip_dedup', defaultText: 'false', parse: bool('SVC_KNOWLEDGE_DEDUP_DEFAULT', false) },
} satisfies { [K in keyof SvcConfig]: VariableSpec<SvcConfig[K]> };

/**
 * Reads and validates the configuration from `env`.
 * @throws ConfigError naming the variable when a value is malformed or the profile's rules are broken.
 */
export function loadConfig(env: Env = process.env): SvcConfig {
  const entries = Object.entries(VARIABLES).map(([key, spec]) => [key, (spec as VariableSpec<unknown>).parse(env[spec.name], env)]);
  const config = Object.fromEntries(entries) as unknown as SvcConfig;
  if (config.profile === 'production') {
    if (!config.requireExplicitAuth) {
      throw new ConfigError('SVC_REQUIRE_EXPLICIT_AUTH', 'must be true when SVC_PROFILE=production');
    }
    if (config.apiToken === undefined) {
      throw new ConfigError('SVC_API_TOKEN', 'must be set when SVC_PROFILE=production');
    }
  }
  if (config.requireExplicitAuth && config.apiToken === undefined) {
    throw new ConfigError('SVC_API_TOKEN', 'must be set when SVC_REQUIRE_EXPLICIT_AUTH=true, or no request could authenticate');
  }
  return Object.freeze(config);
}

/** The configuration with secrets replaced by `<set>` or `<unset>`, safe to log or print. */
export function redactConfig(config: SvcConfig): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(VARIABLES) as [keyof SvcConfig, VariableSpec<unknown>][]) {
    out[key] = spec.secret ? (config[key] === undefined ? '<unset>' : '<set>') : config[key];
  }
  return out;
}
