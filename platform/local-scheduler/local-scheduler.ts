/**
 * Local scheduler: the embedded default substrate driver. It runs each allocation as a detached
 * host process group, persists its state so that an API restart re-adopts live processes, and
 * implements the scheduler port (jobs, scaling, canaries, periodic and dispatched batch work).
 */
import { ConflictError, NotFoundError, ValidationError } from '../../domain/errors.js';
import {
  jobFingerprint,
  normalizeJob,
  type Allocation,
  type AllocationChange,
  type AllocationFilter,
  type DispatchRequest,
  type Execution,
  type JobSpec,
  type JobFilter,
  type JobStatus,
  type MemoryUsage,
  type Scheduler,
  type SubmitResult,
  type TaskGroupSpec,
  type Unsubscribe,
  type WriteOutcome,
} from '../../domain/scheduler/index.js';
import { toAllocation, toExecution, toJobStatus } from './allocations/allocation-view.js';
import { DriverCore, isTerminal } from './driver-core.js';
import type { LocalSchedulerOptions } from './local-scheduler-options.js';
import type { JobRecord } from './driver-state.js';
import { PeriodicLauncher } from './allocations/periodic-launcher.js';
import { listProcessesInSlices } from './tasks/process-table.js';
import { recoverAllocations } from './allocations/recover-allocations.js';
import { handOver, reconcileGroup } from './reconcile-group.js';
import type { AllocationRecord } from './driver-state.js';
import { validateJobForLocalDriver } from './validate-job.js';
import { traceMark } from '../../domain/observability/trace-marks.js';

/** The local driver. Create with {@link LocalScheduler.open}; call `close()` to detach (processes keep running). */
export class LocalScheduler implements Scheduler {
  readonly #core: DriverCore;
  readonly #periodic: PeriodicLauncher;
  #monitor: NodeJS.Timeout | undefined;
  #queue: Promise<unknown> = Promise.resolve();

  private constructor(options: LocalSchedulerOptions) {
    this.#core = new DriverCore(options);
    this.#periodic = new PeriodicLauncher(this.#core);
  }

  /** Opens the driver on a data dir: takes its lock, re-adopts live processes, replaces vanished ones, re-arms cron. */
  static async open(options: LocalSchedulerOptions): Promise<LocalScheduler> {
    const scheduler = new LocalScheduler(options);
    await recoverAllocations(scheduler.#core);
    await scheduler.#prepareAtOpen();
    scheduler.#core.startCapture();
    for (const job of Object.values(scheduler.#core.state.jobs)) scheduler.#periodic.arm(job, undefined);
    // Start before stop: an allocation that passes may complete the hand-over of its group.
    scheduler.#core.events.on('passing', (record: AllocationRecord) => {
      if (scheduler.#core.closed) return;
      scheduler
        .#exclusive(async () => scheduler.#handOver(record.jobId))
        .catch((error: unknown) =>
          scheduler.#core.logger.warn({ err: error, jobId: record.jobId }, 'hand-over failed'),
        );
    });
    scheduler.#monitor = setInterval(() => scheduler.#tick(), options.monitorInterval?.milliseconds ?? 250);
    scheduler.#monitor.unref();
    return scheduler;
  }

  /** Submits a job; durations are normalized to whole milliseconds first (see `normalizeJob`). */
  async submitJob(job: JobSpec): Promise<SubmitResult> {
    const normalized = normalizeJob(job);
    validateJobForLocalDriver(normalized, this.#core.ctx.hostVolumes, this.#core.ctx.containers !== undefined);
    traceMark('driver:submit');
    return this.#exclusive(() => this.#submit(normalized));
  }

  async stopJob(jobId: string, options: { readonly purge?: boolean } = {}): Promise<WriteOutcome> {
    return this.#exclusive(async () => {
      const core = this.#core;
      const job = core.job(jobId);
      const wasRunning = job.status === 'running';
      job.status = 'dead';
      this.#periodic.disarm(jobId);
      core.prepared?.discardJob(jobId);
      await Promise.all(
        core
          .records()
          .filter((a) => a.jobId === jobId)
          .map((a) => core.stopAllocation(a, 'job stopped')),
      );
      if (options.purge) {
        delete core.state.jobs[jobId];
        for (const a of core.records()) if (a.jobId === jobId) delete core.state.allocations[a.id];
        core.indexChanged();
        for (const e of Object.values(core.state.executions)) if (e.jobId === jobId) delete core.state.executions[e.id];
      }
      core.save();
      return wasRunning || options.purge ? 'deleted' : 'unchanged';
    });
  }

  async getJob(jobId: string): Promise<JobStatus | undefined> {
    const job = this.#core.state.jobs[jobId];
    return job ? toJobStatus(job, this.#periodic.nextLaunch(job)) : undefined;
  }

  async listJobs(filter: JobFilter = {}): Promise<readonly JobStatus[]> {
    // Filter before cloning: views are deep copies, and callers usually want one app's jobs.
    return this.#core
      .jobsOf(filter.app)
      .filter((j) => filter.app === undefined || j.spec.app === filter.app)
      .map((j) => toJobStatus(j, this.#periodic.nextLaunch(j)));
  }

  async listAllocations(filter: AllocationFilter = {}): Promise<readonly Allocation[]> {
    return this.#core
      .recordsOf(filter.app)
      .filter(
        (a) =>
          (filter.app === undefined || a.app === filter.app) &&
          (filter.jobId === undefined || a.jobId === filter.jobId) &&
          (filter.taskGroup === undefined || a.taskGroup === filter.taskGroup),
      )
      .filter((a) => filter.includeTerminal || !isTerminal(a.status))
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.index - b.index)
      .map(toAllocation);
  }

  async getAllocation(allocationId: string): Promise<Allocation | undefined> {
    const rec = this.#core.state.allocations[allocationId];
    return rec ? toAllocation(rec) : undefined;
  }

  async scale(jobId: string, taskGroup: string, count: number): Promise<WriteOutcome> {
    if (!Number.isInteger(count) || count < 0)
      throw new ValidationError(`scale ${jobId}.${taskGroup}: count ${count} must be a non-negative integer`);
    return this.#exclusive(async () => {
      const job = this.#core.job(jobId);
      if (!job.spec.taskGroups.some((g) => g.name === taskGroup))
        throw new NotFoundError(`job ${jobId} has no task group "${taskGroup}"`);
      const spec: JobSpec = {
        ...job.spec,
        taskGroups: job.spec.taskGroups.map((g) => (g.name === taskGroup ? { ...g, count } : g)),
      };
      validateJobForLocalDriver(spec, this.#core.ctx.hostVolumes, this.#core.ctx.containers !== undefined);
      return (await this.#submit(spec)).outcome;
    });
  }

  async promoteCanaries(jobId: string): Promise<WriteOutcome> {
    return this.#exclusive(async () => {
      const job = this.#core.job(jobId);
      if (job.awaitingPromotion.length === 0) return 'unchanged';
      for (const name of [...job.awaitingPromotion]) {
        const group = job.spec.taskGroups.find((g) => g.name === name);
        if (group) await reconcileGroup(this.#core, job, group, true);
      }
      job.awaitingPromotion = [];
      this.#handOver(jobId);
      this.#core.save();
      return 'updated';
    });
  }

  async pausePeriodic(jobId: string): Promise<WriteOutcome> {
    return this.#exclusive(async () => this.#setPaused(jobId, true));
  }

  async resumePeriodic(jobId: string): Promise<WriteOutcome> {
    return this.#exclusive(async () => this.#setPaused(jobId, false));
  }

  async forcePeriodic(jobId: string): Promise<Execution> {
    const job = this.#periodicJob(jobId);
    if (job.status !== 'running') throw new ConflictError(`job ${jobId} is stopped`);
    const [first] = await this.#periodic.launch(job, 'forced');
    if (!first) throw new ValidationError(`job ${jobId}: nothing to launch`);
    return first;
  }

  async dispatch(jobId: string, request: DispatchRequest = {}): Promise<Execution> {
    const job = this.#core.job(jobId);
    if (job.spec.type !== 'batch' || !job.spec.parameterized)
      throw new ValidationError(`job ${jobId}: only parameterized batch jobs can be dispatched`);
    if (job.status !== 'running') throw new ConflictError(`job ${jobId} is stopped`);
    const rule = job.spec.parameterized.payload;
    if (rule === 'required' && request.payload === undefined)
      throw new ValidationError(`dispatch ${jobId}: payload is required`);
    if (rule === 'forbidden' && request.payload !== undefined)
      throw new ValidationError(`dispatch ${jobId}: payload is forbidden`);
    const base = job.spec.taskGroups[0];
    if (!base) throw new ValidationError(`job ${jobId}: no task group`);
    const files = [...(base.task.files ?? [])];
    if (request.payload !== undefined)
      files.push({ destination: 'local/payload', contents: request.payload, mode: 0o400 });
    const timeout = request.timeout ?? base.task.timeout;
    const group: TaskGroupSpec = { ...base, task: { ...base.task, files, ...(timeout ? { timeout } : {}) } };
    const extraEnv = {
      ...(request.env ?? {}),
      ...(request.payload !== undefined ? { SVC_DISPATCH_PAYLOAD: request.payload } : {}),
    };
    return this.#core.launchExecution(job, group, 'dispatch', extraEnv, request.executionId);
  }

  async getExecution(executionId: string): Promise<Execution | undefined> {
    const rec = this.#core.state.executions[executionId];
    return rec ? toExecution(rec) : undefined;
  }

  async listExecutions(jobId: string): Promise<readonly Execution[]> {
    return Object.values(this.#core.state.executions)
      .filter((e) => e.jobId === jobId)
      .sort((a, b) => b.startedAt.localeCompare(a.startedAt))
      .map(toExecution);
  }

  async memoryUsage(allocationId: string): Promise<MemoryUsage> {
    const rec = this.#core.state.allocations[allocationId];
    if (!rec) throw new NotFoundError(`allocation ${allocationId} not found`);
    return { ...rec.memory };
  }

  watch(listener: (change: AllocationChange) => void): Unsubscribe {
    this.#core.events.on('change', listener);
    return () => this.#core.events.off('change', listener);
  }

  /** Stops supervising: timers, checks and cron stop, state is saved, the lock released; processes keep running. */
  /** Commits every output line allocations have written so far to the log sink. */
  async drainLogs(): Promise<void> {
    await this.#core.drainLogs();
  }

  /** Resolves once no container is being prepared ahead or removed (ADR 0228). */
  async preparedSettled(): Promise<void> {
    await this.#core.prepared?.settled();
  }

  async close(): Promise<void> {
    if (this.#core.closed) return;
    await this.#queue.catch(() => undefined);
    clearInterval(this.#monitor);
    this.#periodic.stopAll();
    // What was prepared ahead and not started goes: the next driver prepares its own (ADR 0228).
    await this.#core.prepared?.close();
    this.#core.close();
    // A spare's folders still being made are finished and removed before the driver counts as closed.
    await this.#core.aheadSettled();
  }

  /**
   * Removes containers a previous driver prepared and never started, then prepares the next
   * container of each group scaled to zero (not awaited: a wake that comes first runs its own).
   */
  async #prepareAtOpen(): Promise<void> {
    const core = this.#core;
    if (!core.prepared) return;
    const swept = await core.prepared.sweep(new Set(Object.keys(core.state.allocations)));
    if (swept > 0) core.logger.info({ containers: swept }, 'removed containers prepared by a previous driver');
    for (const job of Object.values(core.state.jobs))
      if (job.status === 'running')
        for (const group of job.spec.taskGroups) if (group.count === 0) void core.prepareAhead(job, group, 0);
  }

  async #submit(job: JobSpec): Promise<SubmitResult> {
    const core = this.#core;
    const existing = core.state.jobs[job.id];
    const fingerprint = jobFingerprint(job);
    if (existing && existing.status === 'running' && existing.fingerprint === fingerprint) {
      return {
        outcome: 'unchanged',
        jobVersion: existing.version,
        scaled: [],
        rolled: [],
        restarted: [],
        awaitingPromotion: existing.awaitingPromotion,
      };
    }
    this.#assertStaticPortsFree(job);
    const record: JobRecord = {
      spec: job,
      version: existing ? existing.version + 1 : 1,
      fingerprint,
      status: 'running',
      paused: existing?.paused ?? false,
      submittedAt: new Date().toISOString(),
      awaitingPromotion: [],
    };
    core.state.jobs[job.id] = record;
    core.jobPut(record, existing);
    const result = { scaled: [] as string[], rolled: [] as string[], restarted: [] as string[] };
    const groups = new Set(job.taskGroups.map((g) => g.name));
    await Promise.all(
      core
        .records()
        .filter((a) => a.jobId === job.id && a.kind === 'group' && !groups.has(a.taskGroup) && !isTerminal(a.status))
        .map((a) => core.stopAllocation(a, 'task group removed from job')),
    );
    if (job.type === 'service' || (job.type === 'batch' && !job.parameterized)) {
      for (const group of job.taskGroups) {
        const change = await reconcileGroup(core, record, group, false);
        if (change.scaled) result.scaled.push(group.name);
        if (change.rolled) result.rolled.push(group.name);
        if (change.restarted) result.restarted.push(group.name);
      }
    }
    this.#periodic.arm(record, existing?.status === 'running' ? existing.spec : undefined);
    core.save();
    return {
      outcome: existing ? 'updated' : 'created',
      jobVersion: record.version,
      ...result,
      awaitingPromotion: record.awaitingPromotion,
    };
  }

  /** Retires outdated allocations of every group of the job whose replacements all pass. */
  #handOver(jobId: string): void {
    const job = this.#core.state.jobs[jobId];
    if (!job || job.status !== 'running') return;
    let retired = 0;
    for (const group of job.spec.taskGroups) retired += handOver(this.#core, job, group);
    if (retired > 0) this.#core.save();
  }

  #setPaused(jobId: string, paused: boolean): WriteOutcome {
    const job = this.#periodicJob(jobId);
    if (job.paused === paused) return 'unchanged';
    job.paused = paused;
    this.#periodic.setPaused(jobId, paused);
    this.#core.save();
    return 'updated';
  }

  #ticking = false;

  #tick(): void {
    if (this.#core.runners.size === 0 || this.#ticking) return;
    this.#ticking = true;
    // Read in slices over several turns of the event loop (ADR 0190); one tick at a time.
    listProcessesInSlices()
      .then((table) => {
        if (this.#core.closed) return;
        const byPid = new Map(table.map((p) => [p.pid, p]));
        for (const runner of this.#core.runners.values()) runner.tick(table, byPid);
      })
      .catch((error: unknown) => this.#core.logger.warn({ err: error }, 'local scheduler: process table not read'))
      .finally(() => {
        this.#ticking = false;
      });
  }

  #assertStaticPortsFree(job: JobSpec): void {
    for (const group of job.taskGroups) {
      for (const port of group.ports) {
        if (port.static === undefined) continue;
        const holder = this.#core
          .records()
          .find(
            (a) =>
              !isTerminal(a.status) &&
              a.ports.some((p) => p.value === port.static) &&
              !(a.jobId === job.id && a.taskGroup === group.name),
          );
        if (holder) {
          throw new ConflictError(
            `job ${job.id}: static port ${port.static} is held by allocation ${holder.id} of ${holder.jobId}.${holder.taskGroup}`,
            {
              code: 'port_conflict',
            },
          );
        }
      }
    }
  }

  #periodicJob(jobId: string): JobRecord {
    const job = this.#core.job(jobId);
    if (job.spec.type !== 'periodic') throw new ValidationError(`job ${jobId} is not periodic`);
    return job;
  }

  #exclusive<T>(fn: () => Promise<T>): Promise<T> {
    if (this.#core.closed) return Promise.reject(new ConflictError('local scheduler is closed'));
    const run = this.#queue.then(fn, fn);
    this.#queue = run.catch(() => undefined);
    return run;
  }
}
