/**
 * The settings of acquisition connectors configured on the server, part of {@link VARIABLES} in
 * config.ts (docs/adr/0234-server-configured-acquisition-connectors.md). Connectors and their URLs are
 * shown; their tokens are a separate secret variable, and no error message repeats a token.
 */
import { ConfigError } from '../domain/errors.js';
import { optional, requestTimeoutMs, type Env, type VariableSpec } from './config-parsers.js';

const CONNECTORS = 'SVC_KNOWLEDGE_ACQUISITION_CONNECTORS';
const TOKENS = 'SVC_KNOWLEDGE_ACQUISITION_CONNECTOR_TOKENS';
const TIMEOUT = 'SVC_KNOWLEDGE_ACQUISITION_CONNECTOR_TIMEOUT';
/** The largest connector timeout, as for per-request connectors. */
const MAX_TIMEOUT_MS = 60_000;
/** Connector ids, as `POST /acquisition/execute {connector_id}` accepts them. */
const ID = /^[a-z0-9][a-z0-9_-]{0,62}$/;

/** A connector of {@link CONNECTORS}: its id and URL. */
export interface ConfiguredConnectorSetting {
  readonly id: string;
  readonly url: string;
}

/** Acquisition connector settings of {@link SvcConfig}. */
export interface KnowledgeAcquisitionConfig {
  /** Server-configured acquisition connectors, `id=url` comma separated. @default none */
  readonly knowledgeAcquisitionConnectors: readonly ConfiguredConnectorSetting[];
  /** Bearer tokens of those connectors by id, `id:token` comma separated; never logged. */
  readonly knowledgeAcquisitionConnectorTokens: Readonly<Record<string, string>> | undefined;
  /** Timeout of each call to a configured connector, in milliseconds. @default 10000 */
  readonly knowledgeAcquisitionConnectorTimeoutMs: number;
}

function entries(raw: string | undefined): string[] {
  const value = optional(raw);
  return value === undefined ? [] : value.split(',').map((e) => e.trim());
}

function parseConnectors(raw: string | undefined): readonly ConfiguredConnectorSetting[] {
  const out: ConfiguredConnectorSetting[] = [];
  entries(raw).forEach((entry, i) => {
    const at = `entry ${i + 1}`;
    const eq = entry.indexOf('=');
    if (eq < 0) throw new ConfigError(CONNECTORS, `${at} "${entry.slice(0, 80)}" is not id=url`);
    const id = entry.slice(0, eq).trim();
    const raw = entry.slice(eq + 1).trim();
    if (!ID.test(id))
      throw new ConfigError(
        CONNECTORS,
        `${at}: id "${id.slice(0, 80)}" must be 1-63 lowercase letters, digits, - or _, starting with a letter or digit`,
      );
    if (out.some((c) => c.id === id)) throw new ConfigError(CONNECTORS, `${at}: connector "${id}" is configured twice`);
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new ConfigError(CONNECTORS, `${at}: connector "${id}" has no absolute URL after "="`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new ConfigError(CONNECTORS, `${at}: connector "${id}" URL scheme ${url.protocol} is not http or https`);
    if (url.username !== '' || url.password !== '')
      throw new ConfigError(
        CONNECTORS,
        `${at}: connector "${id}" URL must not carry credentials: put its token in ${TOKENS} (id:token)`,
      );
    out.push({ id, url: url.toString() });
  });
  return Object.freeze(out);
}

function parseTokens(raw: string | undefined, env: Env): Readonly<Record<string, string>> | undefined {
  const list = entries(raw);
  if (list.length === 0) return undefined;
  // The ids are checked against the connectors (that variable's own errors are reported under its name).
  let ids: readonly string[];
  try {
    ids = parseConnectors(env[CONNECTORS]).map((c) => c.id);
  } catch {
    ids = [];
  }
  const out: Record<string, string> = {};
  list.forEach((entry, i) => {
    const at = `entry ${i + 1}`;
    const colon = entry.indexOf(':');
    // The entry is never repeated: it may be a token.
    if (colon < 0) throw new ConfigError(TOKENS, `${at} is not id:token`);
    const id = entry.slice(0, colon).trim();
    const token = entry.slice(colon + 1).trim();
    if (!ID.test(id)) throw new ConfigError(TOKENS, `${at}: the text before ":" is not a connector id`);
    if (!ids.includes(id))
      throw new ConfigError(
        TOKENS,
        `${at}: "${id}" is not a connector of ${CONNECTORS} (${ids.length === 0 ? 'none is configured' : `configured: ${ids.join(', ')}`})`,
      );
    if (id in out) throw new ConfigError(TOKENS, `${at}: connector "${id}" has a second token`);
    if (token === '') throw new ConfigError(TOKENS, `${at}: connector "${id}" has an empty token`);
    if (token.length > 4096 || !/^[\x21-\x7e]+$/.test(token))
      throw new ConfigError(
        TOKENS,
        `${at}: the token of connector "${id}" must be 1-4096 printable ASCII characters without spaces`,
      );
    out[id] = token;
  });
  return Object.freeze(out);
}

function parseTimeout(raw: string | undefined): number {
  const ms = requestTimeoutMs(TIMEOUT, '10s')(raw);
  if (ms > MAX_TIMEOUT_MS) throw new ConfigError(TIMEOUT, `${ms}ms is longer than the largest connector timeout, 60s`);
  return ms;
}

export const KNOWLEDGE_ACQUISITION_VARIABLES = {
  knowledgeAcquisitionConnectors: {
    name: CONNECTORS,
    description:
      'Acquisition connectors configured on the server, id=url comma separated (POST /acquisition/execute {connector_id})',
    defaultText: '(none)',
    parse: parseConnectors,
  },
  knowledgeAcquisitionConnectorTokens: {
    name: TOKENS,
    description: 'Bearer tokens of the configured acquisition connectors, id:token comma separated',
    secret: true,
    defaultText: '(none)',
    parse: parseTokens,
  },
  knowledgeAcquisitionConnectorTimeoutMs: {
    name: TIMEOUT,
    description: 'Timeout of each call to a configured acquisition connector (at most 60s)',
    defaultText: '10s',
    parse: parseTimeout,
  },
} satisfies { [K in keyof KnowledgeAcquisitionConfig]: VariableSpec<KnowledgeAcquisitionConfig[K]> };
