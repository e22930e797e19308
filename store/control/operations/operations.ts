/**
 * Durable operation rows in control.db: enqueue, listing, stage checkpoints, completion, retry and
 * cancellation. Claims under a lease (operation-claims.ts), crash recovery (operation-recovery.ts) and
 * attempts (operation-attempts.ts) have files of their own, re-exported here.
 */
import { randomBytes } from 'node:crypto';
import type { Operation, OperationKind, OperationStatus } from '../../../domain/operations/index.js';
import type { Db } from '../../database.js';
import { closeAttempt } from './operation-attempts.js';
import { fromRaw, getOperation, type RawOperation } from './operation-rows.js';

// The rest of the operation store, in files of their own; re-exported here for its many importers.
export { getOperation } from './operation-rows.js';
export {
  claimNextOperation,
  claimOperations,
  renewLease,
  renewLeases,
  upgradeHolds,
  type ClaimOptions,
  type DependencyFailure,
} from './operation-claims.js';
export { recoverOperations, type RecoveredOperation } from './operation-recovery.js';
export { listAttempts, type OperationAttempt } from './operation-attempts.js';

/** A new operation id: `op_` and 20 hex characters. */
export function newOperationId(): string {
  return `op_${randomBytes(10).toString('hex')}`;
}

/** What to enqueue. */
export interface EnqueueInput {
  readonly id?: string;
  readonly kind: OperationKind;
  readonly app: string | null;
  readonly ref?: string | null;
  readonly sagaId?: string | null;
  readonly payload?: Readonly<Record<string, unknown>>;
  /** @default 3 */
  readonly maxAttempts?: number;
  readonly dependsOn?: string | null;
}

/** Queues an operation; it is claimable at once. */
export function enqueueOperation(db: Db, input: EnqueueInput, now = new Date()): Operation {
  const id = input.id ?? newOperationId();
  const at = now.toISOString();
  db.prepare(
    `INSERT INTO operations (id, kind, status, app, ref, saga_id, payload_json, max_attempts, next_attempt_at, depends_on, created_at, updated_at)
     VALUES (?, ?, 'queued', ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    id,
    input.kind,
    input.app,
    input.ref ?? null,
    input.sagaId ?? null,
    JSON.stringify(input.payload ?? {}),
    input.maxAttempts ?? 3,
    at,
    input.dependsOn ?? null,
    at,
    at,
  );
  return getOperation(db, id)!;
}

/** Filter of `listOperations`. */
export interface OperationFilter {
  readonly status?: readonly OperationStatus[];
  readonly app?: string;
  readonly sagaId?: string;
  /** @default 100 */
  readonly limit?: number;
  readonly offset?: number;
}

/** Operations, oldest first. */
export function listOperations(db: Db, filter: OperationFilter = {}): Operation[] {
  const where: string[] = [];
  const args: unknown[] = [];
  if (filter.status && filter.status.length > 0) {
    where.push(`status IN (${filter.status.map(() => '?').join(', ')})`);
    args.push(...filter.status);
  }
  if (filter.app !== undefined) {
    where.push('app = ?');
    args.push(filter.app);
  }
  if (filter.sagaId !== undefined) {
    where.push('saga_id = ?');
    args.push(filter.sagaId);
  }
  const sql = `SELECT * FROM operations ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY rowid LIMIT ? OFFSET ?`;
  return (db.prepare(sql).all(...args, filter.limit ?? 100, filter.offset ?? 0) as RawOperation[]).map(fromRaw);
}

/** Counts by status. */
export function countOperations(db: Db): Record<OperationStatus, number> {
  const out: Record<OperationStatus, number> = { queued: 0, running: 0, succeeded: 0, failed: 0, cancelled: 0 };
  for (const row of db.prepare('SELECT status, COUNT(*) AS n FROM operations GROUP BY status').all() as {
    status: OperationStatus;
    n: number;
  }[])
    out[row.status] = row.n;
  return out;
}

/** Records the stage the running attempt entered; `mutable` marks it as having changed the runtime or data. */
export function recordStage(
  db: Db,
  id: string,
  owner: string,
  stage: string,
  mutable: boolean,
  now = new Date(),
): boolean {
  return (
    db
      .prepare(
        "UPDATE operations SET stage = ?, mutated = MAX(mutated, ?), updated_at = ? WHERE id = ? AND lock_owner = ? AND status = 'running'",
      )
      .run(stage, mutable ? 1 : 0, now.toISOString(), id, owner).changes > 0
  );
}

/** Ends a running attempt as succeeded or failed (only by its owner); false when it was not the owner's. */
export function finishOperation(
  db: Db,
  id: string,
  owner: string,
  outcome: { status: 'succeeded' | 'failed'; result?: Readonly<Record<string, unknown>>; error?: string },
  now = new Date(),
): boolean {
  const at = now.toISOString();
  return db.transaction(() => {
    const changed = db
      .prepare(
        `UPDATE operations SET status = ?, result_json = ?, last_error = COALESCE(?, last_error), lock_owner = NULL, lock_expires_at = NULL,
           finished_at = ?, updated_at = ? WHERE id = ? AND lock_owner = ? AND status = 'running'`,
      )
      .run(
        outcome.status,
        outcome.result ? JSON.stringify(outcome.result) : null,
        outcome.error ?? null,
        at,
        at,
        id,
        owner,
      ).changes;
    if (changed > 0) closeAttempt(db, id, outcome.status, at);
    return changed > 0;
  })();
}

/** Ends several running attempts in one transaction (group commit); returns the ids that were this owner's. */
export function finishOperations(
  db: Db,
  owner: string,
  outcomes: readonly {
    id: string;
    status: 'succeeded' | 'failed';
    result?: Readonly<Record<string, unknown>>;
    error?: string;
  }[],
  now = new Date(),
): string[] {
  return db.transaction(() => outcomes.filter((o) => finishOperation(db, o.id, owner, o, now)).map((o) => o.id))();
}

/** Puts a failed attempt back in the queue after `delayMs`, or fails it when no attempts are left. */
export function retryOperation(
  db: Db,
  id: string,
  owner: string,
  error: string,
  delayMs: number,
  now = new Date(),
): 'requeued' | 'failed' | 'not_owner' {
  const at = now.toISOString();
  // IMMEDIATE: it reads, then writes, and control.db has writers in two processes (the API and the host
  // agent); a deferred transaction fails at once with SQLITE_BUSY when the other commits in between.
  return db
    .transaction(() => {
      const op = getOperation(db, id);
      if (!op || op.status !== 'running' || op.lockOwner !== owner) return 'not_owner';
      if (op.attempts >= op.maxAttempts) {
        db.prepare(
          "UPDATE operations SET status = 'failed', last_error = ?, lock_owner = NULL, lock_expires_at = NULL, finished_at = ?, updated_at = ? WHERE id = ?",
        ).run(error, at, at, id);
        closeAttempt(db, id, 'failed', at);
        return 'failed';
      }
      const next = new Date(now.getTime() + delayMs).toISOString();
      db.prepare(
        "UPDATE operations SET status = 'queued', last_error = ?, lock_owner = NULL, lock_expires_at = NULL, next_attempt_at = ?, updated_at = ? WHERE id = ?",
      ).run(error, next, at, id);
      closeAttempt(db, id, 'requeued', at);
      return 'requeued';
    })
    .immediate();
}

/** Cancels a queued operation; otherwise reports the status it found (or that it does not exist). */
export function cancelQueuedOperation(
  db: Db,
  id: string,
  reason: string,
  now = new Date(),
): { cancelled: true } | { cancelled: false; status: OperationStatus | 'not_found' } {
  const at = now.toISOString();
  const changed = db
    .prepare(
      "UPDATE operations SET status = 'cancelled', last_error = ?, finished_at = ?, updated_at = ? WHERE id = ? AND status = 'queued'",
    )
    .run(reason, at, at, id).changes;
  if (changed > 0) return { cancelled: true };
  return { cancelled: false, status: getOperation(db, id)?.status ?? 'not_found' };
}
