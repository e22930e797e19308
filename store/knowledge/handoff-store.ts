/**
 * SQL for escalation digest snapshots, handoff delivery receipts and review worker runs, all
 * append-only (a worker run's row is written at start and completed once) (docs/adr/0033, 0034).
 */
import type { Db } from '../database.js';

/** A durable digest snapshot (recorded on request or by a handoff delivery). */
export interface DigestRow {
  readonly id: number;
  readonly event_id: string;
  readonly ns_id: number;
  readonly kind: string;
  readonly owner: string | null;
  readonly escalation_level: string | null;
  readonly escalation_after_hours: number;
  readonly note: string | null;
  readonly digest: string;
  readonly created_at: number;
}

/** One delivery attempt of a handoff payload to a target. */
export interface ReceiptRow {
  readonly id: number;
  readonly ns_id: number;
  readonly digest_event_id: string;
  readonly target_url: string;
  readonly attempt: number;
  readonly success: number;
  readonly status_code: number | null;
  readonly payload_sha256: string;
  readonly response_sha256: string | null;
  readonly error: string | null;
  readonly duration_ms: number;
  readonly tx_time: number;
}

/** A review worker cycle. */
export interface WorkerRunRow {
  readonly id: number;
  readonly run_id: string;
  readonly ns_id: number;
  readonly execute: number;
  readonly evaluator: string;
  readonly item_limit: number;
  readonly allowed_actions: string;
  readonly status: string;
  readonly summary: string;
  readonly started_at: number;
  readonly finished_at: number | null;
}

/** Digests, receipts and worker runs of one database. */
export class HandoffStore {
  readonly #s;

  constructor(db: Db) {
    this.#s = {
      digestInsert:
        db.prepare(`INSERT INTO kn_review_digests (event_id, ns_id, kind, owner, escalation_level, escalation_after_hours, note, digest, created_at)
        VALUES (@event_id, @ns_id, @kind, @owner, @escalation_level, @escalation_after_hours, @note, @digest, @created_at) RETURNING *`),
      digests: db.prepare('SELECT * FROM kn_review_digests WHERE ns_id = ? ORDER BY id DESC LIMIT ? OFFSET ?'),
      digest: db.prepare('SELECT * FROM kn_review_digests WHERE ns_id = ? AND event_id = ?'),
      receiptInsert:
        db.prepare(`INSERT INTO kn_handoff_receipts (ns_id, digest_event_id, target_url, attempt, success, status_code, payload_sha256, response_sha256, error, duration_ms, tx_time)
        VALUES (@ns_id, @digest_event_id, @target_url, @attempt, @success, @status_code, @payload_sha256, @response_sha256, @error, @duration_ms, @tx_time) RETURNING *`),
      receipts: db.prepare('SELECT * FROM kn_handoff_receipts WHERE ns_id = ? ORDER BY id LIMIT ? OFFSET ?'),
      receiptsOf: db.prepare(
        'SELECT * FROM kn_handoff_receipts WHERE ns_id = ? AND digest_event_id = ? AND target_url = ? ORDER BY id',
      ),
      allReceipts: db.prepare('SELECT * FROM kn_handoff_receipts WHERE ns_id = ? ORDER BY id'),
      runInsert:
        db.prepare(`INSERT INTO kn_review_worker_runs (run_id, ns_id, execute, evaluator, item_limit, allowed_actions, status, summary, started_at, finished_at)
        VALUES (@run_id, @ns_id, @execute, @evaluator, @item_limit, @allowed_actions, @status, @summary, @started_at, @finished_at)`),
      runFinish: db.prepare(
        'UPDATE kn_review_worker_runs SET status = ?, summary = ?, finished_at = ? WHERE run_id = ? AND finished_at IS NULL',
      ),
      runs: db.prepare('SELECT * FROM kn_review_worker_runs WHERE ns_id = ? ORDER BY id DESC LIMIT ? OFFSET ?'),
    };
  }

  insertDigest(row: Omit<DigestRow, 'id'>): DigestRow {
    return this.#s.digestInsert.get(row) as DigestRow;
  }

  /** Snapshots, newest first. */
  digests(nsId: number, limit: number, offset: number): DigestRow[] {
    return this.#s.digests.all(nsId, limit, offset) as DigestRow[];
  }

  digest(nsId: number, eventId: string): DigestRow | undefined {
    return this.#s.digest.get(nsId, eventId) as DigestRow | undefined;
  }

  insertReceipt(row: Omit<ReceiptRow, 'id'>): ReceiptRow {
    return this.#s.receiptInsert.get(row) as ReceiptRow;
  }

  receipts(nsId: number, limit: number, offset: number): ReceiptRow[] {
    return this.#s.receipts.all(nsId, limit, offset) as ReceiptRow[];
  }

  /** Every attempt for one digest and target, oldest first. */
  receiptsOf(nsId: number, digestEventId: string, targetUrl: string): ReceiptRow[] {
    return this.#s.receiptsOf.all(nsId, digestEventId, targetUrl) as ReceiptRow[];
  }

  allReceipts(nsId: number): ReceiptRow[] {
    return this.#s.allReceipts.all(nsId) as ReceiptRow[];
  }

  insertRun(row: Omit<WorkerRunRow, 'id'>): void {
    this.#s.runInsert.run(row);
  }

  finishRun(runId: string, status: string, summary: string, finishedAt: number): void {
    this.#s.runFinish.run(status, summary, finishedAt, runId);
  }

  /** Runs, newest first. */
  runs(nsId: number, limit: number, offset: number): WorkerRunRow[] {
    return this.#s.runs.all(nsId, limit, offset) as WorkerRunRow[];
  }
}
