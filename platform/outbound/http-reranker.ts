/**
 * The optional reranker: re-scores the fused candidates of a text query. The HTTP reranker speaks
 * the rerank protocol shared by Cohere, Jina, vLLM and LiteLLM: `POST {url}/rerank` with
 * `{ model, query, documents: string[], top_n }` answering `{ results: [{ index, relevance_score }] }`.
 * A candidate the answer leaves out scores 0.
 */
import { UnavailableError } from '../../domain/errors.js';
import type { Reranker } from '../../domain/knowledge/model-ports.js';
import { postModelJson } from './model-endpoint.js';

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
  async rerank(
    query: string | undefined,
    candidates: readonly { id: string; content: string }[],
  ): Promise<number[] | undefined> {
    if (query === undefined || query.trim() === '' || candidates.length === 0) return undefined;
    const body = { model: this.model, query, documents: candidates.map((c) => c.content), top_n: candidates.length };
    const parsed = (await postModelJson(
      {
        name: 'reranker',
        url: `${this.#options.url.replace(/\/+$/, '')}/rerank`,
        ...(this.#options.apiKey ? { apiKey: this.#options.apiKey } : {}),
        timeoutMs: this.#options.timeoutMs ?? 10_000,
      },
      body,
    )) as { results?: { index?: unknown; relevance_score?: unknown }[] } | null;
    if (!Array.isArray(parsed?.results))
      throw new UnavailableError('reranker answered without a results list', { code: 'reranker_failed' });
    const scores = new Array<number>(candidates.length).fill(0);
    for (const result of parsed.results) {
      const { index, relevance_score: score } = result;
      if (
        typeof index !== 'number' ||
        !Number.isInteger(index) ||
        index < 0 ||
        index >= candidates.length ||
        typeof score !== 'number' ||
        !Number.isFinite(score)
      ) {
        throw new UnavailableError('reranker answered a result without a valid index and relevance_score', {
          code: 'reranker_failed',
        });
      }
      scores[index] = score;
    }
    return scores;
  }
}
