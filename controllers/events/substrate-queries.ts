/**
 * Substrate facts for the event services: what the scheduler targets and the registry say now
 * about an app, a service or a periodic job.
 */
import type { Allocation, JobStatus, Scheduler } from '../../domain/scheduler/index.js';
import { instanceStatus, processServiceName, type Registry } from '../../domain/registry/index.js';

/** Where substrate state is read from. */
export interface Substrate {
  /** Every opened scheduler target. */
  schedulers(): Promise<readonly Scheduler[]>;
  readonly registry: Registry;
}

/** Whether an allocation is running and every registry check of its instances passes. */
async function allocationHealthy(registry: Registry, allocation: Allocation): Promise<boolean> {
  if (allocation.status !== 'running') return false;
  const instances = (await registry.instances(processServiceName(allocation.app, allocation.taskGroup))).filter(
    (i) => i.allocationId === allocation.id,
  );
  return instances.every((i) => instanceStatus(i) === 'passing');
}

/** Jobs of `app` currently running with at least one healthy allocation. */
export async function runningHealthyJobs(substrate: Substrate, app: string): Promise<string[]> {
  const out: string[] = [];
  for (const scheduler of await substrate.schedulers()) {
    for (const job of await scheduler.listJobs({ app })) {
      if (job.status !== 'running' || job.spec.type === 'periodic') continue;
      const allocations = await scheduler.listAllocations({ app, jobId: job.spec.id });
      for (const allocation of allocations) {
        if (await allocationHealthy(substrate.registry, allocation)) {
          out.push(job.spec.id);
          break;
        }
      }
    }
  }
  return out;
}

/** Every current check of a process's registry service. */
export async function serviceChecks(
  substrate: Substrate,
  app: string,
  process: string,
): Promise<{ instanceId: string; status: string }[]> {
  const instances = await substrate.registry.instances(processServiceName(app, process));
  return instances.flatMap((i) => (i.checks.length === 0 ? [] : [{ instanceId: i.id, status: instanceStatus(i) }]));
}

/** A periodic job wherever it runs, with its active children. */
export async function periodicParent(
  substrate: Substrate,
  jobId: string,
): Promise<{ job: JobStatus; activeChildren: number } | undefined> {
  for (const scheduler of await substrate.schedulers()) {
    const job = await scheduler.getJob(jobId);
    if (!job) continue;
    const children = (await scheduler.listAllocations({ jobId })).filter(
      (a) => a.kind === 'periodic_child' && (a.status === 'running' || a.status === 'pending'),
    );
    return { job, activeChildren: children.length };
  }
  return undefined;
}

/** One allocation wherever it runs. */
export async function findAllocation(substrate: Substrate, allocationId: string): Promise<Allocation | undefined> {
  for (const scheduler of await substrate.schedulers()) {
    const allocation = await scheduler.getAllocation(allocationId);
    if (allocation) return allocation;
  }
  return undefined;
}

/** Whether every non-terminal group allocation of `app` is running and healthy (at least one). */
export async function appHealth(substrate: Substrate, app: string): Promise<{ healthy: boolean; detail: string }> {
  let total = 0;
  const unhealthy: string[] = [];
  for (const scheduler of await substrate.schedulers()) {
    for (const allocation of await scheduler.listAllocations({ app })) {
      if (allocation.kind !== 'group') continue;
      total++;
      if (!(await allocationHealthy(substrate.registry, allocation)))
        unhealthy.push(`${allocation.taskGroup}/${allocation.id.slice(0, 8)} ${allocation.status}`);
    }
  }
  if (total === 0) return { healthy: false, detail: `app ${app} has no running allocations` };
  if (unhealthy.length > 0) return { healthy: false, detail: `unhealthy allocations: ${unhealthy.join(', ')}` };
  return { healthy: true, detail: `all ${total} allocations of ${app} running with passing checks` };
}
