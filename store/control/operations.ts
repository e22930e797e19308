/**
 * Durable operation rows in control.db: enqueue, claim under a lease with the per-app lock,
 * heartbeat, stage checkpoints, completion, cancellation and crash recovery.
 */
import { randomBytes } from 'node:crypto';
import {
  planRecovery,
  type Operation,
  type OperationKind,
  type OperationStatus,
  type RecoveryDecision,
} from '../../domain/operations/index.js';
import type { Db } from '../database.js';

interface RawOperation {
  id: string;
  kind: string;
  status: string;
  app: string | null;
  ref: string | null;
  saga_id: string | null;
  payload_json: string;
  result_json: string | null;
  attempts: number;
  max_attempts: number;
  lock_owner: string | null;
  lock_expires_at: string | null;
  next_attempt_at: string;
  last_error: string | null;
  stage: string | null;
  mutated: number;
  depends_on: string | null;
  created_at: string;
  updated_at: string;
  started_at: string | null;
  finished_at: string | null;
}

function fromRaw(raw: RawOperation): Operation {
  return {
    id: raw.id,
    kind: raw.kind as OperationKind,
    status: raw.status as OperationStatus,
    app: raw.app,
    ref: raw.ref,
    sagaId: raw.saga_id,
    payload: JSON.parse(raw.payload_json) as Record<string, unknown>,
    result: raw.result_json === null ? null : (JSON.parse(raw.result_json) as Record<string, unknown>),
    attempts: raw.attempts,
    maxAttempts: raw.max_attempts,
    lockOwner: raw.lock_owner,
    lockExpiresAt: raw.lock_expires_at,
    nextAttemptAt: raw.next_attempt_at,
    lastError: raw.last_error,
    stage: raw.stage,
    mutated: raw.mutated === 1,
    dependsOn: raw.depends_on,
    createdAt: raw.created_at,
    updatedAt: raw.updated_at,
    startedAt: raw.started_at,
    finishedAt: raw.finished_at,
  };
}

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

/** One operation, or undefined. */
export function getOperation(db: Db, id: string): Operation | undefined {
  const raw = db.prepare('SELECT * FROM operations WHERE id = ?').get(id) as RawOperation | undefined;
  return raw && fromRaw(raw);
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

/** Options of a claim. */
export interface ClaimOptions {
  readonly owner: string;
  readonly leaseMs: number;
  /** Only kinds the worker has handlers for. */
  readonly kinds: readonly OperationKind[];
  /**
   * While a `platform.upgrade` operation runs in one of these stages, no app operation is claimed
   * (they stay queued and run on the API that is up afterwards). @default none
   */
  readonly holdStages?: readonly string[];
}

/** An operation that could not be claimed because what it waited on failed. */
export interface DependencyFailure {
  readonly operation: Operation;
  readonly reason: string;
}

/**
 * Claims up to `limit` runnable operations in one transaction: queues are FIFO per app, an app
 * with a running operation is passed over (the row stays queued and no attempt is consumed), and
 * an operation waiting on another one runs only after that one succeeded (it fails when that one
 * failed or was cancelled).
 */
export function claimOperations(
  db: Db,
  options: ClaimOptions & { limit: number },
  now = new Date(),
): { claimed: Operation[]; dependencyFailures: DependencyFailure[] } {
  const at = now.toISOString();
  const dependencyFailures: DependencyFailure[] = [];
  const kinds = new Set<string>(options.kinds);
  const claim = db.transaction((): Operation[] => {
    const out: Operation[] = [];
    if (options.limit <= 0) return out;
    const busy = new Set(
      (
        db.prepare("SELECT app FROM operations WHERE status = 'running' AND app IS NOT NULL").all() as { app: string }[]
      ).map((r) => r.app),
    );
    const held =
      options.holdStages !== undefined && options.holdStages.length > 0 && upgradeHolds(db, options.holdStages);
    const seen = new Set<string>();
    const queued = db
      .prepare(
        "SELECT id, kind, app, attempts, next_attempt_at, depends_on FROM operations WHERE status = 'queued' ORDER BY rowid LIMIT 1000",
      )
      .all() as Pick<RawOperation, 'id' | 'kind' | 'app' | 'attempts' | 'next_attempt_at' | 'depends_on'>[];
    const expires = new Date(now.getTime() + options.leaseMs).toISOString();
    const take = db.prepare(
      `UPDATE operations SET status = 'running', attempts = attempts + 1, lock_owner = ?, lock_expires_at = ?, stage = NULL, mutated = 0,
         started_at = COALESCE(started_at, ?), updated_at = ? WHERE id = ? AND status = 'queued'`,
    );
    const attempt = db.prepare(
      'INSERT INTO operation_attempts (operation_id, attempt, owner, app, started_at) VALUES (?, ?, ?, ?, ?)',
    );
    for (const raw of queued) {
      const lane = raw.app ?? `platform:${raw.kind}`;
      if (seen.has(lane)) continue;
      seen.add(lane);
      if (raw.app !== null && (busy.has(raw.app) || held)) continue;
      if (raw.next_attempt_at > at || !kinds.has(raw.kind)) continue;
      if (raw.depends_on !== null) {
        const dep = db.prepare('SELECT id, status, app FROM operations WHERE id = ?').get(raw.depends_on) as
          { id: string; status: string; app: string | null } | undefined;
        if (dep && (dep.status === 'queued' || dep.status === 'running')) continue;
        if (!dep || dep.status !== 'succeeded') {
          const reason = `waited on operation ${raw.depends_on}${dep?.app ? ` (${dep.app})` : ''}, which ${dep ? dep.status : 'does not exist'}`;
          db.prepare(
            "UPDATE operations SET status = 'failed', last_error = ?, finished_at = ?, updated_at = ? WHERE id = ?",
          ).run(reason, at, at, raw.id);
          dependencyFailures.push({ operation: getOperation(db, raw.id)!, reason });
          continue;
        }
      }
      take.run(options.owner, expires, at, at, raw.id);
      attempt.run(raw.id, raw.attempts + 1, options.owner, raw.app, at);
      if (raw.app !== null) busy.add(raw.app);
      out.push(getOperation(db, raw.id)!);
      if (out.length >= options.limit) break;
    }
    return out;
  });
  return { claimed: claim.immediate(), dependencyFailures };
}

/** True while a `platform.upgrade` operation runs in one of `stages`. */
export function upgradeHolds(db: Db, stages: readonly string[]): boolean {
  const row = db
    .prepare(
      `SELECT 1 AS held FROM operations WHERE kind = 'platform.upgrade' AND status = 'running' AND stage IN (${stages.map(() => '?').join(', ')}) LIMIT 1`,
    )
    .get(...stages);
  return row !== undefined;
}

/** Claims the next runnable operation (see `claimOperations`). */
export function claimNextOperation(
  db: Db,
  options: ClaimOptions,
  now = new Date(),
): { claimed?: Operation; dependencyFailures: DependencyFailure[] } {
  const { claimed, dependencyFailures } = claimOperations(db, { ...options, limit: 1 }, now);
  return claimed[0] ? { claimed: claimed[0], dependencyFailures } : { dependencyFailures };
}

/** Renews the lease; false when the operation is no longer this owner's. */
export function renewLease(db: Db, id: string, owner: string, leaseMs: number, now = new Date()): boolean {
  const expires = new Date(now.getTime() + leaseMs).toISOString();
  return (
    db
      .prepare(
        "UPDATE operations SET lock_expires_at = ?, updated_at = ? WHERE id = ? AND lock_owner = ? AND status = 'running'",
      )
      .run(expires, now.toISOString(), id, owner).changes > 0
  );
}

/** Renews every lease held by `owner` in one statement (the worker's heartbeat). */
export function renewLeases(db: Db, owner: string, leaseMs: number, now = new Date()): number {
  const expires = new Date(now.getTime() + leaseMs).toISOString();
  return db
    .prepare("UPDATE operations SET lock_expires_at = ? WHERE lock_owner = ? AND status = 'running'")
    .run(expires, owner).changes;
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

function closeAttempt(db: Db, id: string, outcome: string, at: string): void {
  db.prepare('UPDATE operation_attempts SET ended_at = ?, outcome = ? WHERE operation_id = ? AND ended_at IS NULL').run(
    at,
    outcome,
    id,
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
  return db.transaction(() => {
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
  })();
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
  return db.transaction(() => {
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
  })();
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
