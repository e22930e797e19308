/**
 * SQL for append-only feedback events and the per-node feedback counters that the review queue
 * reads instead of scanning events (docs/adr/0030, 0031).
 */
import type { Db } from '../database.js';

/** One feedback event row (append-only). */
export interface FeedbackEventRow {
  readonly id: number;
  readonly event_id: string;
  readonly ns_id: number;
  readonly node_id: string;
  readonly node_version: number;
  readonly action: string;
  readonly source_id: string;
  readonly source_credibility: number;
  readonly previous_credibility: number;
  readonly confidence: number;
  readonly previous_confidence: number;
  readonly utility: number;
  readonly reason: string | null;
  readonly tx_time: number;
}

/** Feedback counters of one node; `flagged` is 1 while it has refutations or stale marks. */
export interface NodeFeedbackRow {
  readonly node_id: string;
  readonly ns_id: number;
  readonly source_id: string;
  readonly validations: number;
  readonly refutations: number;
  readonly useful: number;
  readonly stale: number;
  readonly recall_count: number;
  readonly last_recalled_at: number | null;
  readonly first_refuted_at: number | null;
  readonly last_refuted_at: number | null;
  readonly first_stale_at: number | null;
  readonly last_stale_at: number | null;
  readonly last_action: string;
  readonly last_event_at: number;
  readonly flagged: number;
}

/** Feedback events and counters of one database. */
export class FeedbackStore {
  readonly #s;

  constructor(db: Db) {
    this.#s = {
      insert:
        db.prepare(`INSERT INTO kn_feedback_events (event_id, ns_id, node_id, node_version, action, source_id, source_credibility,
          previous_credibility, confidence, previous_confidence, utility, reason, tx_time)
        VALUES (@event_id, @ns_id, @node_id, @node_version, @action, @source_id, @source_credibility,
          @previous_credibility, @confidence, @previous_confidence, @utility, @reason, @tx_time)`),
      byEventId: db.prepare('SELECT * FROM kn_feedback_events WHERE event_id = ?'),
      after: db.prepare(
        'SELECT * FROM kn_feedback_events WHERE ns_id = ? AND tx_time > ? ORDER BY tx_time, id LIMIT ?',
      ),
      ofNode: db.prepare('SELECT * FROM kn_feedback_events WHERE node_id = ? ORDER BY id'),
      counters: db.prepare('SELECT * FROM kn_node_feedback WHERE node_id = ?'),
      upsert:
        db.prepare(`INSERT INTO kn_node_feedback (node_id, ns_id, source_id, validations, refutations, useful, stale, recall_count,
          last_recalled_at, first_refuted_at, last_refuted_at, first_stale_at, last_stale_at, last_action, last_event_at, flagged)
        VALUES (@node_id, @ns_id, @source_id, @validations, @refutations, @useful, @stale, @recall_count,
          @last_recalled_at, @first_refuted_at, @last_refuted_at, @first_stale_at, @last_stale_at, @last_action, @last_event_at, @flagged)
        ON CONFLICT (node_id) DO UPDATE SET validations = excluded.validations, refutations = excluded.refutations,
          useful = excluded.useful, stale = excluded.stale, recall_count = excluded.recall_count,
          last_recalled_at = excluded.last_recalled_at, first_refuted_at = excluded.first_refuted_at,
          last_refuted_at = excluded.last_refuted_at, first_stale_at = excluded.first_stale_at,
          last_stale_at = excluded.last_stale_at, last_action = excluded.last_action,
          last_event_at = excluded.last_event_at, flagged = excluded.flagged`),
      flagged: db.prepare('SELECT * FROM kn_node_feedback WHERE ns_id = ? AND flagged = 1'),
      countNs: db.prepare('SELECT count(*) AS n FROM kn_feedback_events WHERE ns_id = ?'),
    };
  }

  insertEvent(row: Omit<FeedbackEventRow, 'id'>): void {
    this.#s.insert.run(row);
  }

  event(eventId: string): FeedbackEventRow | undefined {
    return this.#s.byEventId.get(eventId) as FeedbackEventRow | undefined;
  }

  /** Events of a namespace with `tx_time > after`, oldest first. */
  eventsAfter(nsId: number, after: number, limit: number): FeedbackEventRow[] {
    return this.#s.after.all(nsId, after, limit) as FeedbackEventRow[];
  }

  eventsOfNode(nodeId: string): FeedbackEventRow[] {
    return this.#s.ofNode.all(nodeId) as FeedbackEventRow[];
  }

  counters(nodeId: string): NodeFeedbackRow | undefined {
    return this.#s.counters.get(nodeId) as NodeFeedbackRow | undefined;
  }

  saveCounters(row: NodeFeedbackRow): void {
    this.#s.upsert.run(row);
  }

  /** Counters of every node of a namespace that has refutations or stale marks (partial index). */
  flagged(nsId: number): NodeFeedbackRow[] {
    return this.#s.flagged.all(nsId) as NodeFeedbackRow[];
  }

  count(nsId: number): number {
    return (this.#s.countNs.get(nsId) as { n: number }).n;
  }
}
