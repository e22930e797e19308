/**
 * One JSON POST to a model endpoint (embedder, reranker, ingest extractor) through the outbound
 * guard: bearer key when set, a timeout (no byte for `timeoutMs`), and failures mapped to domain
 * errors whose codes name the endpoint: `<name>_timeout` (504), `<name>_unavailable` when
 * unreachable or redirecting and `<name>_failed` for a non-2xx or non-JSON answer (503). The key
 * never appears in an error.
 */
import { TimeoutError, UnavailableError } from '../../domain/errors.js';
import { OutboundTimeout } from '../errors.js';
import { OPERATOR_CONFIGURED, pinnedPost } from './pinned-post.js';

/** Where and how to call. */
export interface ModelEndpoint {
  /** Used in error messages and codes, e.g. `embedder`. */
  readonly name: string;
  /** Full URL of the call. */
  readonly url: string;
  readonly apiKey?: string;
  readonly timeoutMs: number;
}

/**
 * POSTs `body` as JSON through the outbound guard (operator-configured: any address, pinned, no
 * redirects) and returns the parsed JSON answer.
 */
export async function postModelJson(endpoint: ModelEndpoint, body: unknown): Promise<unknown> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (endpoint.apiKey) headers.authorization = `Bearer ${endpoint.apiKey}`;
  let response: { status: number; body: Buffer };
  try {
    response = await pinnedPost(new URL(endpoint.url), OPERATOR_CONFIGURED, {
      headers,
      body: JSON.stringify(body),
      timeoutMs: endpoint.timeoutMs,
    });
  } catch (cause) {
    if (cause instanceof OutboundTimeout) {
      throw new TimeoutError(`${endpoint.name} did not answer within ${endpoint.timeoutMs} ms`, {
        code: `${endpoint.name}_timeout`,
        cause,
      });
    }
    throw new UnavailableError(`${endpoint.name} is unreachable`, { code: `${endpoint.name}_unavailable`, cause });
  }
  // A redirect is not followed: the endpoint is as unreachable as one that refuses the connection.
  if (response.status >= 300 && response.status < 400)
    throw new UnavailableError(`${endpoint.name} is unreachable`, { code: `${endpoint.name}_unavailable` });
  if (response.status < 200 || response.status >= 300)
    throw new UnavailableError(`${endpoint.name} answered HTTP ${response.status}`, {
      code: `${endpoint.name}_failed`,
      details: { status: response.status },
    });
  try {
    return JSON.parse(response.body.toString('utf8')) as unknown;
  } catch (cause) {
    throw new UnavailableError(`${endpoint.name} answered with a body that is not JSON`, {
      code: `${endpoint.name}_failed`,
      cause,
    });
  }
}
