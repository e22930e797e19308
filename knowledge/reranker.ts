/**
 * The optional reranker: re-scores the fused candidates of a text query. The HTTP reranker speaks
 * the rerank protocol shared by Cohere, Jina, vLLM and LiteLLM: `POST {url}/rerank` with
 * `{ model, query, documents: string[], top_n }` answering `{ results: [{ index, relevance_score }] }`.
 * A candidate the answer leaves out scores 0.
 */
import { TimeoutError, UnavailableError } from '../domain/errors.js';
import type { Reranker } from './knowledge-core.js';

/** Options of {@link HttpReranker}. */
export interface HttpRerankerOptions {
  /** Base URL; `/rerank` is appended. */
  readonly url: string;
  readonly model: string;
  /** Sent as `Authorization: Bearer <apiKey>` when set; never logged. */
  readonly apiKey?: string;
  /** Per-request timeout. @default 10000 */
  readonly timeoutMs?: number;
}

/** HTTP rerank client. */
export class HttpReranker implements Reranker {
  readonly model: string;
  readonly #options: HttpRerankerOptions;

  constructor(options: HttpRerankerOptions) {
    this.#options = options;
    this.model = options.model;
  }

  /** Relevance of each candidate to `query`, in candidate order; no query (or no candidates): no call. */
  async rerank(query: string | undefined, candidates: readonly { id: string; content: string }[]): Promise<number[] | undefined> {
    if (query === undefined || query.trim() === '' || candidates.length === 0) return undefined;
    const timeoutMs = this.#options.timeoutMs ?? 10_000;
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.#options.apiKey) headers.authorization = `Bearer ${this.#options.apiKey}`;
    const body = { model: this.model, query, documents: candidates.map((c) => c.content), top_n: candidates.length };
    let response: Response;
    try {
      response = await fetch(`${this.#options.url.replace(/\/+$/, '')}/rerank`, { method: 'POST', headers, body: JSON.stringify(body), signal: AbortSignal.timeout(timeoutMs) });
    } catch (cause) {
      if (cause instanceof Error && (cause.name === 'TimeoutError' || cause.name === 'AbortError')) {
        throw new TimeoutError(`reranker did not answer within ${timeoutMs} ms`, { code: 'reranker_timeout', cause });
      }
      throw new UnavailableError('reranker is unreachable', { code: 'reranker_unavailable', cause });
    }
    const text = await response.text();
    if (!response.ok) throw new UnavailableError(`reranker answered HTTP ${response.status}`, { code: 'reranker_failed', details: { status: response.status } });
    let parsed: { results?: { index?: unknown; relevance_score?: unknown }[] };
    try {
      parsed = JSON.parse(text) as typeof parsed;
    } catch (cause) {
      throw new UnavailableError('reranker answered with a body that is not JSON', { code: 'reranker_failed', cause });
    }
    if (!Array.isArray(parsed.results)) throw new UnavailableError('reranker answered without a results list', { code: 'reranker_failed' });
    const scores = new Array<number>(candidates.length).fill(0);
    for (const result of parsed.results) {
      const { index, relevance_score: score } = result;
      if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= candidates.length || typeof score !== 'number' || !Number.isFinite(score)) {
        throw new UnavailableError('reranker answered a result without a valid index and relevance_score', { code: 'reranker_failed' });
      }
      scores[index] = score;
    }
    return scores;
  }
}
