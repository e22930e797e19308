/**
 * Corpus statistics for lexical ranking, cached: document frequencies of stems (counting a common
 * term reads its whole doclist, so each count is reused for a minute: frequencies drift slowly), the
 * number of text rows, and per namespace, from a sample of its newest writes: the average content
 * length in tokens and whether its write order carries topic (domain/knowledge/retrieval/turn-context.ts).
 */
import { idf } from '../../domain/knowledge/retrieval/lexical-scoring.js';
import { analyze } from '../../domain/knowledge/retrieval/text-analysis.js';
import { isCoherent } from '../../domain/knowledge/retrieval/turn-context.js';
import type { NodeStore } from '../../store/knowledge/node-store.js';

/** How long a cached statistic is used. */
const TTL_MS = 60_000;
const MAX_TERMS = 50_000;
/** Rows sampled for a namespace's average length. */
const LENGTH_SAMPLE = 500;

/** Cached document frequencies, IDF and average lengths over the text index. */
export class TermStatistics {
  readonly #nodes: NodeStore;
  readonly #now: () => number;
  readonly #df = new Map<string, { df: number; at: number }>();
  readonly #shapes = new Map<number, { avg: number; coherent: boolean; at: number }>();
  #total = { n: 0, at: -Infinity };

  constructor(nodes: NodeStore, now: () => number) {
    this.#nodes = nodes;
    this.#now = now;
  }

  /** Number of text rows (every version of every namespace). */
  rows(): number {
    const now = this.#now();
    if (now - this.#total.at > TTL_MS) this.#total = { n: this.#nodes.textRowEstimate(), at: now };
    return this.#total.n;
  }

  /** Rows whose indexed text holds `stem`. */
  documentFrequency(stem: string): number {
    const now = this.#now();
    let entry = this.#df.get(stem);
    if (!entry || now - entry.at > TTL_MS) {
      if (this.#df.size >= MAX_TERMS) this.#df.clear();
      entry = { df: this.#nodes.documentFrequency(stem), at: now };
      this.#df.set(stem, entry);
    }
    return entry.df;
  }

  /** IDF of `stem` over every text row. */
  idf(stem: string): number {
    return idf(this.documentFrequency(stem), this.rows());
  }

  /** Average length in tokens of a namespace's recent live contents (at least 1). */
  averageLength(nsId: number): number {
    return this.#shape(nsId).avg;
  }

  /** Whether a namespace's recent live writes are more alike next to each other than apart. */
  coherent(nsId: number): boolean {
    return this.#shape(nsId).coherent;
  }

  #shape(nsId: number): { avg: number; coherent: boolean } {
    const now = this.#now();
    let entry = this.#shapes.get(nsId);
    if (!entry || now - entry.at > TTL_MS) {
      const sample = this.#nodes.sampleLiveContent(nsId, LENGTH_SAMPLE);
      const avg = sample.reduce((sum, c) => sum + analyze(c).length, 0) / Math.max(1, sample.length);
      entry = { avg: Math.max(1, avg), coherent: isCoherent(sample), at: now };
      this.#shapes.set(nsId, entry);
    }
    return entry;
  }
}
