/**
 * One JSON POST to a model endpoint (embedder, reranker, ingest extractor): bearer key when set,
 * a timeout, and failures mapped to domain errors whose codes name the endpoint: `<name>_timeout`
 * (504), `<name>_unavailable` when unreachable and `<name>_failed` for a non-2xx or non-JSON
 * answer (503). The key never appears in an error.
 */
import { TimeoutError, UnavailableError } from '../../domain/errors.js';

/** Where and how to call. */
export interface ModelEndpoint {
  /** Used in error messages and codes, e.g. `embedder`. */
  readonly name: string;
  /** Full URL of the call. */
  readonly url: string;
  readonly apiKey?: string;
  readonly timeoutMs: number;
}

/** POSTs `body` as JSON and returns the parsed JSON answer. */
export async function postModelJson(endpoint: ModelEndpoint, body: unknown): Promise<unknown> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (endpoint.apiKey) headers.authorization = `Bearer ${endpoint.apiKey}`;
  let response: Response;
  try {
    response = await fetch(endpoint.url, { method: 'POST', headers, body: JSON.stringify(body), redirect: 'error', signal: AbortSignal.timeout(endpoint.timeoutMs) });
  } catch (cause) {
    if (cause instanceof Error && (cause.name === 'TimeoutError' || cause.name === 'AbortError')) {
      throw new TimeoutError(`${endpoint.name} did not answer within ${endpoint.timeoutMs} ms`, { code: `${endpoint.name}_timeout`, cause });
    }
    throw new UnavailableError(`${endpoint.name} is unreachable`, { code: `${endpoint.name}_unavailable`, cause });
  }
  const text = await response.text();
  if (!response.ok) throw new UnavailableError(`${endpoint.name} answered HTTP ${response.status}`, { code: `${endpoint.name}_failed`, details: { status: response.status } });
  try {
    return JSON.parse(text) as unknown;
  } catch (cause) {
    throw new UnavailableError(`${endpoint.name} answered with a body that is not JSON`, { code: `${endpoint.name}_failed`, cause });
  }
}
