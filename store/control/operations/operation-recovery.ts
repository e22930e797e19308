/**
 * Crash recovery of running operations whose worker is gone: each is requeued or failed as
 * `planRecovery` decides, and its open attempt is closed as interrupted.
 */
import {
  planRecovery,
  type Operation,
  type OperationKind,
  type RecoveryDecision,
} from '../../../domain/operations/index.js';
import type { Db } from '../../database.js';
import { closeAttempt } from './operation-attempts.js';
import { fromRaw, getOperation, type RawOperation } from './operation-rows.js';

/** One recovered operation and what was done. */
export interface RecoveredOperation {
  readonly operation: Operation;
  readonly decision: RecoveryDecision;
}

/**
 * Recovers running operations whose worker is gone: at start every running row not owned by
 * `owner` (one control plane serves a data folder), in the sweeper only rows whose lease expired.
 * With `kinds`, only operations of those kinds (the API recovers app operations, the host agent
 * the platform lane's).
 */
export function recoverOperations(
  db: Db,
  options: { owner: string; mode: 'startup' | 'expired'; kinds?: readonly OperationKind[] },
  now = new Date(),
): RecoveredOperation[] {
  const at = now.toISOString();
  const kinds = options.kinds === undefined ? undefined : new Set<string>(options.kinds);
  // IMMEDIATE: it reads, then writes, and control.db has writers in two processes (the API and the host
  // agent); a deferred transaction fails at once with SQLITE_BUSY when the other commits in between.
  return db
    .transaction(() => {
      const rows = (
        (options.mode === 'startup'
          ? db
              .prepare("SELECT * FROM operations WHERE status = 'running' AND (lock_owner IS NULL OR lock_owner != ?)")
              .all(options.owner)
          : db
              .prepare("SELECT * FROM operations WHERE status = 'running' AND lock_expires_at < ?")
              .all(at)) as RawOperation[]
      ).filter((raw) => kinds === undefined || kinds.has(raw.kind));
      const out: RecoveredOperation[] = [];
      for (const raw of rows) {
        const op = fromRaw(raw);
        const decision = planRecovery(op);
        if (decision.action === 'requeue') {
          db.prepare(
            "UPDATE operations SET status = 'queued', last_error = ?, lock_owner = NULL, lock_expires_at = NULL, next_attempt_at = ?, updated_at = ? WHERE id = ?",
          ).run(decision.reason, at, at, op.id);
          closeAttempt(db, op.id, 'interrupted-requeued', at);
        } else {
          db.prepare(
            "UPDATE operations SET status = 'failed', last_error = ?, lock_owner = NULL, lock_expires_at = NULL, finished_at = ?, updated_at = ? WHERE id = ?",
          ).run(decision.reason, at, at, op.id);
          closeAttempt(db, op.id, 'interrupted-failed', at);
        }
        out.push({ operation: getOperation(db, op.id)!, decision });
      }
      return out;
    })
    .immediate();
}
