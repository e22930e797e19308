/**
 * Corpus statistics for lexical ranking, over exactly the rows one request may see (docs/adr/0224):
 * its namespace, its valid-time and transaction-time view, its retraction, label and source filters.
 * Document frequencies of stems, the number of rows, and from a sample of the newest rows, the
 * average content length in tokens and whether write order carries topic
 * (domain/knowledge/retrieval/turn-context.ts).
 *
 * Each figure is cached for a minute per view (frequencies drift slowly). A view without `known_at`
 * or `valid_at` is "now" at the time a figure is counted: rows written since are not yet counted, and
 * a row retracted, superseded or expired since may still be, for at most that minute. A view with
 * both times fixed counts the same rows whenever it is asked (a later retraction aside).
 */
import { idf } from '../../domain/knowledge/retrieval/lexical-scoring.js';
import { analyze } from '../../domain/knowledge/retrieval/text-analysis.js';
import { isCoherent } from '../../domain/knowledge/retrieval/turn-context.js';
import type { QueryTerm } from '../../domain/knowledge/retrieval/lexical-query.js';
import type { VersionView, ViewSnapshot, ViewStore } from '../../store/knowledge/view-store.js';

/** How long a cached statistic is used. */
const TTL_MS = 60_000;
const MAX_ENTRIES = 50_000;
/** Rows sampled for a view's average length and write-order coherence. */
const LENGTH_SAMPLE = 500;
/** Snapshots of clock-following views kept at once (each a table of ids in the connection's memory). */
const MAX_SNAPSHOTS = 8;

/** A request's view, and which of its times follow the clock (not given by the request). */
export interface StatisticsView extends VersionView {
  readonly validAtIsNow: boolean;
  readonly knownAtIsNow: boolean;
}

/** The statistics of one request's view. */
export interface ViewStatistics {
  /** Rows the view sees. */
  rows(): number;
  /** Rows the view sees whose indexed text holds the term's stem. */
  documentFrequency(term: QueryTerm): number;
  /** IDF of the term's stem over the view. */
  idf(term: QueryTerm): number;
  /** Average length in tokens of the view's newest contents (at least 1). */
  averageLength(): number;
  /** Whether the view's newest writes are more alike next to each other than apart. */
  coherent(): boolean;
}

/** The key of a view's cache entries: fixed times in it, "now" for clock-following ones. */
function viewKey(view: StatisticsView): string {
  return JSON.stringify([
    view.nsId,
    view.validAtIsNow ? 'now' : view.validAt,
    view.knownAtIsNow ? 'now' : view.knownAt,
    view.includeRetracted,
    [...view.labels].sort(),
    view.include === undefined ? null : [...view.include].sort(),
    [...view.exclude].sort(),
  ]);
}

/** Cached per-view document frequencies, row counts, average lengths and coherence. */
export class TermStatistics {
  readonly #views: ViewStore;
  readonly #now: () => number;
  readonly #counts = new Map<string, { n: number; at: number }>();
  readonly #shapes = new Map<string, { avg: number; coherent: boolean; at: number }>();
  /** Per clock-following view: the ids it saw, and the frequencies counted against them. */
  readonly #snapshots = new Map<string, { snapshot: ViewSnapshot; df: Map<string, number>; at: number }>();

  constructor(views: ViewStore, now: () => number) {
    this.#views = views;
    this.#now = now;
  }

  /** The statistics of `view`. */
  of(view: StatisticsView): ViewStatistics {
    const key = viewKey(view);
    const counted = (): VersionView => {
      const now = this.#now();
      return {
        ...view,
        validAt: view.validAtIsNow ? now : view.validAt,
        knownAt: view.knownAtIsNow ? now : view.knownAt,
      };
    };
    const cached = (entryKey: string, count: () => number): number => {
      const now = this.#now();
      let entry = this.#counts.get(entryKey);
      if (!entry || now - entry.at > TTL_MS) {
        if (this.#counts.size >= MAX_ENTRIES) this.#counts.clear();
        entry = { n: count(), at: now };
        this.#counts.set(entryKey, entry);
      }
      return entry.n;
    };
    const shape = () => {
      const now = this.#now();
      let entry = this.#shapes.get(key);
      if (!entry || now - entry.at > TTL_MS) {
        if (this.#shapes.size >= MAX_ENTRIES) this.#shapes.clear();
        const sample = this.#views.sampleContent(counted(), LENGTH_SAMPLE);
        const avg = sample.reduce((sum, c) => sum + analyze(c).length, 0) / Math.max(1, sample.length);
        entry = { avg: Math.max(1, avg), coherent: isCoherent(sample), at: now };
        this.#shapes.set(key, entry);
      }
      return entry;
    };
    // A view of "now" counts against a snapshot of its ids, taken once a minute; one with fixed
    // times (or inside a transaction) joins each term's postings to the versions.
    const live = view.validAtIsNow && view.knownAtIsNow ? this.#snapshotOf(key, counted) : undefined;
    const rows = () => live?.snapshot.rows ?? cached(`${key}\u0000`, () => this.#views.count(counted()));
    const documentFrequency = (term: QueryTerm) => {
      if (!live) return cached(`${key}\u0000${term.stem}`, () => this.#views.documentFrequency(counted(), term.token));
      let n = live.df.get(term.stem);
      if (n === undefined) {
        if (live.df.size >= MAX_ENTRIES) live.df.clear();
        live.df.set(term.stem, (n = live.snapshot.documentFrequency(term.token)));
      }
      return n;
    };
    return {
      rows,
      documentFrequency,
      idf: (term) => idf(documentFrequency(term), rows()),
      averageLength: () => shape().avg,
      coherent: () => shape().coherent,
    };
  }

  /** The current snapshot of a clock-following view, taken anew after a minute; undefined in a transaction. */
  #snapshotOf(key: string, counted: () => VersionView) {
    const now = this.#now();
    const held = this.#snapshots.get(key);
    if (held && now - held.at <= TTL_MS) return held;
    const snapshot = this.#views.snapshot(counted());
    if (!snapshot) return undefined;
    held?.snapshot.drop();
    this.#snapshots.delete(key);
    if (this.#snapshots.size >= MAX_SNAPSHOTS) {
      const [oldest, entry] = this.#snapshots.entries().next().value!;
      entry.snapshot.drop();
      this.#snapshots.delete(oldest);
    }
    const entry = { snapshot, df: new Map<string, number>(), at: now };
    this.#snapshots.set(key, entry);
    return entry;
  }
}
