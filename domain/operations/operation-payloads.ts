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
