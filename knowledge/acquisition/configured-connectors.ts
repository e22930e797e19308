/**
 * Acquisition connectors configured on the server (`SVC_KNOWLEDGE_ACQUISITION_CONNECTORS`, their
 * tokens in `SVC_KNOWLEDGE_ACQUISITION_CONNECTOR_TOKENS`), called by id from `POST
 * /acquisition/execute {connector_id}` beside the per-request connectors. A token is held here for
 * the calls only: it is never in an answer, a log line, an event or a receipt, and a configured URL
 * is checked by the outbound guard at each call like a per-request one (docs/adr/0234).
 */
import { NotFoundError } from '../../domain/errors.js';
import type { ConnectorTarget } from './acquisition-request.js';

/** One server-configured connector. */
export interface ConfiguredConnector {
  readonly id: string;
  readonly url: string;
  /** Sent as `authorization: Bearer <token>`; never shown. */
  readonly token?: string | undefined;
  readonly timeoutMs?: number | undefined;
}

/** The configured connectors, looked up by id. */
export class ConfiguredConnectors {
  readonly #byId: ReadonlyMap<string, ConfiguredConnector>;

  constructor(connectors: readonly ConfiguredConnector[] = []) {
    this.#byId = new Map(connectors.map((c) => [c.id, c]));
  }

  /** What a caller may see of each connector: id, URL, timeout and whether a token is set (never the token). */
  list() {
    return [...this.#byId.values()].map((c) => ({
      id: c.id,
      url: c.url,
      timeout_ms: c.timeoutMs ?? null,
      token_configured: c.token !== undefined,
    }));
  }

  /** The call target of connector `id`; 404 `connector_not_found` naming the configured ids. */
  target(id: string): ConnectorTarget {
    const c = this.#byId.get(id);
    if (c === undefined) {
      const known = [...this.#byId.keys()];
      throw new NotFoundError(
        `connector_id: no connector "${id.slice(0, 64)}" is configured on the server (${
          known.length === 0 ? 'none is: set SVC_KNOWLEDGE_ACQUISITION_CONNECTORS' : `configured: ${known.join(', ')}`
        })`,
        { code: 'connector_not_found', details: { connector_id: id.slice(0, 64), configured: known } },
      );
    }
    return { url: c.url, token: c.token, timeoutMs: c.timeoutMs };
  }
}
