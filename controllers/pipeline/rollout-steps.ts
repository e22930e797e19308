/**
 * The deploy pipeline's rollout steps: submit (the desired jobs to the scheduler, through the app
 * controller), healthy (the health gate, with canary evaluation and promotion) and the wait for the
 * app's Healthy condition that routing needs.
 */
import fs from 'node:fs';
import type { CanonicalAppSpec } from '../../domain/spec/index.js';
import { tryParseGoDuration } from '../../domain/spec/index.js';
import { LOCAL_REGION, type JobSpec } from '../../domain/scheduler/index.js';
import { isDomainError } from '../../domain/errors.js';
import { getApp, setAppRelease } from '../../store/control/apps.js';
import { recordDeploymentSpec, updateDeployment } from '../../store/control/deployments.js';
import { desiredJobs } from '../apps/app-reconciler.js';
import type { OperationContext } from '../operations/operation-handlers.js';
import type { RunState } from './run-state.js';
import { waitForGate } from './health-gate.js';
import type { PipelineDependencies } from './pipeline-context.js';
import { StepFailure } from '../errors.js';

/** What a step reports: its message and, optionally, its output. */
export interface StepOutcome {
  readonly message: string;
  readonly output?: string;
}

/** Waits until the app controller recorded Healthy=True for `app` (it reconciles on every change). */
export async function appHealthyCondition(deps: PipelineDependencies, app: string, timeoutMs: number): Promise<void> {
  const healthy = () =>
    ((getApp(deps.db, app)?.conditions ?? []) as { type: string; status: string }[]).some(
      (c) => c.type === 'Healthy' && c.status === 'True',
    );
  if (healthy()) return;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(done, timeoutMs);
    const unsubscribe = deps.appController.onReconciled((key) => key === app && healthy() && done());
    function done(): void {
      clearTimeout(timer);
      unsubscribe();
      resolve();
    }
    deps.appController.enqueue(app);
  });
}

async function portConflicts(deps: PipelineDependencies, app: string, desired: readonly JobSpec[]): Promise<string[]> {
  const used = new Map<number, string>();
  for (const { scheduler } of await deps.targets.all()) {
    for (const job of await scheduler.listJobs()) {
      if (job.status !== 'running' || job.spec.meta?.['svc.app'] === app) continue;
      for (const group of job.spec.taskGroups)
        for (const port of group.ports) if (port.static !== undefined) used.set(port.static, job.spec.id);
    }
  }
  const warnings: string[] = [];
  for (const job of desired) {
    for (const group of job.taskGroups) {
      for (const port of group.ports) {
        if (port.static === undefined) continue;
        const other = used.get(port.static);
        if (other === undefined) continue;
        let suggest = port.static + 1;
        while (used.has(suggest) && suggest < 65535) suggest += 1;
        warnings.push(`port.conflict: port ${port.static} is used by ${other} suggest ${suggest}`);
      }
    }
  }
  return warnings;
}

export async function submit(deps: PipelineDependencies, state: RunState): Promise<StepOutcome> {
  const release = state.release;
  if (!release) throw new StepFailure('no release to submit');
  if (!fs.existsSync(release.dir))
    throw new StepFailure(`release ${release.commit.slice(0, 12)} no longer exists at ${release.dir}`);
  const desired = desiredJobs(state.spec, release, undefined, deps.targets.runsImages);
  state.desired = desired;
  const warnings = await portConflicts(deps, state.app, desired);
  for (const warning of warnings) deps.logger.warn({ app: state.app, deploymentId: state.deployment.id }, warning);
  setAppRelease(deps.db, state.app, release);
  recordDeploymentSpec(deps.db, state.deployment.id, state.spec);
  // A regional rollback records the release it returned the selected regions to.
  const recorded = Object.values(release.regions ?? {}).find((r) => r.commit === state.commit) ?? {
    commit: release.commit,
    dir: release.dir,
  };
  updateDeployment(deps.db, state.deployment.id, {
    commit: recorded.commit,
    release: { commit: recorded.commit, dir: recorded.dir },
  });
  // The scheduler may refuse the jobs (e.g. a static port held by another job): the app
  // controller's reconcile then fails with a domain error, which ends the submit at once.
  const refused = new AbortController();
  const unsubscribe = deps.appController.onReconciled((key, error) => {
    if (key === state.app && isDomainError(error)) refused.abort(error);
  });
  let landed: Awaited<ReturnType<typeof waitForGate>>;
  try {
    deps.appController.enqueue(state.app);
    landed = await waitForGate(desired, (o) => o.submitted, {
      targets: deps.targets,
      registry: deps.registry,
      deadlineMs: 30_000,
      signal: refused.signal,
    });
  } catch (error) {
    if (!refused.signal.aborted) throw error;
    throw new StepFailure(
      `the scheduler refused the jobs: ${(refused.signal.reason as Error).message}${warnings.length > 0 ? `; ${warnings.join('; ')}` : ''}`,
    );
  } finally {
    unsubscribe();
  }
  if (!landed.accepted)
    throw new StepFailure(`the scheduler did not take the jobs within 30 s: ${landed.observation.problems.join('; ')}`);
  const regions = [...new Set(desired.map((j) => j.region ?? LOCAL_REGION))].join(', ');
  return {
    message: `submitted ${desired.map((j) => `${j.id} at ${(j.meta?.['svc.commit'] ?? release.commit).slice(0, 12)}`).join(', ') || 'no jobs'} (regions ${regions})${warnings.length > 0 ? `; ${warnings.join('; ')}` : ''}`,
  };
}

function evaluateAfterMs(spec: CanonicalAppSpec): number {
  let most = 0;
  for (const process of Object.values(spec.processes)) {
    const text = process.canary?.evaluateAfter;
    if (!text) continue;
    const parsed = tryParseGoDuration(text);
    if (parsed.ok) most = Math.max(most, parsed.value.milliseconds);
  }
  return most;
}

export async function healthy(
  deps: PipelineDependencies,
  context: OperationContext,
  state: RunState,
): Promise<StepOutcome> {
  const desired = state.desired ?? [];
  const deadline = Date.now() + (deps.healthyTimeoutMs ?? 120_000);
  const options = () => ({
    targets: deps.targets,
    registry: deps.registry,
    deadlineMs: Math.max(0, deadline - Date.now()),
    signal: context.signal,
  });
  const first = await waitForGate(
    desired,
    (o) => o.healthy || (o.awaitingPromotion.length > 0 && o.canariesHealthy),
    options(),
  );
  if (!first.accepted)
    throw new StepFailure(
      `not healthy within ${deps.healthyTimeoutMs ?? 120_000} ms: ${first.observation.problems.join('; ')}`,
    );
  if (first.observation.healthy) return { message: 'every allocation is running and passing its checks' };
  // Canaries are healthy: evaluate them after evaluateAfter, unless an operator promotes first. A
  // canary that turns unhealthy must recover before the health deadline.
  const evaluateMs = evaluateAfterMs(state.spec);
  const evaluationEnd = Date.now() + evaluateMs;
  let promoted = 'promoted by an operator';
  for (;;) {
    const evaluation = await waitForGate(desired, (o) => o.awaitingPromotion.length === 0 || !o.canariesHealthy, {
      ...options(),
      deadlineMs: Math.max(0, evaluationEnd - Date.now()),
    });
    if (!evaluation.accepted) {
      for (const { jobId, region } of evaluation.observation.awaitingPromotion)
        await (await deps.targets.get(region)).promoteCanaries(jobId);
      promoted = `canaries healthy after ${evaluateMs} ms: promoted automatically`;
      break;
    }
    if (evaluation.observation.awaitingPromotion.length === 0) break;
    const recovery = await waitForGate(
      desired,
      (o) => o.awaitingPromotion.length === 0 || o.canariesHealthy,
      options(),
    );
    if (!recovery.accepted)
      throw new StepFailure(`canaries became unhealthy during evaluation: ${recovery.observation.problems.join('; ')}`);
    if (recovery.observation.awaitingPromotion.length === 0) break;
  }
  const full = await waitForGate(desired, (o) => o.healthy, options());
  if (!full.accepted)
    throw new StepFailure(`${promoted}, but not healthy afterwards: ${full.observation.problems.join('; ')}`);
  return { message: `${promoted}; every allocation is running and passing its checks` };
}
