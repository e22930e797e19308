/**
 * How a pipeline run ends: success, failure (with the automatic rollback of a deploy that failed
 * its health gate, or the removal of a first deploy's jobs), and the records kept when the worker
 * recovers or abandons a deploy, preflight or rollback operation.
 */
import { readDeployPayload, type Operation, type RecoveryDecision } from '../../domain/operations/index.js';
import type { PipelineStep } from '../../domain/pipeline/index.js';
import { getApp, setAppRelease } from '../../store/control/apps.js';
import type { CanonicalAppSpec } from '../../domain/spec/index.js';
import {
  closeOpenSteps,
  getDeployment,
  lastSuccessfulRelease,
  updateDeployment,
  type Deployment,
} from '../../store/control/deployments.js';
import { emitDeployEvent } from './deploy-events.js';
import { appRegions, queueDeployment } from './deploy-queue.js';
import type { PipelineDependencies } from './pipeline-context.js';
import type { RunState } from './run-state.js';
import { StepFailure } from '../errors.js';

/** The deployment an operation runs. */
export function deploymentOf(deps: PipelineDependencies, operation: Operation): Deployment {
  const id = readDeployPayload(operation.payload).deploymentId;
  const deployment = id === undefined ? undefined : getDeployment(deps.db, id);
  if (!deployment) throw new StepFailure(`operation ${operation.id} names no deployment`);
  return deployment;
}

/** Records a succeeded run and emits its event; returns the operation's receipt. */
export function succeed(deps: PipelineDependencies, state: RunState): Record<string, unknown> {
  const db = deps.db;
  updateDeployment(db, state.deployment.id, {
    status: 'succeeded',
    finished: true,
    failedStep: null,
    regionStatus: 'succeeded',
    ...(state.kind === 'preflight' ? { message: 'preflight passed; nothing changed at runtime' } : {}),
  });
  const deployment = getDeployment(db, state.deployment.id)!;
  if (state.kind === 'deploy')
    void emitDeployEvent(deps.events, deps.logger, 'deploy.succeeded', deployment, {
      title: `${state.app} deployed ${short(deployment.commit)}`,
    });
  if (state.kind === 'rollback')
    void emitDeployEvent(deps.events, deps.logger, 'rollback.succeeded', deployment, {
      title: `${state.app} rolled back to ${short(deployment.commit)}`,
    });
  return {
    deploymentId: deployment.id,
    sagaId: deployment.sagaId,
    status: deployment.status,
    commit: deployment.commit,
  };
}

function short(commit: string | null): string {
  return commit ? commit.slice(0, 12) : 'unknown commit';
}

/** Records a failed run (and for deploys failing at submit or healthy, the rollback) and returns the error to throw. */
export async function fail(
  deps: PipelineDependencies,
  state: RunState,
  step: PipelineStep | null,
  error: unknown,
): Promise<Error> {
  const db = deps.db;
  const message = error instanceof Error ? error.message : String(error);
  const failure = new StepFailure(step ? `${step}: ${message}` : message);
  const { deployment } = state;
  if (state.kind === 'preflight') {
    updateDeployment(db, deployment.id, {
      status: 'failed',
      failedStep: step,
      message,
      finished: true,
      regionStatus: 'failed',
    });
    return failure;
  }
  if (state.kind === 'rollback') {
    updateDeployment(db, deployment.id, {
      status: 'failed',
      failedStep: step,
      message,
      finished: true,
      regionStatus: 'failed',
    });
    await emitDeployEvent(deps.events, deps.logger, 'rollback.failed', getDeployment(db, deployment.id)!, {
      title: `${state.app} rollback failed${step ? ` at ${step}` : ''}`,
      body: message,
      ...(step ? { step } : {}),
    });
    return failure;
  }
  const { status, note, rollback } =
    step === 'submit' || step === 'healthy'
      ? undoRuntime(deps, state.app, state.spec, deployment)
      : { status: 'failed' as const, note: '', rollback: undefined };
  updateDeployment(db, deployment.id, {
    status,
    failedStep: step,
    message: `${message}${note}`,
    finished: true,
    regionStatus: status,
  });
  const row = getDeployment(db, deployment.id)!;
  await emitDeployEvent(deps.events, deps.logger, 'deploy.failed', row, {
    title: `${state.app} deploy failed${step ? ` at ${step}` : ''}`,
    body: `${message}${note}`,
    ...(step ? { step } : {}),
  });
  if (rollback)
    await emitAutoRollback(deps, row, `${state.app}: health gate failed, rollback queued`, note, step, rollback);
  return new StepFailure(`${failure.message}${note}`);
}

interface QueuedRollback {
  readonly operationId: string;
  readonly deploymentId: string;
  readonly sagaId: string;
}

/**
 * Undoes a deploy whose new release reached the runtime (it failed, or was interrupted, at submit
 * or healthy): queues a rollback to the last successful release unless `deployPolicy.autoRollback`
 * is false; a first deploy has its jobs removed instead.
 */
function undoRuntime(
  deps: PipelineDependencies,
  app: string,
  spec: CanonicalAppSpec | null,
  deployment: Deployment,
): { status: Deployment['status']; note: string; rollback: QueuedRollback | undefined } {
  const db = deps.db;
  const previous = lastSuccessfulRelease(db, app, deployment.id);
  if (previous && spec?.deployPolicy.autoRollback !== false) {
    const queued = queueDeployment(db, {
      app,
      kind: 'rollback',
      ref: previous.commit,
      trigger: 'auto-rollback',
      regions: appRegions(spec),
      target: previous,
      failedDeploymentId: deployment.id,
    });
    return {
      status: 'rolled_back',
      note: `; rollback to ${short(previous.commit)} queued (${queued.operation.id})`,
      rollback: {
        operationId: queued.operation.id,
        deploymentId: queued.deployment.id,
        sagaId: queued.deployment.sagaId,
      },
    };
  }
  if (!previous) {
    // A first deploy that is not healthy must not stay half-new: remove its jobs.
    setAppRelease(db, app, null);
    deps.appController.enqueue(app);
    return {
      status: 'failed',
      note: '; no earlier successful deployment: the new jobs are stopped',
      rollback: undefined,
    };
  }
  return {
    status: 'failed',
    note: '; deployPolicy.autoRollback is false: the new release stays for operator review',
    rollback: undefined,
  };
}

async function emitAutoRollback(
  deps: PipelineDependencies,
  row: Deployment,
  title: string,
  note: string,
  step: PipelineStep | null,
  rollback: QueuedRollback,
): Promise<void> {
  await emitDeployEvent(deps.events, deps.logger, 'deploy.auto_rollback', row, {
    title,
    body: note.slice(2),
    ...(step ? { step } : {}),
    extra: {
      rollbackOperationId: rollback.operationId,
      rollbackDeploymentId: rollback.deploymentId,
      rollbackSagaId: rollback.sagaId,
    },
  });
}

/** Keeps the deployment consistent with the worker's recovery decision. */
export function recovered(deps: PipelineDependencies, operation: Operation, decision: RecoveryDecision): void {
  const deployment = deploymentOf(deps, operation);
  closeOpenSteps(deps.db, deployment.id, decision.reason);
  if (decision.action === 'requeue') {
    updateDeployment(deps.db, deployment.id, { status: 'queued', message: decision.reason, regionStatus: 'queued' });
    return;
  }
  const stage = operation.stage as PipelineStep | null;
  // A deploy interrupted once its release reached the runtime is undone as a failed one would be.
  const undo =
    deployment.kind === 'deploy' && (stage === 'submit' || stage === 'healthy')
      ? undoRuntime(deps, deployment.app, getApp(deps.db, deployment.app)?.spec ?? null, deployment)
      : undefined;
  const status = undo?.status ?? 'failed';
  const message = `${decision.reason}${undo?.note ?? ''}`;
  updateDeployment(deps.db, deployment.id, {
    status,
    failedStep: operation.stage,
    message,
    finished: true,
    regionStatus: status,
  });
  if (deployment.kind !== 'preflight') {
    const type = deployment.kind === 'rollback' ? 'rollback.failed' : 'deploy.failed';
    const row = getDeployment(deps.db, deployment.id)!;
    void emitDeployEvent(deps.events, deps.logger, type, row, {
      title: `${deployment.app} ${deployment.kind} interrupted`,
      body: message,
      ...(operation.stage ? { step: operation.stage } : {}),
    }).then(() =>
      undo?.rollback
        ? emitAutoRollback(
            deps,
            row,
            `${deployment.app}: deploy interrupted after ${stage}, rollback queued`,
            undo.note,
            stage,
            undo.rollback,
          )
        : undefined,
    );
  }
}

/** Records a deployment whose operation was cancelled or whose dependency failed. */
export function abandoned(deps: PipelineDependencies, operation: Operation, reason: string): void {
  const deployment = deploymentOf(deps, operation);
  updateDeployment(deps.db, deployment.id, {
    status: operation.status === 'cancelled' ? 'cancelled' : 'failed',
    message: reason,
    finished: true,
    regionStatus: operation.status === 'cancelled' ? 'cancelled' : 'failed',
  });
}
