/**
 * Scale to zero: the counts of gateway-managed processes (`scaling.min: 0`), which the wake gateway
 * raises on demand and the idle scaler lowers, while the app controller stays the only writer of
 * jobs. See docs/adr/0091-scale-to-zero-ownership.md.
 */
import type { CanonicalAppSpec } from '../../domain/spec/index.js';
import type { JobSpec, Scheduler } from '../../domain/scheduler/index.js';
import { isGatewayManaged } from '../../domain/routing/index.js';

/** The desired counts the gateway asked for, by `<app>/<process>`. */
export class GatewayScale {
  private readonly desired = new Map<string, number>();
  private readonly listeners = new Set<(app: string) => void>();

  /** Records the count the gateway wants for a process and tells the app controller (via `onChange`). */
  set(app: string, process: string, count: number): void {
    const key = `${app}/${process}`;
    if (this.desired.get(key) === count) {
      for (const listener of this.listeners) listener(app);
      return;
    }
    this.desired.set(key, count);
    for (const listener of this.listeners) listener(app);
  }

  /** The count the gateway asked for, if it asked since this process started. */
  get(app: string, process: string): number | undefined {
    return this.desired.get(`${app}/${process}`);
  }

  /** Calls `listener` with the app name whenever a count is set; returns an unsubscribe. */
  onChange(listener: (app: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

/**
 * The jobs with the counts of gateway-managed groups replaced: the gateway's desired count when
 * it set one, else the count the scheduler currently has (so an API restart does not scale a woken
 * process down), else the translated count (`scaling.min`, 0).
 */
export async function withGatewayCounts(
  spec: CanonicalAppSpec,
  jobs: readonly JobSpec[],
  scale: GatewayScale | undefined,
  schedulerOf: (job: JobSpec) => Promise<Scheduler>,
): Promise<JobSpec[]> {
  const out: JobSpec[] = [];
  for (const job of jobs) {
    if (job.type !== 'service' || !job.taskGroups.some((g) => isGatewayManaged(spec, g.name))) {
      out.push(job);
      continue;
    }
    const current = await (await schedulerOf(job)).getJob(job.id);
    const taskGroups = job.taskGroups.map((group) => {
      if (!isGatewayManaged(spec, group.name)) return group;
      const live =
        current?.status === 'running' ? current.spec.taskGroups.find((g) => g.name === group.name)?.count : undefined;
      const count = scale?.get(spec.name, group.name) ?? live ?? group.count;
      return count === group.count ? group : { ...group, count };
    });
    out.push({ ...job, taskGroups });
  }
  return out;
}
