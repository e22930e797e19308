/**
 * SQL of knowledge acquisition: the live-graph snapshot gap detection reads, append-only connector
 * receipts, and evidence candidates staged outside the graph (decided once) (docs/adr/0035).
 */
import type { Db } from '../database.js';
import { OPEN_TIME } from './rows.js';

/** A live node version as gap detection reads it. */
export interface GapVersionRow {
  readonly node_id: string;
  readonly content: string;
  readonly labels: string;
  readonly confidence: number;
  readonly valid_from: number;
  readonly claim_key: string | null;
  readonly claim_value: string | null;
}

/** One connector execution attempt (append-only). */
export interface AcquisitionReceiptRow {
  readonly id: number;
  readonly receipt_id: string;
  readonly ns_id: number;
  readonly task_id: string;
  readonly task_type: string;
  readonly idempotency_key: string;
  readonly attempt: number;
  readonly connector_url: string;
  readonly outcome: string;
  readonly retry_class: string;
  readonly status_code: number | null;
  readonly error: string | null;
  readonly evidence_count: number;
  readonly review_before_admission: number;
  readonly request_sha256: string;
  readonly response_sha256: string | null;
  readonly duration_ms: number;
  readonly tx_time: number;
}

/** Acquired evidence outside the graph: staged, then approved (admitted) or rejected once. */
export interface AcquisitionCandidateRow {
  readonly id: number;
  readonly candidate_id: string;
  readonly ns_id: number;
  readonly task_id: string;
  readonly task_type: string;
  readonly receipt_id: string;
  readonly idempotency_key: string;
  readonly review_required: number;
  readonly content: string;
  readonly source_id: string;
  readonly labels: string;
  readonly properties: string;
  readonly confidence: number | null;
  readonly evidence_url: string | null;
  readonly status: string;
  readonly node_id: string | null;
  readonly actor: string | null;
  readonly note: string | null;
  readonly decided_at: number | null;
  readonly created_at: number;
}

/** Acquisition rows of one database. */
export class AcquisitionStore {
  readonly #db: Db;
  readonly #s;

  constructor(db: Db) {
    this.#db = db;
    this.#s = {
      live: db.prepare(`SELECT node_id, content, labels, confidence, valid_from, claim_key, claim_value FROM kn_versions
        WHERE ns_id = @ns AND tx_to = ${OPEN_TIME} AND retracted = 0 AND valid_from <= @now AND valid_to > @now ORDER BY node_id`),
      edges: db.prepare(`SELECT from_id, to_id FROM kn_edges WHERE ns_id = ? AND tx_to = ${OPEN_TIME}`),
      feedback: db.prepare('SELECT node_id, refutations, stale FROM kn_node_feedback WHERE ns_id = ?'),
      receiptInsert:
        db.prepare(`INSERT INTO kn_acquisition_receipts (receipt_id, ns_id, task_id, task_type, idempotency_key, attempt, connector_url, outcome, retry_class,
          status_code, error, evidence_count, review_before_admission, request_sha256, response_sha256, duration_ms, tx_time)
        VALUES (@receipt_id, @ns_id, @task_id, @task_type, @idempotency_key, @attempt, @connector_url, @outcome, @retry_class,
          @status_code, @error, @evidence_count, @review_before_admission, @request_sha256, @response_sha256, @duration_ms, @tx_time) RETURNING *`),
      receipts: db.prepare('SELECT * FROM kn_acquisition_receipts WHERE ns_id = ? ORDER BY id LIMIT ? OFFSET ?'),
      allReceipts: db.prepare('SELECT * FROM kn_acquisition_receipts WHERE ns_id = ? ORDER BY id'),
      attempts: db.prepare(
        "SELECT count(*) AS n, max(CASE WHEN outcome = 'succeeded' THEN id END) AS ok FROM kn_acquisition_receipts WHERE ns_id = ? AND idempotency_key = ? AND connector_url = ?",
      ),
      succeeded: db.prepare(
        "SELECT * FROM kn_acquisition_receipts WHERE ns_id = ? AND idempotency_key = ? AND outcome = 'succeeded' ORDER BY id DESC LIMIT 1",
      ),
      candidateInsert:
        db.prepare(`INSERT OR IGNORE INTO kn_acquisition_candidates (candidate_id, ns_id, task_id, task_type, receipt_id, idempotency_key, review_required, content,
          source_id, labels, properties, confidence, evidence_url, status, node_id, actor, note, decided_at, created_at)
        VALUES (@candidate_id, @ns_id, @task_id, @task_type, @receipt_id, @idempotency_key, @review_required, @content,
          @source_id, @labels, @properties, @confidence, @evidence_url, @status, @node_id, @actor, @note, @decided_at, @created_at)`),
      candidate: db.prepare('SELECT * FROM kn_acquisition_candidates WHERE ns_id = ? AND candidate_id = ?'),
      candidatesOfKey: db.prepare(
        'SELECT * FROM kn_acquisition_candidates WHERE ns_id = ? AND idempotency_key = ? ORDER BY id',
      ),
      decide:
        db.prepare(`UPDATE kn_acquisition_candidates SET status = @status, node_id = @node_id, actor = @actor, note = @note, decided_at = @decided_at
        WHERE ns_id = @ns_id AND candidate_id = @candidate_id AND status = 'staged'`),
    };
  }

  /** Live versions valid at `now`, by node id. */
  liveVersions(nsId: number, now: number): GapVersionRow[] {
    return this.#s.live.all({ ns: nsId, now }) as GapVersionRow[];
  }

  /** Edges open in transaction time. */
  edges(nsId: number): { from_id: string; to_id: string }[] {
    return this.#s.edges.all(nsId) as { from_id: string; to_id: string }[];
  }

  /** Refutation and stale counters per node. */
  feedbackCounts(nsId: number): { node_id: string; refutations: number; stale: number }[] {
    return this.#s.feedback.all(nsId) as { node_id: string; refutations: number; stale: number }[];
  }

  insertReceipt(row: Omit<AcquisitionReceiptRow, 'id'>): AcquisitionReceiptRow {
    return this.#s.receiptInsert.get(row) as AcquisitionReceiptRow;
  }

  /** Receipts, oldest first. */
  receipts(nsId: number, limit: number, offset: number): AcquisitionReceiptRow[] {
    return this.#s.receipts.all(nsId, limit, offset) as AcquisitionReceiptRow[];
  }

  allReceipts(nsId: number): AcquisitionReceiptRow[] {
    return this.#s.allReceipts.all(nsId) as AcquisitionReceiptRow[];
  }

  /** Attempts so far for an idempotency key at a connector. */
  attemptCount(nsId: number, idempotencyKey: string, connectorUrl: string): number {
    return (this.#s.attempts.get(nsId, idempotencyKey, connectorUrl) as { n: number }).n;
  }

  /** The latest successful attempt of an idempotency key at any connector. */
  succeeded(nsId: number, idempotencyKey: string): AcquisitionReceiptRow | undefined {
    return this.#s.succeeded.get(nsId, idempotencyKey) as AcquisitionReceiptRow | undefined;
  }

  /** Stages a candidate; false when one with its id exists already. */
  insertCandidate(row: Omit<AcquisitionCandidateRow, 'id'>): boolean {
    return this.#s.candidateInsert.run(row).changes === 1;
  }

  candidate(nsId: number, candidateId: string): AcquisitionCandidateRow | undefined {
    return this.#s.candidate.get(nsId, candidateId) as AcquisitionCandidateRow | undefined;
  }

  /** Candidates of one idempotency key, oldest first. */
  candidatesOf(nsId: number, idempotencyKey: string): AcquisitionCandidateRow[] {
    return this.#s.candidatesOfKey.all(nsId, idempotencyKey) as AcquisitionCandidateRow[];
  }

  /** Candidates filtered by status and review flag, oldest first. */
  candidates(
    nsId: number,
    filter: { status?: string | undefined; reviewRequired?: boolean | undefined },
    limit: number,
    offset: number,
  ): AcquisitionCandidateRow[] {
    const where = ['ns_id = ?'];
    const args: (string | number)[] = [nsId];
    if (filter.status !== undefined) {
      where.push('status = ?');
      args.push(filter.status);
    }
    if (filter.reviewRequired !== undefined) {
      where.push('review_required = ?');
      args.push(filter.reviewRequired ? 1 : 0);
    }
    return this.#db
      .prepare(`SELECT * FROM kn_acquisition_candidates WHERE ${where.join(' AND ')} ORDER BY id LIMIT ? OFFSET ?`)
      .all(...args, limit, offset) as AcquisitionCandidateRow[];
  }

  /** Decides a staged candidate once; false when it was already decided. */
  decide(row: {
    ns_id: number;
    candidate_id: string;
    status: string;
    node_id: string | null;
    actor: string | null;
    note: string | null;
    decided_at: number;
  }): boolean {
    return this.#s.decide.run(row).changes === 1;
  }
}
