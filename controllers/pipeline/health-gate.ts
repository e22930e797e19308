/**
 * The deploy health gate: observes the submitted jobs of one release on the scheduler and the
 * registry and answers whether every allocation of the new version runs and passes its checks,
 * which task groups wait for canary promotion, and whether their canaries are healthy.
 */
import { LOCAL_REGION, type JobSpec, type Scheduler } from '../../domain/scheduler/index.js';
import { instanceStatus, type Registry } from '../../domain/registry/index.js';
import type { SchedulerTargets } from '../apps/scheduler-targets.js';
import { waitForChange, type ChangeSource } from '../../domain/wait-for-change.js';

/** What the gate saw. */
export interface GateObservation {
  /** Every service allocation of the new version runs and passes; nothing awaits promotion. */
  readonly healthy: boolean;
  /** Jobs with task groups waiting for canary promotion. */
  readonly awaitingPromotion: readonly { readonly jobId: string; readonly region: string }[];
  /** Every awaiting group has its canaries running and passing. */
  readonly canariesHealthy: boolean;
  /** Every desired job is registered on its scheduler at the desired commit (the submit landed). */
  readonly submitted: boolean;
  readonly problems: readonly string[];
}

/**
 * How long a task of a process without health checks must have run (without a restart) to count
 * as healthy: a process that exits at once must not pass the gate between two restarts. Counted
 * from the spawn: on a busy host a Node.js process can take over a second to reach its first line,
 * so a shorter window let a worker that crashes at start pass the gate (seen at load average 20).
 */
export const MIN_HEALTHY_MS = 2000;

/** Observes the jobs `desired` (one release of an app) right now. */
export async function observeGate(
  desired: readonly JobSpec[],
  targets: SchedulerTargets,
  registry: Registry,
  now = Date.now(),
): Promise<GateObservation> {
  const problems: string[] = [];
  const awaiting: { jobId: string; region: string }[] = [];
  let canariesHealthy = true;
  let submitted = true;
  for (const job of desired) {
    const region = job.region ?? LOCAL_REGION;
    const scheduler: Scheduler = await targets.get(region);
    const status = await scheduler.getJob(job.id);
    if (!status || status.status !== 'running') {
      problems.push(`job ${job.id} is not running`);
      submitted = false;
      continue;
    }
    const commit = job.meta?.['svc.commit'];
    if (commit !== undefined && status.spec.meta?.['svc.commit'] !== commit) {
      problems.push(`job ${job.id} still runs commit ${status.spec.meta?.['svc.commit']?.slice(0, 12) ?? 'unknown'}`);
      submitted = false;
      continue;
    }
    if (status.spec.type !== 'service') continue;
    const allocations = (await scheduler.listAllocations({ jobId: job.id })).filter(
      (a) => a.kind === 'group' && a.desiredStatus === 'run',
    );
    for (const group of status.spec.taskGroups) {
      const live = allocations.filter((a) => a.taskGroup === group.name);
      const checked = group.services.filter((s) => s.check);
      const instances = (await Promise.all(checked.map((s) => registry.instances(s.name)))).flat();
      const passing = (allocationId: string): boolean =>
        checked.every((s) => {
          const mine = instances.filter((i) => i.service === s.name && i.allocationId === allocationId);
          return mine.length > 0 && mine.every((i) => instanceStatus(i) === 'passing');
        });
      const settled = (a: (typeof live)[number]): boolean =>
        checked.length > 0 ||
        (a.task.state === 'running' &&
          a.task.startedAt !== undefined &&
          now - Date.parse(a.task.startedAt) >= MIN_HEALTHY_MS);
      const healthyIds = live.filter((a) => a.status === 'running' && passing(a.id) && settled(a)).map((a) => a.id);
      if (status.awaitingPromotion.includes(group.name)) {
        if (!awaiting.some((a) => a.jobId === job.id)) awaiting.push({ jobId: job.id, region });
        // Canaries carry the new job version; promotion clears their flag before the job's awaiting list.
        const canaries = live.filter((a) => a.canary || a.jobVersion === status.version);
        const wanted = Math.min(group.canary ?? 0, group.count);
        const healthyCanaries = canaries.filter((a) => healthyIds.includes(a.id)).length;
        if (healthyCanaries < wanted) {
          canariesHealthy = false;
          problems.push(`${group.name}: ${healthyCanaries}/${wanted} canaries healthy`);
        }
        continue;
      }
      if (healthyIds.length < group.count || live.length > group.count) {
        problems.push(
          `${group.name}: ${healthyIds.length}/${group.count} allocations running and passing${live.length > group.count ? ` (${live.length - group.count} old still running)` : ''}`,
        );
      }
    }
  }
  return {
    healthy: problems.length === 0 && awaiting.length === 0,
    awaitingPromotion: awaiting,
    canariesHealthy,
    submitted,
    problems,
  };
}

/** Options of `waitForGate`. */
export interface WaitForGateOptions {
  readonly targets: SchedulerTargets;
  readonly registry: Registry;
  readonly deadlineMs: number;
  readonly signal?: AbortSignal;
  /** Re-observation period besides scheduler and registry change events. @default 200 */
  readonly pollMs?: number;
}

/**
 * Waits until `accept` holds for an observation (re-observed on every scheduler or registry
 * change and periodically); resolves with the accepted observation or the last one at the deadline.
 */
export async function waitForGate(
  desired: readonly JobSpec[],
  accept: (o: GateObservation) => boolean,
  options: WaitForGateOptions,
): Promise<{ accepted: boolean; observation: GateObservation }> {
  const schedulers = await Promise.all(
    [...new Set(desired.map((j) => j.region ?? LOCAL_REGION))].map((r) => options.targets.get(r)),
  );
  let last: GateObservation = {
    healthy: false,
    awaitingPromotion: [],
    canariesHealthy: false,
    submitted: false,
    problems: ['not observed yet'],
  };
  const sources: ChangeSource[] = [
    ...schedulers.map(
      (s): ChangeSource =>
        (listener) =>
          s.watch(listener),
    ),
    (listener) => options.registry.watch(listener),
  ];
  return waitForChange<{ accepted: boolean; observation: GateObservation }>(
    sources,
    async () => {
      last = await observeGate(desired, options.targets, options.registry);
      return accept(last) ? { accepted: true, observation: last } : undefined;
    },
    {
      timeoutMs: options.deadlineMs,
      onTimeout: () => ({ value: { accepted: false, observation: last } }),
      pollMs: options.pollMs ?? 200,
      ...(options.signal ? { signal: options.signal } : {}),
    },
  );
}
