/**
 * Claims of queued operations under a lease, with the per-app lock, dependencies and the upgrade
 * hold, and the heartbeat that renews leases.
 */
import type { Operation, OperationKind } from '../../../domain/operations/index.js';
import type { Db } from '../../database.js';
import { getOperation, type RawOperation } from './operation-rows.js';

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
