/**
 * Operation attempts in control.db (`operation_attempts`): one row per claim, closed with its outcome.
 */
import type { Db } from '../../database.js';

/** Closes the open attempt of an operation with `outcome`. */
export function closeAttempt(db: Db, id: string, outcome: string, at: string): void {
  db.prepare('UPDATE operation_attempts SET ended_at = ?, outcome = ? WHERE operation_id = ? AND ended_at IS NULL').run(
    at,
    outcome,
    id,
  );
}

/** One attempt of an operation (who ran it, when, how it ended). */
export interface OperationAttempt {
  readonly operationId: string;
  readonly attempt: number;
  readonly owner: string;
  readonly app: string | null;
  readonly startedAt: string;
  readonly endedAt: string | null;
  readonly outcome: string | null;
}

/** Attempts, in start order; of one operation when `operationId` is given. */
export function listAttempts(db: Db, operationId?: string): OperationAttempt[] {
  const rows = (
    operationId === undefined
      ? db.prepare('SELECT * FROM operation_attempts ORDER BY started_at, rowid').all()
      : db.prepare('SELECT * FROM operation_attempts WHERE operation_id = ? ORDER BY attempt').all(operationId)
  ) as {
    operation_id: string;
    attempt: number;
    owner: string;
    app: string | null;
    started_at: string;
    ended_at: string | null;
    outcome: string | null;
  }[];
  return rows.map((r) => ({
    operationId: r.operation_id,
    attempt: r.attempt,
    owner: r.owner,
    app: r.app,
    startedAt: r.started_at,
    endedAt: r.ended_at,
    outcome: r.outcome,
  }));
}
