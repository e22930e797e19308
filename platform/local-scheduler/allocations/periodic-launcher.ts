/**
 * Periodic launcher: the cron timers (croner) of periodic jobs, which launch one child
 * execution per task group on each tick unless paused or still overlapping.
 */
import { Cron } from 'croner';
import type { Execution, JobSpec } from '../../../domain/scheduler/index.js';
import { isTerminal, type DriverCore } from '../driver-core.js';
import type { JobRecord } from '../driver-state.js';

/** Keeps one cron timer per running periodic job. */
export class PeriodicLauncher {
  readonly #core: DriverCore;
  readonly #crons = new Map<string, Cron>();

  constructor(core: DriverCore) {
    this.#core = core;
  }

  /** (Re)creates the timer of a job when its schedule changed; removes it for stopped or non-periodic jobs. */
  arm(job: JobRecord, previous: JobSpec | undefined): void {
    const id = job.spec.id;
    const periodic = job.spec.periodic;
    const same = previous?.periodic?.cron === periodic?.cron && previous?.periodic?.timeZone === periodic?.timeZone;
    if (same && this.#crons.has(id) && job.status === 'running') return;
    this.disarm(id);
    if (job.spec.type !== 'periodic' || !periodic || job.status !== 'running') return;
    const cron = new Cron(periodic.cron, { paused: job.paused, timezone: periodic.timeZone ?? 'Etc/UTC' }, () => {
      const current = this.#core.state.jobs[id];
      if (current && !current.paused) {
        void this.launch(current, 'scheduled').catch((error: unknown) =>
          this.#core.logger.error({ err: error, jobId: id }, 'periodic launch failed'),
        );
      }
    });
    this.#crons.set(id, cron);
  }

  disarm(jobId: string): void {
    this.#crons.get(jobId)?.stop();
    this.#crons.delete(jobId);
  }

  setPaused(jobId: string, paused: boolean): void {
    const cron = this.#crons.get(jobId);
    if (paused) cron?.pause();
    else cron?.resume();
  }

  /** Next planned launch, or undefined while paused or unscheduled. */
  nextLaunch(job: JobRecord): Date | undefined {
    if (job.paused) return undefined;
    return this.#crons.get(job.spec.id)?.nextRun() ?? undefined;
  }

  /** Launches a child per task group; scheduled launches skip a group whose previous child still runs. */
  async launch(job: JobRecord, why: 'scheduled' | 'forced'): Promise<Execution[]> {
    if (this.#core.closed || job.status !== 'running') return [];
    const overlapBlocked = (job.spec.periodic?.prohibitOverlap ?? true) && why === 'scheduled';
    const out: Execution[] = [];
    for (const group of job.spec.taskGroups) {
      const running = this.#core
        .records()
        .some(
          (a) =>
            a.jobId === job.spec.id &&
            a.taskGroup === group.name &&
            a.kind === 'periodic_child' &&
            !isTerminal(a.status),
        );
      if (running && overlapBlocked) {
        this.#core.logger.info(
          { jobId: job.spec.id, taskGroup: group.name },
          'periodic launch skipped: previous child still running',
        );
        continue;
      }
      out.push(await this.#core.launchExecution(job, group, 'periodic_child', { SVC_PERIODIC_LAUNCH: why }));
    }
    return out;
  }

  stopAll(): void {
    for (const cron of this.#crons.values()) cron.stop();
    this.#crons.clear();
  }
}
