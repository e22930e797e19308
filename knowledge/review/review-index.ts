/**
 * Incremental derivation of review signals for one namespace and one set of derivation thresholds.
 * Built once from indexed bulk reads, then kept current by replaying only what changed since its
 * cursors (new versions, feedback events and trust points name the nodes and sources to
 * re-derive), so a read after a change costs the change, not the namespace (docs/adr/0031).
 */
import {
  compareReviewItems,
  contradictionSignals,
  feedbackSignals,
  lowConfidenceSignals,
  sourceAnomalySignal,
  type FlaggedNode,
  type LiveClaim,
  type ReviewSignal,
  type ReviewThresholds,
} from '../../domain/knowledge/review-rules.js';
import { OPEN_TIME } from '../../store/knowledge/rows.js';
import type { FlaggedNodeRow, LiveVersionBrief, ReviewStore } from '../../store/knowledge/review-store.js';

/** Positions in the change streams the index has seen. */
interface Cursors {
  readonly vid: number;
  readonly feedbackId: number;
  readonly trustId: number;
}

/** Above this many changed nodes a full rebuild is cheaper than replaying them one by one. */
const REBUILD_ABOVE = 2000;

const claimOf = (r: LiveVersionBrief): LiveClaim => ({
  nodeId: r.node_id,
  confidence: r.confidence,
  txFrom: r.tx_from,
  sourceId: r.source_id,
  claimKey: r.claim_key,
  claimValue: r.claim_value,
});
const flaggedOf = (f: FlaggedNodeRow, confidence: number | null): FlaggedNode => ({
  nodeId: f.node_id,
  sourceId: f.source_id,
  refutations: f.refutations,
  stale: f.stale,
  firstRefutedAt: f.first_refuted_at,
  lastRefutedAt: f.last_refuted_at,
  firstStaleAt: f.first_stale_at,
  lastStaleAt: f.last_stale_at,
  confidence,
});

/** The signals of one namespace, kept current. */
export class ReviewIndex {
  readonly key: string;
  readonly #store: ReviewStore;
  readonly #nsId: number;
  readonly #t: ReviewThresholds;
  #cursors: Cursors = { vid: 0, feedbackId: 0, trustId: 0 };
  /** The next time a current version starts or stops being valid: everything is rebuilt then. */
  #expiresAt = OPEN_TIME;
  readonly #signals = new Map<string, ReviewSignal>();
  /** Contradiction signal ids per claim key, and anomaly signal id per source. */
  readonly #byClaim = new Map<string, string[]>();
  readonly #bySource = new Map<string, string>();
  #sorted: ReviewSignal[] | undefined;

  constructor(store: ReviewStore, nsId: number, t: ReviewThresholds, key: string) {
    this.#store = store;
    this.#nsId = nsId;
    this.#t = t;
    this.key = key;
  }

  /** The signals in queue order, brought up to date first. */
  signals(now: number): ReviewSignal[] {
    const cursors = this.#store.cursors();
    if (this.#sorted === undefined || now >= this.#expiresAt) {
      this.#rebuild(now, cursors);
    } else if (
      cursors.vid !== this.#cursors.vid ||
      cursors.feedbackId !== this.#cursors.feedbackId ||
      cursors.trustId !== this.#cursors.trustId
    ) {
      const changes = this.#store.changesSince(
        this.#nsId,
        this.#cursors.vid,
        this.#cursors.feedbackId,
        this.#cursors.trustId,
      );
      if (changes.nodes.size > REBUILD_ABOVE) this.#rebuild(now, cursors);
      else this.#apply(changes.nodes, changes.sources, now, cursors);
    }
    return this.#sorted!;
  }

  /** Full rebuilds so far (the first build included). */
  rebuilds = 0;

  #rebuild(now: number, cursors: Cursors): void {
    this.rebuilds += 1;
    const store = this.#store;
    this.#signals.clear();
    this.#byClaim.clear();
    this.#bySource.clear();
    // Cursors first: anything committed while reading is replayed on the next read.
    this.#cursors = cursors;
    const flagged = store.flagged(this.#nsId, now).filter((f) => f.confidence !== null);
    for (const s of feedbackSignals(flagged.map((f) => flaggedOf(f, f.confidence)))) this.#signals.set(s.id, s);
    const covered = new Set(flagged.map((f) => f.node_id));
    const low = store.lowConfidence(this.#nsId, this.#t.lowConfidenceThreshold, now);
    this.#expiresAt = store.nextValidityBoundary(this.#nsId, now);
    for (const s of lowConfidenceSignals(low.map(claimOf), this.#t.lowConfidenceThreshold, covered))
      this.#signals.set(s.id, s);
    for (const s of contradictionSignals(store.contradictions(this.#nsId, now).map(claimOf))) {
      this.#signals.set(s.id, s);
      const key = store.claimKeyOf(s.nodeId);
      if (key !== null) this.#byClaim.set(key, [...(this.#byClaim.get(key) ?? []), s.id]);
    }
    for (const source of store.sourcesWithFeedback(this.#nsId)) this.#source(source);
    this.#sorted = [...this.#signals.values()].sort(compareReviewItems);
  }

  #apply(nodes: ReadonlySet<string>, sources: readonly string[], now: number, cursors: Cursors): void {
    this.#cursors = cursors;
    const removed = new Set<string>();
    const added: ReviewSignal[] = [];
    const remove = (id: string) => {
      if (this.#signals.delete(id)) removed.add(id);
    };
    const add = (s: ReviewSignal) => {
      remove(s.id);
      this.#signals.set(s.id, s);
      added.push(s);
    };
    const keys = new Set<string>();
    for (const nodeId of nodes) {
      for (const type of ['refuted', 'stale', 'low_confidence']) remove(`${type}:${nodeId}`);
      const live = this.#store.liveOfNode(nodeId, now);
      const key = live?.claim_key ?? this.#store.claimKeyOf(nodeId);
      if (key !== null) keys.add(key);
      if (!live) continue;
      const counters = this.#store.flaggedNode(nodeId);
      if (counters) for (const s of feedbackSignals([flaggedOf(counters, live.confidence)])) add(s);
      for (const s of lowConfidenceSignals(
        [claimOf(live)],
        this.#t.lowConfidenceThreshold,
        counters ? new Set([nodeId]) : new Set(),
      ))
        add(s);
    }
    if (nodes.size > 0) this.#expiresAt = this.#store.nextValidityBoundary(this.#nsId, now);
    for (const key of keys) {
      for (const id of this.#byClaim.get(key) ?? []) remove(id);
      const group = contradictionSignals(this.#store.claimGroup(this.#nsId, key, now).map(claimOf));
      for (const s of group) add(s);
      if (group.length > 0)
        this.#byClaim.set(
          key,
          group.map((s) => s.id),
        );
      else this.#byClaim.delete(key);
    }
    for (const source of sources) {
      const before = this.#bySource.get(source);
      if (before !== undefined) remove(before);
      const after = this.#source(source);
      if (after) added.push(after);
    }
    const addedIds = new Set(added.map((s) => s.id));
    const kept = this.#sorted!.filter((s) => !removed.has(s.id) && !addedIds.has(s.id));
    for (const s of new Map(added.map((a) => [a.id, a])).values()) {
      if (this.#signals.get(s.id) !== s) continue;
      kept.splice(insertionPoint(kept, s), 0, s);
    }
    this.#sorted = kept;
  }

  /** Re-derives a source's anomaly; returns the new signal, if any. */
  #source(sourceId: string): ReviewSignal | undefined {
    const timeline = this.#store.trustOf(this.#nsId, sourceId).map((p) => ({
      nodeId: p.node_id,
      action: p.action,
      credibility: p.credibility,
      previous: p.previous,
      txTime: p.tx_time,
    }));
    const anomaly = sourceAnomalySignal(sourceId, timeline, this.#t);
    if (!anomaly) {
      this.#bySource.delete(sourceId);
      return undefined;
    }
    this.#signals.set(anomaly.id, anomaly);
    this.#bySource.set(sourceId, anomaly.id);
    return anomaly;
  }
}

/** Binary search for where `s` belongs in a list sorted by {@link compareReviewItems}. */
function insertionPoint(list: readonly ReviewSignal[], s: ReviewSignal): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareReviewItems(list[mid]!, s) <= 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
