/**
 * The payload each operation kind carries, and readers that take it back from the stored JSON
 * with checks instead of casts: a field of the wrong type reads as absent, so a damaged row fails
 * its operation visibly ("names no deployment") rather than running on a wrong value.
 */

/** Payload of deploy, preflight and rollback operations. */
export interface DeployPayload {
  readonly deploymentId: string;
  readonly trigger: string;
  /** Rollbacks: the succeeded deployment whose release is re-deployed. */
  readonly targetDeploymentId?: string;
  /** Auto-rollbacks: the deploy that failed its health gate. */
  readonly failedDeploymentId?: string;
}

/** Payload of a snapshot restore: which snapshot, and whether to take a safety snapshot first. */
export interface SnapshotRestorePayload {
  readonly filename: string;
  readonly preRestore?: boolean;
}

/** Payload of a snapshot prune: the keep count asked for, else the spec's `snapshots.keep` at run time. */
export interface SnapshotPrunePayload {
  readonly keep?: number;
}

type StoredPayload = Readonly<Record<string, unknown>>;

function text(payload: StoredPayload, key: string): string | undefined {
  const value = payload[key];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** The deploy payload's fields that are present and well typed. */
export function readDeployPayload(payload: StoredPayload): Partial<DeployPayload> {
  const deploymentId = text(payload, 'deploymentId');
  const trigger = text(payload, 'trigger');
  const targetDeploymentId = text(payload, 'targetDeploymentId');
  const failedDeploymentId = text(payload, 'failedDeploymentId');
  return {
    ...(deploymentId === undefined ? {} : { deploymentId }),
    ...(trigger === undefined ? {} : { trigger }),
    ...(targetDeploymentId === undefined ? {} : { targetDeploymentId }),
    ...(failedDeploymentId === undefined ? {} : { failedDeploymentId }),
  };
}

/** The restore payload, or undefined when it names no snapshot file. */
export function readSnapshotRestorePayload(payload: StoredPayload): SnapshotRestorePayload | undefined {
  const filename = text(payload, 'filename');
  if (filename === undefined) return undefined;
  const preRestore = payload['preRestore'];
  return { filename, ...(typeof preRestore === 'boolean' ? { preRestore } : {}) };
}

/**
 * The prune payload, or undefined when its keep is present but not a whole number from 0 to 9999:
 * a damaged keep must not fall back to a smaller count and delete more than was asked.
 */
export function readSnapshotPrunePayload(payload: StoredPayload): SnapshotPrunePayload | undefined {
  const keep = payload['keep'];
  if (keep === undefined) return {};
  return typeof keep === 'number' && Number.isInteger(keep) && keep >= 0 && keep <= 9999 ? { keep } : undefined;
}
