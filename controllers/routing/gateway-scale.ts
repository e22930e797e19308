/**
 * Counts decided at run time: the wake gateway raises gateway-managed processes (`scaling.min: 0`)
 * from zero, the idle scaler lowers them, and the autoscaler moves autoscaled processes
 * (`scaling.auto`) between min and max, while the app controller stays the only writer of jobs.
 * See docs/adr/0091-scale-to-zero-ownership.md and docs/adr/0193-autoscaling.md.
 */
import type { CanonicalAppSpec } from '../../domain/spec/index.js';
import type { JobSpec, Scheduler } from '../../domain/scheduler/index.js';
import { isGatewayManaged } from '../../domain/routing/index.js';

/** Who decided a count. */
export type ScaleSource = 'wake' | 'idle' | 'autoscaler';

/** Why a count changed: recorded as an event and shown on the app page and in `svc status`. */
export interface ScaleChange {
  readonly app: string;
  readonly process: string;
  readonly from: number;
  readonly to: number;
  readonly source: ScaleSource;
  readonly reason: string;
  /** ISO 8601. */
  readonly at: string;
  /** The metric and its value per allocation, for autoscaler decisions. */
  readonly metric?: string;
  readonly value?: number;
  readonly target?: number;
}

/** The desired counts decided at run time, by `<app>/<process>`. */
export class GatewayScale {
  private readonly desired = new Map<string, number>();
  private readonly listeners = new Set<(app: string) => void>();
  private readonly changeListeners = new Set<(change: ScaleChange) => void>();

  /**
   * Records the count wanted for a process and tells the app controller (via `onChange`); with
   * `why`, a change of count is also reported to `onScaleChange` listeners (the decision's event).
   */
  set(
    app: string,
    process: string,
    count: number,
    why?: Omit<ScaleChange, 'app' | 'process' | 'to' | 'at'> & { readonly at?: string },
  ): void {
    const key = `${app}/${process}`;
    if (this.desired.get(key) !== count) this.desired.set(key, count);
    for (const listener of this.listeners) listener(app);
    if (why === undefined || why.from === count) return;
    const change: ScaleChange = { ...why, app, process, to: count, at: why.at ?? new Date().toISOString() };
    for (const listener of this.changeListeners) listener(change);
  }

  /** Calls `listener` with every change of count that carries its reason; returns an unsubscribe. */
  onScaleChange(listener: (change: ScaleChange) => void): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
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

/** True when the process's count moves at run time: gateway-managed (min 0) or autoscaled (`scaling.auto`). */
export function hasRuntimeCount(spec: CanonicalAppSpec, process: string): boolean {
  return isGatewayManaged(spec, process) || spec.processes[process]?.scaling.auto !== undefined;
}

/**
 * The jobs with the counts of run-time scaled groups replaced: the count decided at run time when
 * there is one, else the count the scheduler currently has (so an API restart or a new release does
 * not undo a wake or a scale-out), else the translated count (`scaling.min` or `per_region`). An
 * autoscaled group stays between its translated count and `scaling.max`.
 */
export async function withGatewayCounts(
  spec: CanonicalAppSpec,
  jobs: readonly JobSpec[],
  scale: GatewayScale | undefined,
  schedulerOf: (job: JobSpec) => Promise<Scheduler>,
): Promise<JobSpec[]> {
  const out: JobSpec[] = [];
  for (const job of jobs) {
    if (job.type !== 'service' || !job.taskGroups.some((g) => hasRuntimeCount(spec, g.name))) {
      out.push(job);
      continue;
    }
    const current = await (await schedulerOf(job)).getJob(job.id);
    const taskGroups = job.taskGroups.map((group) => {
      if (!hasRuntimeCount(spec, group.name)) return group;
      const live =
        current?.status === 'running' ? current.spec.taskGroups.find((g) => g.name === group.name)?.count : undefined;
      let count = scale?.get(spec.name, group.name) ?? live ?? group.count;
      const scaling = spec.processes[group.name]!.scaling;
      if (scaling.auto !== undefined) {
        // The translated count is this job's floor (min, or per_region on a regional target).
        const ceiling = Math.max(scaling.max ?? group.count, group.count, isGatewayManaged(spec, group.name) ? 1 : 0);
        count = Math.min(Math.max(count, group.count), ceiling);
      }
      return count === group.count ? group : { ...group, count };
    });
    out.push({ ...job, taskGroups });
  }
  return out;
}
