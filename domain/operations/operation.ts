/**
 * Durable operations: imperative work (deploys, preflights, rollbacks, snapshots, restores,
 * snapshot pruning, migrations, platform lanes) queued in control.db, claimed by a worker under a lease, serialized
 * per app and recovered after a crash.
 */

/** What an operation does; the worker runs it with the handler registered for its kind. */
export const OperationKind = {
  appDeploy: 'app.deploy',
  appPreflight: 'app.preflight',
  appRollback: 'app.rollback',
  appSnapshot: 'app.snapshot',
  appSnapshotRestore: 'app.snapshot-restore',
  appSnapshotPrune: 'app.snapshot-prune',
  appMigrate: 'app.migrate',
  platformPreflight: 'platform.preflight',
  platformUpgrade: 'platform.upgrade',
  platformSmoke: 'platform.smoke',
} as const;
export type OperationKind = (typeof OperationKind)[keyof typeof OperationKind];

/** Every kind, for validation. */
export const OPERATION_KINDS: readonly OperationKind[] = Object.values(OperationKind);

/** Life cycle of an operation row. */
export const OperationStatus = {
  queued: 'queued',
  running: 'running',
  succeeded: 'succeeded',
  failed: 'failed',
  cancelled: 'cancelled',
} as const;
export type OperationStatus = (typeof OperationStatus)[keyof typeof OperationStatus];

/** True for the statuses an operation never leaves. */
export function isTerminalStatus(status: OperationStatus): boolean {
  return status === 'succeeded' || status === 'failed' || status === 'cancelled';
}

/** A durable operation row. */
export interface Operation {
  readonly id: string;
  readonly kind: OperationKind;
  readonly status: OperationStatus;
  /** The app it serializes on; null for platform kinds. */
  readonly app: string | null;
  readonly ref: string | null;
  readonly sagaId: string | null;
  readonly payload: Readonly<Record<string, unknown>>;
  /** Typed receipt written at completion. */
  readonly result: Readonly<Record<string, unknown>> | null;
  readonly attempts: number;
  readonly maxAttempts: number;
  readonly lockOwner: string | null;
  /** ISO 8601; the lease, renewed by the worker's heartbeat. */
  readonly lockExpiresAt: string | null;
  readonly nextAttemptAt: string;
  readonly lastError: string | null;
  /** The last pipeline stage the running attempt entered. */
  readonly stage: string | null;
  /** True once the attempt entered a stage that changes the runtime or data. */
  readonly mutated: boolean;
  /** An operation that must succeed before this one may be claimed (deploy groups with waitReady). */
  readonly dependsOn: string | null;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly startedAt: string | null;
  readonly finishedAt: string | null;
}

/** Kinds that may never be replayed once they began to mutate: their receipt needs an operator. */
const NEVER_REPLAY_AFTER_MUTATION: ReadonlySet<OperationKind> = new Set<OperationKind>([
  OperationKind.appSnapshotRestore,
  OperationKind.appMigrate,
]);

/**
 * Kinds whose handler resumes after an interruption, whatever stage it reached: the platform lane
 * from its own phase record, snapshot pruning because a second pass deletes only what the first left
 * (ADR 0232).
 */
const RESUMABLE: ReadonlySet<OperationKind> = new Set<OperationKind>([
  OperationKind.platformPreflight,
  OperationKind.platformUpgrade,
  OperationKind.platformSmoke,
  OperationKind.appSnapshotPrune,
]);

/** What recovery does with a running operation whose worker died or whose lease expired. */
export type RecoveryDecision =
  { readonly action: 'requeue'; readonly reason: string } | { readonly action: 'fail'; readonly reason: string };

/**
 * Decides how to recover an interrupted operation: one interrupted before a mutable stage is
 * requeued (while attempts remain); after one it fails visibly, and a restore or migration that
 * began mutating is never replayed.
 */
export function planRecovery(
  op: Pick<Operation, 'kind' | 'mutated' | 'stage' | 'attempts' | 'maxAttempts'>,
): RecoveryDecision {
  const where = op.stage === null ? 'before its first stage' : `in stage ${op.stage}`;
  if (RESUMABLE.has(op.kind)) {
    // The platform lane keeps its own phase record; a second prune deletes only what the first left.
    if (op.attempts >= op.maxAttempts)
      return { action: 'fail', reason: `interrupted ${where}; no attempts left (${op.attempts}/${op.maxAttempts})` };
    return { action: 'requeue', reason: `interrupted ${where}; requeued to resume from its recorded phase` };
  }
  if (op.mutated) {
    const review = NEVER_REPLAY_AFTER_MUTATION.has(op.kind) ? '; not replayed, needs operator review' : '';
    return { action: 'fail', reason: `interrupted ${where} after a mutable stage began${review}` };
  }
  if (op.attempts >= op.maxAttempts)
    return { action: 'fail', reason: `interrupted ${where}; no attempts left (${op.attempts}/${op.maxAttempts})` };
  return { action: 'requeue', reason: `interrupted ${where} before any mutable stage; requeued` };
}
