/**
 * Operator actions on periodic (cron) processes: trigger a run now, pause, resume, and override the
 * schedule. Each emits its `job.*` event with the cron correlation key. A schedule override lives in
 * control.db until removed or until the committed spec's schedule changes; the app controller
 * applies it when it submits the periodic job.
 */
import { Cron } from 'croner';
import { NotFoundError, ValidationError } from '../../domain/errors.js';
import { operatorJobEvent } from '../../domain/events/operator-job-events.js';
import { discardEvents, type EventEmitterPort } from '../../domain/events/index.js';
import type { Execution, JobSpec } from '../../domain/scheduler/index.js';
import type { CanonicalAppSpec } from '../../domain/spec/index.js';
import type { Db } from '../../store/database.js';
import { getApp } from '../../store/control/apps.js';
import {
  listScheduleOverrides,
  putScheduleOverride,
  removeScheduleOverride,
} from '../../store/control/schedule-overrides.js';
import type { SchedulerTargets } from '../apps/scheduler-targets.js';

export interface CronServiceOptions {
  readonly db: Db;
  readonly targets: SchedulerTargets;
  readonly events?: EventEmitterPort;
  /** Re-reconcile an app after its schedule changed. */
  readonly enqueue: (app: string) => void;
}

/** The scheduled process an action is about. */
interface Target {
  readonly app: string;
  readonly process: string;
  readonly schedule: string;
}

/** Applies the app's live schedule overrides to its periodic jobs, dropping overrides the spec has moved past. */
export function applyScheduleOverrides(
  db: Db,
  app: string,
  spec: CanonicalAppSpec,
  jobs: readonly JobSpec[],
): JobSpec[] {
  const overrides = listScheduleOverrides(db, app);
  if (overrides.length === 0) return [...jobs];
  const live = new Map<string, string>();
  for (const override of overrides) {
    const specSchedule = spec.processes[override.process]?.schedule;
    if (specSchedule === undefined || specSchedule !== override.specSchedule)
      removeScheduleOverride(db, app, override.process);
    else live.set(override.process, override.schedule);
  }
  return jobs.map((job) => {
    const process = job.meta?.['svc.process'];
    const schedule = process === undefined ? undefined : live.get(process);
    return job.type === 'periodic' && job.periodic && schedule !== undefined
      ? { ...job, periodic: { ...job.periodic, cron: schedule } }
      : job;
  });
}

/** What `POST /api/apps/{id}/cron/trigger` answers: the executions started. */
export interface CronTriggered {
  readonly app: string;
  readonly process: string;
  readonly executions: Execution[];
}

/** What pausing or resuming a periodic process answers: each job and what happened to it. */
export interface CronPauseChange {
  readonly app: string;
  readonly process: string;
  readonly paused: boolean;
  readonly jobs: { readonly jobId: string; readonly outcome: string }[];
}

/** What `PUT /api/apps/{id}/cron/schedule` answers. */
export interface CronScheduleChange {
  readonly app: string;
  readonly process: string;
  readonly schedule: string;
  readonly previousSchedule: string;
  /** False when the schedule returned to the committed one. */
  readonly overridden: boolean;
}

/** Cron actions for operators. */
export class CronService {
  readonly #events: EventEmitterPort;

  constructor(private readonly options: CronServiceOptions) {
    this.#events = options.events ?? discardEvents;
  }

  #target(app: string, process: string | undefined): Target {
    const spec = getApp(this.options.db, app)?.spec;
    if (!spec)
      throw new NotFoundError(`app "${app}" is not discovered or has no valid spec`, {
        code: 'app_not_found',
        details: { app },
      });
    const scheduled = Object.entries(spec.processes).filter(([, p]) => p.schedule !== undefined);
    if (scheduled.length === 0)
      throw new ValidationError(`app "${app}" has no scheduled process`, { code: 'no_scheduled_process' });
    if (process === undefined && scheduled.length > 1) {
      throw new ValidationError(`app "${app}" has several scheduled processes; name one with "process"`, {
        code: 'process_required',
        details: { processes: scheduled.map(([n]) => n) },
      });
    }
    const found = process === undefined ? scheduled[0] : scheduled.find(([name]) => name === process);
    if (!found)
      throw new NotFoundError(`app "${app}" has no scheduled process "${process}"`, {
        code: 'process_not_found',
        details: { processes: scheduled.map(([n]) => n) },
      });
    return { app, process: found[0], schedule: found[1].schedule! };
  }

  async #jobs(target: Target) {
    const out = [];
    for (const { scheduler } of await this.options.targets.all()) {
      for (const job of await scheduler.listJobs({ app: target.app })) {
        if (
          job.spec.type === 'periodic' &&
          job.status === 'running' &&
          (job.spec.meta?.['svc.process'] ?? '') === target.process
        )
          out.push({ scheduler, job });
      }
    }
    if (out.length === 0)
      throw new ValidationError(`${target.app}/${target.process} is not running (deploy the app first)`, {
        code: 'job_not_running',
      });
    return out;
  }

  /** Runs the periodic process now, paused or not. */
  async trigger(app: string, input: { process?: string; by?: string } = {}): Promise<CronTriggered> {
    const target = this.#target(app, input.process);
    const executions: Execution[] = [];
    for (const { scheduler, job } of await this.#jobs(target)) {
      executions.push(await scheduler.forcePeriodic(job.spec.id));
      await this.#events.emit(
        operatorJobEvent('triggered', {
          app,
          process: target.process,
          jobId: job.spec.id,
          ...(input.by ? { by: input.by } : {}),
        }),
      );
    }
    return { app, process: target.process, executions };
  }

  /** Pauses (or resumes) launches; running children continue. */
  async setPaused(
    app: string,
    paused: boolean,
    input: { process?: string; by?: string } = {},
  ): Promise<CronPauseChange> {
    const target = this.#target(app, input.process);
    const jobs = [];
    for (const { scheduler, job } of await this.#jobs(target)) {
      const outcome = paused ? await scheduler.pausePeriodic(job.spec.id) : await scheduler.resumePeriodic(job.spec.id);
      jobs.push({ jobId: job.spec.id, outcome });
      if (outcome !== 'unchanged')
        await this.#events.emit(
          operatorJobEvent(paused ? 'paused' : 'resumed', {
            app,
            process: target.process,
            jobId: job.spec.id,
            ...(input.by ? { by: input.by } : {}),
          }),
        );
    }
    return { app, process: target.process, paused, jobs };
  }

  /** Overrides the schedule (a cron expression), or with `null` returns to the spec's. */
  async updateSchedule(
    app: string,
    input: { process?: string; schedule: string | null; by?: string },
  ): Promise<CronScheduleChange> {
    const target = this.#target(app, input.process);
    const previous =
      listScheduleOverrides(this.options.db, app).find((o) => o.process === target.process)?.schedule ??
      target.schedule;
    if (input.schedule !== null) {
      try {
        new Cron(input.schedule, { paused: true }).stop();
      } catch (error) {
        throw new ValidationError(
          `schedule "${input.schedule}" is not a cron expression: ${(error as Error).message}`,
          { code: 'invalid_schedule' },
        );
      }
      putScheduleOverride(this.options.db, {
        app,
        process: target.process,
        schedule: input.schedule,
        specSchedule: target.schedule,
        updatedBy: input.by ?? null,
      });
    } else {
      removeScheduleOverride(this.options.db, app, target.process);
    }
    const schedule = input.schedule ?? target.schedule;
    this.options.enqueue(app);
    await this.#events.emit(
      operatorJobEvent('schedule_updated', {
        app,
        process: target.process,
        jobId: `${app}-${target.process}`,
        schedule,
        previousSchedule: previous,
        ...(input.by ? { by: input.by } : {}),
      }),
    );
    return { app, process: target.process, schedule, previousSchedule: previous, overridden: input.schedule !== null };
  }
}
