/**
 * Ports of the model endpoints the knowledge store calls: embedder, reranker and claim extractor.
 * The HTTP adapters live in platform/outbound/, next to the outbound guard; knowledge/ services take
 * them as arguments (docs/adr/0136-knowledge-http-clients-behind-ports.md).
 */

/** Turns texts into vectors, one per text, in order. */
export interface Embedder {
  readonly model: string;
  readonly dimensions: number | undefined;
  embed(texts: readonly string[]): Promise<Float32Array[]>;
}

/** Re-scores fused candidates; scores in [0, 1] replace the similarity component (undefined: not reranked). */
export interface Reranker {
  readonly model?: string;
  rerank(
    query: string | undefined,
    candidates: readonly { id: string; content: string }[],
  ): Promise<number[] | undefined>;
}

/** One claim extracted from a text. */
export interface ExtractedClaim {
  readonly content: string;
  readonly subject?: string;
  readonly predicate?: string;
  readonly object?: string;
  readonly confidence?: number;
  readonly labels?: string[];
}

/** Extracts claims from text. */
export interface Extractor {
  /** What extracts: `rules` (the built-in default) or `openai-compatible` (an LLM endpoint). */
  readonly kind: string;
  readonly model: string;
  extract(text: string, maxClaims: number): Promise<ExtractedClaim[]>;
}
