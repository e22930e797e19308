/**
 * Queues a deployment: the deployment record (one saga, one region row per selected region) and
 * its durable operation, written in one transaction.
 */
import type { CanonicalAppSpec } from '../../domain/spec/index.js';
import type { DeployPayload, Operation, OperationKind } from '../../domain/operations/index.js';
import type { Db } from '../../store/database.js';
import {
  createDeployment,
  newDeploymentIds,
  type Deployment,
  type DeploymentKind,
} from '../../store/control/deployments.js';
import { enqueueOperation, newOperationId } from '../../store/control/operations/operations.js';
import { LOCAL_REGION } from '../../domain/scheduler/index.js';

/** The operation kind of each deployment kind. */
export const KIND_OF: Record<DeploymentKind, OperationKind> = {
  deploy: 'app.deploy',
  preflight: 'app.preflight',
  rollback: 'app.rollback',
};

/** Regions an app deploys to: its declared regions, or the local default. */
export function appRegions(spec: CanonicalAppSpec | null): string[] {
  const names = spec ? Object.keys(spec.regions).sort() : [];
  return names.length > 0 ? names : [LOCAL_REGION];
}

/** What to queue. */
export interface QueueDeploymentInput {
  readonly app: string;
  readonly kind: DeploymentKind;
  readonly ref: string | null;
  readonly trigger: string;
  readonly regions: readonly string[];
  readonly dependsOn?: string | null;
  readonly target?: Deployment;
  readonly failedDeploymentId?: string;
}

/** Writes the deployment and its operation; the worker claims it. */
export function queueDeployment(db: Db, input: QueueDeploymentInput): { operation: Operation; deployment: Deployment } {
  return db.transaction(() => {
    const ids = newDeploymentIds();
    const operationId = newOperationId();
    const payload: DeployPayload = {
      deploymentId: ids.id,
      trigger: input.trigger,
      ...(input.target ? { targetDeploymentId: input.target.id } : {}),
      ...(input.failedDeploymentId ? { failedDeploymentId: input.failedDeploymentId } : {}),
    };
    // The deployment row references the operation: write the operation first.
    const operation = enqueueOperation(db, {
      id: operationId,
      kind: KIND_OF[input.kind],
      app: input.app,
      ref: input.ref,
      sagaId: ids.sagaId,
      payload: { ...payload },
      dependsOn: input.dependsOn ?? null,
    });
    const deployment = createDeployment(db, {
      id: ids.id,
      sagaId: ids.sagaId,
      operationId,
      app: input.app,
      kind: input.kind,
      ref: input.ref,
      trigger: input.trigger,
      regions: input.regions,
      ...(input.target?.release ? { release: input.target.release } : {}),
      previousDeploymentId: input.target?.id ?? input.failedDeploymentId ?? null,
    });
    return { operation, deployment };
  })();
}
