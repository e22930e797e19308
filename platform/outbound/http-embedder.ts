/**
 * The HTTP embedder (the {@link Embedder} port; without one the store has no embedder): it speaks
 * the OpenAI-compatible protocol `POST {url}/embeddings` with `{ model, input: string[], dimensions? }`
 * answering `{ data: [{ embedding, index }] }`. Concurrent requests are coalesced into batches.
 */
import { UnavailableError } from '../../domain/errors.js';
import type { Embedder } from '../../domain/knowledge/model-ports.js';
import { postModelJson } from './model-endpoint.js';

/** Options of {@link HttpEmbedder}. */
export interface HttpEmbedderOptions {
  /** Base URL; `/embeddings` is appended. */
  readonly url: string;
  readonly model: string;
  /** Requested output dimensions, sent when set. */
  readonly dimensions?: number;
  /** Sent as `Authorization: Bearer <apiKey>` when set; never logged. */
  readonly apiKey?: string;
  /** Per-request timeout. @default 10000 */
  readonly timeoutMs?: number;
  /** Most texts in one request. @default 64 */
  readonly batchSize?: number;
}

interface Pending {
  readonly text: string;
  readonly resolve: (v: Float32Array) => void;
  readonly reject: (e: unknown) => void;
}

/** OpenAI-compatible embeddings client with request coalescing and timeouts. */
export class HttpEmbedder implements Embedder {
  readonly model: string;
  readonly dimensions: number | undefined;
  readonly #options: HttpEmbedderOptions;
  #queue: Pending[] = [];
  #scheduled = false;

  constructor(options: HttpEmbedderOptions) {
    this.#options = options;
    this.model = options.model;
    this.dimensions = options.dimensions;
  }

  /** Embeds texts; calls made in the same tick share requests of up to `batchSize` texts. */
  embed(texts: readonly string[]): Promise<Float32Array[]> {
    const promises = texts.map(
      (text) => new Promise<Float32Array>((resolve, reject) => this.#queue.push({ text, resolve, reject })),
    );
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(() => this.#flush());
    }
    return Promise.all(promises);
  }

  #flush(): void {
    this.#scheduled = false;
    const queue = this.#queue;
    this.#queue = [];
    const size = this.#options.batchSize ?? 64;
    for (let i = 0; i < queue.length; i += size) {
      const batch = queue.slice(i, i + size);
      this.#send(batch.map((p) => p.text)).then(
        (vectors) => batch.forEach((p, j) => p.resolve(vectors[j]!)),
        (error: unknown) => batch.forEach((p) => p.reject(error)),
      );
    }
  }

  async #send(input: string[]): Promise<Float32Array[]> {
    const body: Record<string, unknown> = { model: this.model, input };
    if (this.dimensions !== undefined) body.dimensions = this.dimensions;
    const parsed = ((await postModelJson(
      {
        name: 'embedder',
        url: `${this.#options.url.replace(/\/+$/, '')}/embeddings`,
        ...(this.#options.apiKey ? { apiKey: this.#options.apiKey } : {}),
        timeoutMs: this.#options.timeoutMs ?? 10_000,
      },
      body,
    )) ?? {}) as { data?: { embedding?: unknown; index?: unknown }[] };
    const out: Float32Array[] = new Array(input.length);
    for (const [position, item] of (parsed.data ?? []).entries()) {
      const index = typeof item.index === 'number' ? item.index : position;
      if (!Array.isArray(item.embedding) || !item.embedding.every((x) => typeof x === 'number' && Number.isFinite(x))) {
        throw new UnavailableError('embedder answered an embedding that is not a list of numbers', {
          code: 'embedder_failed',
        });
      }
      out[index] = Float32Array.from(item.embedding as number[]);
    }
    for (let i = 0; i < input.length; i++) {
      if (!out[i])
        throw new UnavailableError(
          `embedder answered ${parsed.data?.length ?? 0} embeddings for ${input.length} inputs`,
          { code: 'embedder_failed' },
        );
      if (this.dimensions !== undefined && out[i]!.length !== this.dimensions) {
        throw new UnavailableError(
          `embedder answered ${out[i]!.length} dimensions, ${this.dimensions} were configured`,
          { code: 'embedder_failed' },
        );
      }
    }
    return out;
  }
}
