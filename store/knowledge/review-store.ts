/**
 * SQL for the review queue's inputs (live low-confidence versions, live contradicting claims,
 * source trust runs) and its append-only decisions (docs/adr/0031, 0032).
 */
import type { Db } from '../database.js';
import { OPEN_TIME } from './rows.js';

/** One review decision row (append-only; the latest per review id is effective). */
export interface ReviewDecisionRow {
  readonly id: number;
  readonly ns_id: number;
  readonly review_id: string;
  readonly status: string;
  readonly owner: string | null;
  readonly decision: string | null;
  readonly note: string | null;
  readonly recheck_at: number | null;
  readonly actor: string | null;
  readonly tx_time: number;
}

/** A live current version's review-relevant columns. */
export interface LiveVersionBrief {
  readonly node_id: string;
  readonly vid: number;
  readonly confidence: number;
  readonly tx_from: number;
  readonly claim_key: string | null;
  readonly claim_value: string | null;
  /** The first (alphabetical) supporting source. */
  readonly source_id: string | null;
  readonly valid_to: number;
}

/** Feedback counters of a flagged node with its live confidence (null when it has no live version). */
export interface FlaggedNodeRow {
  readonly node_id: string;
  readonly source_id: string;
  readonly refutations: number;
  readonly stale: number;
  readonly first_refuted_at: number | null;
  readonly last_refuted_at: number | null;
  readonly first_stale_at: number | null;
  readonly last_stale_at: number | null;
  readonly confidence: number | null;
}

/** Text and support of a version, read only for the page of items returned. */
export interface VersionText {
  readonly node_id: string;
  readonly vid: number;
  readonly content: string;
  readonly confidence: number;
  readonly tx_from: number;
}

/** Review queue inputs and decisions of one database. */
export class ReviewStore {
  readonly #db: Db;
  readonly #s;

  constructor(db: Db) {
    this.#db = db;
    this.#s = {
      lowConfidence:
        db.prepare(`SELECT node_id, vid, confidence, tx_from, claim_key, claim_value, valid_to, (SELECT min(source_id) FROM kn_support s WHERE s.vid = v.vid) AS source_id FROM kn_versions v INDEXED BY kn_versions_live_confidence
        WHERE ns_id = @ns AND confidence < @threshold AND tx_to = ${OPEN_TIME} AND retracted = 0 AND valid_to > @now AND valid_from <= @now`),
      contradictions:
        db.prepare(`SELECT node_id, vid, confidence, tx_from, claim_key, claim_value, valid_to, (SELECT min(source_id) FROM kn_support s WHERE s.vid = v.vid) AS source_id
        FROM kn_versions v INDEXED BY kn_versions_live_claims
        WHERE ns_id = @ns AND claim_key IS NOT NULL AND tx_to = ${OPEN_TIME} AND retracted = 0 AND valid_to > @now AND valid_from <= @now AND claim_key IN (
          SELECT claim_key FROM kn_versions INDEXED BY kn_versions_live_claims
          WHERE ns_id = @ns AND claim_key IS NOT NULL AND tx_to = ${OPEN_TIME} AND retracted = 0 AND valid_to > @now AND valid_from <= @now
          GROUP BY claim_key HAVING count(DISTINCT claim_value) > 1)`),
      liveOfNode:
        db.prepare(`SELECT node_id, vid, confidence, tx_from, claim_key, claim_value, valid_to, (SELECT min(source_id) FROM kn_support s WHERE s.vid = v.vid) AS source_id
        FROM kn_versions v WHERE node_id = @node AND tx_to = ${OPEN_TIME} AND retracted = 0 AND valid_to > @now AND valid_from <= @now ORDER BY valid_from DESC LIMIT 1`),
      claimGroup:
        db.prepare(`SELECT node_id, vid, confidence, tx_from, claim_key, claim_value, valid_to, (SELECT min(source_id) FROM kn_support s WHERE s.vid = v.vid) AS source_id
        FROM kn_versions v INDEXED BY kn_versions_live_claims
        WHERE ns_id = @ns AND claim_key = @key AND tx_to = ${OPEN_TIME} AND retracted = 0 AND valid_to > @now AND valid_from <= @now`),
      claimKeyOf: db.prepare('SELECT claim_key FROM kn_versions WHERE node_id = ? ORDER BY vid DESC LIMIT 1'),
      nextValidTo: db.prepare(
        `SELECT min(valid_to) AS t FROM kn_versions INDEXED BY kn_versions_current_valid_to WHERE ns_id = ? AND tx_to = ${OPEN_TIME} AND valid_to > ?`,
      ),
      nextValidFrom: db.prepare(
        `SELECT min(valid_from) AS t FROM kn_versions INDEXED BY kn_versions_current_valid_from WHERE ns_id = ? AND tx_to = ${OPEN_TIME} AND valid_from > ?`,
      ),
      changedNodes: db.prepare('SELECT DISTINCT node_id FROM kn_versions WHERE vid > ? AND ns_id = ?'),
      feedbackNodes: db.prepare('SELECT DISTINCT node_id FROM kn_feedback_events WHERE id > ? AND ns_id = ?'),
      changedSources: db.prepare('SELECT DISTINCT source_id FROM kn_source_trust WHERE id > ? AND ns_id = ?'),
      counters: db.prepare(
        'SELECT node_id, source_id, refutations, stale, first_refuted_at, last_refuted_at, first_stale_at, last_stale_at, NULL AS confidence FROM kn_node_feedback WHERE node_id = ? AND flagged = 1',
      ),
      flagged:
        db.prepare(`SELECT f.node_id, f.source_id, f.refutations, f.stale, f.first_refuted_at, f.last_refuted_at, f.first_stale_at, f.last_stale_at,
          (SELECT v.confidence FROM kn_versions v WHERE v.node_id = f.node_id AND v.tx_to = ${OPEN_TIME} AND v.retracted = 0 AND v.valid_to > @now AND v.valid_from <= @now ORDER BY v.valid_from DESC LIMIT 1) AS confidence
        FROM kn_node_feedback f INDEXED BY kn_node_feedback_flagged WHERE f.ns_id = @ns AND f.flagged = 1`),
      generation: db.prepare(
        `SELECT (SELECT max(vid) FROM kn_versions) AS v, (SELECT max(id) FROM kn_source_trust) AS t, (SELECT max(id) FROM kn_feedback_events) AS f`,
      ),
      decisionInsert:
        db.prepare(`INSERT INTO kn_review_decisions (ns_id, review_id, status, owner, decision, note, recheck_at, actor, tx_time)
        VALUES (@ns_id, @review_id, @status, @owner, @decision, @note, @recheck_at, @actor, @tx_time) RETURNING *`),
      latestDecisions: db.prepare(`SELECT d.* FROM kn_review_decisions d JOIN (
          SELECT max(id) AS id FROM kn_review_decisions WHERE ns_id = ? GROUP BY review_id) l ON l.id = d.id`),
      history: db.prepare('SELECT * FROM kn_review_decisions WHERE ns_id = ? ORDER BY id LIMIT ? OFFSET ?'),
      historyOf: db.prepare('SELECT * FROM kn_review_decisions WHERE ns_id = ? AND review_id = ? ORDER BY id'),
      sourcesWithFeedback: db.prepare(
        `SELECT DISTINCT source_id FROM kn_source_trust WHERE ns_id = ? AND action IN ('validate', 'refute')`,
      ),
      trustOf: db.prepare(
        'SELECT id, node_id, action, credibility, previous, tx_time FROM kn_source_trust WHERE ns_id = ? AND source_id = ? ORDER BY id',
      ),
    };
  }

  /** Live current versions with confidence below `threshold` valid at `now`. */
  lowConfidence(nsId: number, threshold: number, now: number): LiveVersionBrief[] {
    return this.#s.lowConfidence.all({ ns: nsId, threshold, now }) as LiveVersionBrief[];
  }

  /** Flagged nodes (refuted or stale) of a namespace with the confidence of their version valid at `now`. */
  flagged(nsId: number, now: number): FlaggedNodeRow[] {
    return this.#s.flagged.all({ ns: nsId, now }) as FlaggedNodeRow[];
  }

  /**
   * A token that changes whenever a version, trust point or feedback event is added (every change
   * to what the queue derives from adds one of them); three rowid maxima, so O(1).
   */
  generation(): string {
    const g = this.#s.generation.get() as { v: number | null; t: number | null; f: number | null };
    return `${g.v ?? 0}:${g.t ?? 0}:${g.f ?? 0}`;
  }

  /** Live versions valid at `now` whose claim key has more than one value. */
  contradictions(nsId: number, now: number): LiveVersionBrief[] {
    return this.#s.contradictions.all({ ns: nsId, now }) as LiveVersionBrief[];
  }

  /** The live (current, not retracted, still valid at `now`) version of a node with the latest valid_from. */
  liveOfNode(nodeId: string, now: number): LiveVersionBrief | undefined {
    return this.#s.liveOfNode.get({ node: nodeId, now }) as LiveVersionBrief | undefined;
  }

  /** Live current versions under one claim key. */
  claimGroup(nsId: number, claimKey: string, now: number): LiveVersionBrief[] {
    return this.#s.claimGroup.all({ ns: nsId, key: claimKey, now }) as LiveVersionBrief[];
  }

  /** The next time after `now` at which a current version of the namespace starts or stops being valid. */
  nextValidityBoundary(nsId: number, now: number): number {
    const to = (this.#s.nextValidTo.get(nsId, now) as { t: number | null }).t ?? OPEN_TIME;
    const from = (this.#s.nextValidFrom.get(nsId, now) as { t: number | null }).t ?? OPEN_TIME;
    return Math.min(to, from);
  }

  /** The claim key of a node (fixed at write time), or null. */
  claimKeyOf(nodeId: string): string | null {
    return (this.#s.claimKeyOf.get(nodeId) as { claim_key: string | null } | undefined)?.claim_key ?? null;
  }

  /** Feedback counters of one node when it is flagged (confidence left null). */
  flaggedNode(nodeId: string): FlaggedNodeRow | undefined {
    return this.#s.counters.get(nodeId) as FlaggedNodeRow | undefined;
  }

  /**
   * What changed in a namespace after the given cursors (a version id, a feedback event id, a trust
   * point id): the nodes with new versions or feedback, and the sources with new trust points.
   */
  changesSince(
    nsId: number,
    vid: number,
    feedbackId: number,
    trustId: number,
  ): { nodes: Set<string>; sources: string[] } {
    const nodes = new Set<string>();
    for (const r of this.#s.changedNodes.all(vid, nsId) as { node_id: string }[]) nodes.add(r.node_id);
    for (const r of this.#s.feedbackNodes.all(feedbackId, nsId) as { node_id: string }[]) nodes.add(r.node_id);
    return {
      nodes,
      sources: (this.#s.changedSources.all(trustId, nsId) as { source_id: string }[]).map((r) => r.source_id),
    };
  }

  /** The cursors: the highest version id, feedback event id and trust point id of the database. */
  cursors(): { vid: number; feedbackId: number; trustId: number } {
    const g = this.#s.generation.get() as { v: number | null; t: number | null; f: number | null };
    return { vid: g.v ?? 0, feedbackId: g.f ?? 0, trustId: g.t ?? 0 };
  }

  /** Content of the current versions of several nodes. */
  texts(nodeIds: readonly string[]): Map<string, VersionText> {
    const out = new Map<string, VersionText>();
    for (let i = 0; i < nodeIds.length; i += 500) {
      const chunk = nodeIds.slice(i, i + 500);
      const rows = this.#db
        .prepare(
          `SELECT node_id, vid, content, confidence, tx_from FROM kn_versions WHERE tx_to = ${OPEN_TIME} AND node_id IN (${chunk.map(() => '?').join(',')}) ORDER BY valid_from`,
        )
        .all(...chunk) as VersionText[];
      for (const row of rows) out.set(row.node_id, row);
    }
    return out;
  }

  insertDecision(row: Omit<ReviewDecisionRow, 'id'>): ReviewDecisionRow {
    return this.#s.decisionInsert.get(row) as ReviewDecisionRow;
  }

  /** The latest decision of every review id of a namespace. */
  latestDecisions(nsId: number): Map<string, ReviewDecisionRow> {
    const rows = this.#s.latestDecisions.all(nsId) as ReviewDecisionRow[];
    return new Map(rows.map((r) => [r.review_id, r]));
  }

  /** Decision history of a namespace, oldest first. */
  decisions(nsId: number, limit: number, offset: number): ReviewDecisionRow[] {
    return this.#s.history.all(nsId, limit, offset) as ReviewDecisionRow[];
  }

  decisionsOf(nsId: number, reviewId: string): ReviewDecisionRow[] {
    return this.#s.historyOf.all(nsId, reviewId) as ReviewDecisionRow[];
  }

  /** Sources whose trust timeline holds feedback points. */
  sourcesWithFeedback(nsId: number): string[] {
    return (this.#s.sourcesWithFeedback.all(nsId) as { source_id: string }[]).map((r) => r.source_id);
  }

  /** The trust timeline of a source, oldest first. */
  trustOf(
    nsId: number,
    sourceId: string,
  ): {
    id: number;
    node_id: string | null;
    action: string;
    credibility: number;
    previous: number | null;
    tx_time: number;
  }[] {
    return this.#s.trustOf.all(nsId, sourceId) as {
      id: number;
      node_id: string | null;
      action: string;
      credibility: number;
      previous: number | null;
      tx_time: number;
    }[];
  }
}
