/**
 * Document frequencies of query terms for lexical ranking, cached: counting a common term reads its
 * whole FTS5 doclist, so each count is reused for a minute (frequencies drift slowly).
 */
import { idf } from '../../domain/knowledge/lexical-query.js';
import type { NodeStore } from '../../store/knowledge/node-store.js';

/** How long a cached document frequency is used. */
const TTL_MS = 60_000;
const MAX_TERMS = 50_000;

/** Cached IDF lookups over the text index. */
export class TermStatistics {
  readonly #nodes: NodeStore;
  readonly #now: () => number;
  readonly #df = new Map<string, { df: number; at: number }>();
  #total = { n: 0, at: -Infinity };

  constructor(nodes: NodeStore, now: () => number) {
    this.#nodes = nodes;
    this.#now = now;
  }

  /** IDF of `term` over every text row. */
  idf(term: string): number {
    const now = this.#now();
    if (now - this.#total.at > TTL_MS) this.#total = { n: this.#nodes.textRowEstimate(), at: now };
    let entry = this.#df.get(term);
    if (!entry || now - entry.at > TTL_MS) {
      if (this.#df.size >= MAX_TERMS) this.#df.clear();
      entry = { df: this.#nodes.documentFrequency(term), at: now };
      this.#df.set(term, entry);
    }
    return idf(entry.df, this.#total.n);
  }
}
