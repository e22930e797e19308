/**
 * Observed state of one app: its jobs, allocations and registry health, per process, from every
 * scheduler target. Used by the app controller (conditions) and by the apps API (runtime status).
 */
import type { Allocation, JobSpec, JobStatus } from '../../domain/scheduler/index.js';
import {
  instanceStatus,
  isStarting,
  type HealthStatus,
  type InstanceHealth,
  type Registry,
  type ServiceInstance,
} from '../../domain/registry/index.js';
import type { SchedulerTargets } from './scheduler-targets.js';

/** One allocation as operators see it. */
export interface AllocationView {
  readonly id: string;
  readonly region: string;
  readonly status: Allocation['status'];
  /** `stop` while a replaced allocation drains (it no longer receives new requests). */
  readonly desiredStatus: Allocation['desiredStatus'];
  readonly canary: boolean;
  readonly jobVersion: number;
  readonly pid: number | null;
  readonly restarts: number;
  readonly oomKilled: boolean;
  readonly lastEvent: string | null;
  readonly ports: Record<string, number>;
  /** `starting` while its checks are in their start-up window. */
  readonly health: InstanceHealth | null;
  readonly memory: { readonly currentBytes: number; readonly peakBytes: number; readonly limitBytes: number };
}

/** One process (task group) of an app. */
export interface ProcessObservation {
  readonly process: string;
  readonly jobId: string;
  readonly jobType: JobStatus['spec']['type'];
  readonly region: string;
  readonly desiredCount: number;
  readonly running: number;
  readonly paused: boolean;
  /** Worst registry status of its instances (`starting` when every one is in its start-up window); null when it registers no checked service. */
  readonly health: InstanceHealth | null;
  readonly allocations: readonly AllocationView[];
}

/** Everything observed about an app right now. */
export interface AppObservation {
  readonly jobs: readonly {
    readonly id: string;
    readonly region: string;
    readonly version: number;
    readonly status: JobStatus['status'];
  }[];
  readonly processes: readonly ProcessObservation[];
}

function view(allocation: Allocation, instances: readonly ServiceInstance[]): AllocationView {
  const mine = instances.filter((i) => i.allocationId === allocation.id && i.checks.length > 0);
  return {
    id: allocation.id,
    region: allocation.region,
    status: allocation.status,
    desiredStatus: allocation.desiredStatus,
    canary: allocation.canary,
    jobVersion: allocation.jobVersion,
    pid: allocation.task.pid ?? null,
    restarts: allocation.task.restarts,
    oomKilled: allocation.task.oomKilled,
    lastEvent: allocation.task.lastEventMessage ?? null,
    ports: Object.fromEntries(allocation.ports.map((p) => [p.label, p.value])),
    health: mine.length === 0 ? null : combinedHealth(mine),
    memory: {
      currentBytes: allocation.memory.currentRssBytes,
      peakBytes: allocation.memory.peakRssBytes,
      limitBytes: allocation.memory.limitBytes,
    },
  };
}

function rank(status: HealthStatus): number {
  return status === 'passing' ? 0 : status === 'warning' ? 1 : 2;
}

/** Health of several instances: the worst of those out of their start-up window; `starting` when none is. */
function combinedHealth(instances: readonly ServiceInstance[]): InstanceHealth {
  const settled = instances.filter((i) => !isStarting(i));
  if (settled.length === 0) return 'starting';
  return settled.map(instanceStatus).reduce<HealthStatus>((w, s) => (rank(s) > rank(w) ? s : w), 'passing');
}

/** Reads jobs, allocations and registry instances of `app` from every opened target. */
export async function observeApp(app: string, targets: SchedulerTargets, registry: Registry): Promise<AppObservation> {
  const jobs: AppObservation['jobs'][number][] = [];
  const processes: ProcessObservation[] = [];
  for (const { region, scheduler } of await targets.all()) {
    const appJobs = (await scheduler.listJobs({ app })).filter((job) => job.status === 'running');
    if (appJobs.length === 0) continue;
    const allocations = await scheduler.listAllocations({ app });
    for (const job of appJobs) {
      jobs.push({ id: job.spec.id, region, version: job.version, status: job.status });
      for (const group of job.spec.taskGroups) {
        const instances = (await Promise.all(group.services.map((s) => registry.instances(s.name)))).flat();
        const groupAllocations = allocations.filter(
          (a) => a.jobId === job.spec.id && a.taskGroup === group.name && a.kind === 'group',
        );
        const checked = instances.filter(
          (i) => i.checks.length > 0 && groupAllocations.some((a) => a.id === i.allocationId && a.status === 'running'),
        );
        processes.push({
          process: job.spec.meta?.['svc.process'] ?? group.name,
          jobId: job.spec.id,
          jobType: job.spec.type,
          region,
          desiredCount: job.spec.type === 'service' ? group.count : 0,
          running: groupAllocations.filter((a) => a.status === 'running').length,
          paused: job.paused,
          health: group.services.some((s) => s.check)
            ? checked.length === 0
              ? 'critical'
              : checked.map(instanceStatus).reduce<HealthStatus>((w, s) => (rank(s) > rank(w) ? s : w), 'passing')
            : null,
          allocations: allocations
            .filter((a) => a.jobId === job.spec.id && a.taskGroup === group.name)
            .map((a) => view(a, instances)),
        });
      }
    }
  }
  return { jobs, processes };
}

/** Whether every desired service allocation runs and passes its checks, with the reason if not. */
export function assessHealth(
  desired: readonly JobSpec[],
  observed: AppObservation,
): { healthy: boolean; reason: string; message: string } {
  const problems: string[] = [];
  for (const job of desired) {
    if (!observed.jobs.some((j) => j.id === job.id)) {
      problems.push(`job ${job.id} is not running`);
      continue;
    }
    if (job.type !== 'service') continue;
    for (const group of job.taskGroups) {
      const process = observed.processes.find(
        (p) => p.jobId === job.id && p.process === (job.meta?.['svc.process'] ?? group.name),
      );
      const running = process?.running ?? 0;
      if (running < group.count) problems.push(`${group.name}: ${running}/${group.count} allocations running`);
      else if (group.count > 0 && process?.health !== null && process?.health !== 'passing')
        problems.push(`${group.name}: health ${process?.health ?? 'unknown'}`);
    }
  }
  if (problems.length === 0)
    return {
      healthy: true,
      reason: 'AllocationsHealthy',
      message: 'every allocation is running and passing its checks',
    };
  return { healthy: false, reason: 'AllocationsNotHealthy', message: problems.join('; ') };
}
