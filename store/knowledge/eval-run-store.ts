/**
 * SQL of stored ranking evaluation runs (`kn_eval_runs`, docs/adr/0177): append-only.
 */
import type { Db } from '../database.js';

/** A stored run as read back. */
export interface EvalRunRow {
  readonly id: number;
  readonly run_id: string;
  readonly created_at: number;
  readonly svc_version: string;
  readonly top_k: number;
  readonly label: string | null;
  readonly summary: string;
  readonly report: string;
}

/** Stored ranking evaluation runs of one database. */
export class EvalRunStore {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  insert(row: Omit<EvalRunRow, 'id'>): EvalRunRow {
    return this.#db
      .prepare(
        `INSERT INTO kn_eval_runs (run_id, created_at, svc_version, top_k, label, summary, report)
         VALUES (@run_id, @created_at, @svc_version, @top_k, @label, @summary, @report) RETURNING *`,
      )
      .get(row) as EvalRunRow;
  }

  /** Runs newest first, without their full reports. */
  list(limit: number, offset: number): Omit<EvalRunRow, 'report'>[] {
    return this.#db
      .prepare(
        'SELECT id, run_id, created_at, svc_version, top_k, label, summary FROM kn_eval_runs ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?',
      )
      .all(limit, offset) as Omit<EvalRunRow, 'report'>[];
  }

  count(): number {
    return (this.#db.prepare('SELECT count(*) AS n FROM kn_eval_runs').get() as { n: number }).n;
  }

  get(runId: string): EvalRunRow | undefined {
    return this.#db.prepare('SELECT * FROM kn_eval_runs WHERE run_id = ?').get(runId) as EvalRunRow | undefined;
  }
}
