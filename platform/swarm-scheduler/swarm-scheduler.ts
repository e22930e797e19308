/**
 * Swarm scheduler: the driver that runs apps on a Docker Swarm (`SVC_SCHEDULER_DRIVER=swarm`,
 * docs/drivers.md). Each service task group of a job is one replicated Swarm service (see
 * `domain/scheduler/swarm`), written through the manager's Engine API; its tasks are read back as
 * allocations and registered with the platform's own checks (`task-sync.ts`). Job records stay with
 * the platform (`job-records.ts`). At open the driver puts back every service it owns to its record
 * (a service changed by hand is rewritten) and removes the services of jobs it no longer knows.
 */
import type Docker from 'dockerode';
import type { Logger } from 'pino';
import { ConflictError, NotFoundError, ValidationError } from '../../domain/errors.js';
import type { RegistryWriter } from '../../domain/registry/index.js';
import type { LogSink } from '../../domain/logs/index.js';
import {
  normalizeJob,
  type Allocation,
  type AllocationChange,
  type AllocationFilter,
  type DispatchRequest,
  type Execution,
  type JobFilter,
  type JobSpec,
  type JobStatus,
  type MemoryUsage,
  type Scheduler,
  type SubmitResult,
  type Unsubscribe,
  type WriteOutcome,
} from '../../domain/scheduler/index.js';
import { isTerminalAllocation } from '../../domain/scheduler/allocation.js';
import { canonicalJson } from '../../domain/canonical-json.js';
import { SwarmLabel, groupVersionHash, validateJobForSwarm } from '../../domain/scheduler/swarm/index.js';
import { silentLogger } from '../logger.js';
import { JobRecords, statusOf, type SwarmJobRecord } from './job-records.js';
import { TaskSync } from './task-sync.js';
import { NETWORK, SwarmObjects } from './swarm-objects.js';
import { fromEngine } from './engine.js';
import { TaskLogs } from './task-logs.js';
import { SwarmExecutions } from './swarm-executions.js';
import { SwarmPeriodic } from './swarm-periodic.js';

/** Options of the swarm driver. */
export interface SwarmSchedulerOptions {
  readonly engine: Docker;
  /** Where job records are kept. */
  readonly dataDir: string;
  readonly registry: RegistryWriter;
  /** Each app's secret files, `<appSecretsDir>/<app>/<KEY>`, become Swarm secrets. @default none */
  readonly appSecretsDir?: string;
  /** @default local */
  readonly region?: string;
  /** @default dc1 */
  readonly datacenter?: string;
  /** @default silent */
  readonly logger?: Logger;
  /** Full re-read period of tasks. @default 5000 */
  readonly resyncMs?: number;
  /** Where tasks' output is delivered (ADR 0165). @default not captured */
  readonly logs?: LogSink;
  /** The address nodes pull the managed registry's images from (`SVC_SWARM_REGISTRY`). @default as released */
  readonly nodeRegistry?: string;
}

/** The swarm driver. Create with {@link SwarmScheduler.open}; `close()` stops following (services keep running). */
export class SwarmScheduler implements Scheduler {
  readonly #options: SwarmSchedulerOptions;
  readonly #engine: Docker;
  readonly #records: JobRecords;
  readonly #sync: TaskSync;
  readonly #logs: TaskLogs | undefined;
  readonly #executions: SwarmExecutions;
  readonly #objects: SwarmObjects;
  readonly #periodic: SwarmPeriodic;
  readonly #region: string;
  #queue: Promise<unknown> = Promise.resolve();
  /** Groups (`<job>/<group>`) whose older services go once the named one is ready. */
  readonly #handOvers = new Map<string, { service: string; replicas: number }>();
  #handOverQueued = false;

  private constructor(options: SwarmSchedulerOptions) {
    this.#options = options;
    this.#engine = options.engine;
    this.#records = new JobRecords(options.dataDir);
    this.#region = options.region ?? 'local';
    this.#sync = new TaskSync({
      engine: options.engine,
      registry: options.registry,
      region: this.#region,
      datacenter: options.datacenter ?? 'dc1',
      logger: options.logger ?? silentLogger(),
      ...(options.resyncMs !== undefined ? { resyncMs: options.resyncMs } : {}),
      checkOf: (service) => this.#checkOf(service),
    });
    this.#objects = new SwarmObjects({
      engine: options.engine,
      region: this.#region,
      ...(options.appSecretsDir !== undefined ? { appSecretsDir: options.appSecretsDir } : {}),
      ...(options.nodeRegistry !== undefined ? { nodeRegistry: options.nodeRegistry } : {}),
    });
    this.#executions = new SwarmExecutions({
      engine: options.engine,
      region: this.#region,
      network: NETWORK,
      ...(options.nodeRegistry !== undefined ? { nodeRegistry: options.nodeRegistry } : {}),
      logger: options.logger ?? silentLogger(),
      secretsOf: (job, group) => this.#objects.secretsFor(job, group),
      prepareVolumes: (job, group) => this.#objects.volumes.prepare(job, group),
    });
    this.#periodic = new SwarmPeriodic(
      this.#executions,
      (jobId) => this.#records.get(jobId),
      options.logger ?? silentLogger(),
    );
    this.#logs = options.logs
      ? new TaskLogs(options.engine, options.logs, options.logger ?? silentLogger())
      : undefined;
    if (this.#logs) this.#sync.events.on('change', (change: AllocationChange) => this.#capture(change.allocation));
    // A run that ended is read (its output kept) and its service removed, whether or not anyone asks.
    this.#sync.events.on('change', ({ allocation }: AllocationChange) => {
      if (allocation.executionId !== undefined && isTerminalAllocation(allocation.status))
        void this.#executions.get(allocation.executionId).catch(() => undefined);
    });
  }

  /** Follows a task's output, labelled with its job's process and release. */
  #capture(allocation: Allocation): void {
    const record = this.#records.get(allocation.jobId);
    const commit = record && record.version === allocation.jobVersion ? record.spec.meta?.['svc.commit'] : undefined;
    this.#logs?.follow(allocation, {
      process: record?.spec.meta?.['svc.process'] ?? allocation.taskGroup,
      release: commit !== undefined ? commit.slice(0, 12) : `v${allocation.jobVersion}`,
    });
  }

  /** Opens the driver: adopts or puts back the services it owns, removes those of unknown jobs, then follows tasks. */
  static async open(options: SwarmSchedulerOptions): Promise<SwarmScheduler> {
    const scheduler = new SwarmScheduler(options);
    await scheduler.#objects.ensureNetwork();
    await scheduler.#objects.volumes.removeLeftovers();
    await scheduler.#exclusive(() => scheduler.#adopt());
    const handOver = () => {
      if (scheduler.#handOvers.size === 0 || scheduler.#handOverQueued) return;
      scheduler.#handOverQueued = true;
      void scheduler
        .#exclusive(async () => {
          scheduler.#handOverQueued = false;
          await scheduler.#handOver();
        })
        .catch((error: unknown) =>
          (options.logger ?? silentLogger()).warn({ err: error }, 'swarm hand-over failed; retried on the next change'),
        );
    };
    scheduler.#sync.events.on('change', handOver);
    scheduler.#sync.events.on('health', handOver);
    await scheduler.#sync.start();
    handOver();
    return scheduler;
  }

  async submitJob(job: JobSpec): Promise<SubmitResult> {
    const normalized = normalizeJob(job);
    validateJobForSwarm(normalized);
    return this.#exclusive(() => this.#submit(normalized));
  }

  async stopJob(jobId: string, options: { readonly purge?: boolean } = {}): Promise<WriteOutcome> {
    return this.#exclusive(async (): Promise<WriteOutcome> => {
      const record = this.#records.get(jobId);
      const removed = await this.#objects.removeServices((s) => s.Spec?.Labels?.[SwarmLabel.job] === jobId);
      await this.#objects.removeSecrets(jobId, new Set());
      if (record === undefined) {
        if (removed === 0) throw new NotFoundError(`job "${jobId}" not found`, { details: { jobId } });
        return 'deleted';
      }
      this.#periodic.disarm(jobId);
      if (options.purge) this.#records.delete(jobId);
      else this.#records.put({ ...record, status: 'dead' });
      await this.#sync.sync();
      return 'deleted';
    });
  }

  async getJob(jobId: string): Promise<JobStatus | undefined> {
    const record = this.#records.get(jobId);
    return record === undefined ? undefined : statusOf(record, this.#periodic.nextLaunchAt(jobId));
  }

  async listJobs(filter: JobFilter = {}): Promise<readonly JobStatus[]> {
    return this.#records
      .all()
      .filter((r) => filter.app === undefined || r.spec.app === filter.app)
      .map((record) => statusOf(record, this.#periodic.nextLaunchAt(record.spec.id)));
  }

  async listAllocations(filter: AllocationFilter = {}): Promise<readonly Allocation[]> {
    await this.#sync.sync();
    return this.#sync
      .allocations()
      .filter(
        (a) =>
          (filter.app === undefined || a.app === filter.app) &&
          (filter.jobId === undefined || a.jobId === filter.jobId) &&
          (filter.taskGroup === undefined || a.taskGroup === filter.taskGroup) &&
          (filter.includeTerminal === true || !isTerminalAllocation(a.status)),
      )
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  async getAllocation(allocationId: string): Promise<Allocation | undefined> {
    await this.#sync.sync();
    return this.#sync.allocations().find((a) => a.id === allocationId);
  }

  async scale(jobId: string, taskGroup: string, count: number): Promise<WriteOutcome> {
    if (!Number.isInteger(count) || count < 0)
      throw new ValidationError(`count must be a whole number of at least 0, not ${count}`, { details: { count } });
    return this.#exclusive(async (): Promise<WriteOutcome> => {
      const record = this.#records.get(jobId);
      const group = record?.spec.taskGroups.find((g) => g.name === taskGroup);
      if (!record || record.status === 'dead' || !group)
        throw new NotFoundError(`task group "${taskGroup}" of job "${jobId}" not found`, {
          details: { jobId, taskGroup },
        });
      const service = await this.#objects.currentService(record.spec, group);
      if ((record.scaled[taskGroup] ?? group.count) === count && service?.Spec?.Mode?.Replicated?.Replicas === count)
        return 'unchanged';
      this.#records.put({ ...record, scaled: { ...record.scaled, [taskGroup]: count } });
      if (service?.Spec) {
        await this.#engine
          .getService(service.ID)
          .update({ version: service.Version?.Index, ...service.Spec, Mode: { Replicated: { Replicas: count } } });
      } else {
        const { service: written } = await this.#objects.write(record.spec, group, record.version, count);
        this.#handOvers.set(`${jobId}/${taskGroup}`, { service: written, replicas: count });
      }
      await this.#sync.sync();
      return 'updated';
    });
  }

  /** Swarm rolls by itself (start-first, gated by the platform's checks): there are never canaries to promote. */
  async promoteCanaries(jobId: string): Promise<WriteOutcome> {
    if (!this.#records.get(jobId)) throw new NotFoundError(`job "${jobId}" not found`, { details: { jobId } });
    return 'unchanged';
  }

  pausePeriodic(jobId: string): Promise<WriteOutcome> {
    return this.#setPaused(jobId, true);
  }

  resumePeriodic(jobId: string): Promise<WriteOutcome> {
    return this.#setPaused(jobId, false);
  }

  /** Launches a periodic job's run now, paused or not. */
  async forcePeriodic(jobId: string): Promise<Execution> {
    const record = this.#periodicRecord(jobId);
    return this.#periodic.launch(record).catch((error: unknown) => {
      throw fromEngine(error);
    });
  }

  #setPaused(jobId: string, paused: boolean): Promise<WriteOutcome> {
    return this.#exclusive(async (): Promise<WriteOutcome> => {
      const record = this.#periodicRecord(jobId);
      if ((record.paused ?? false) === paused) return 'unchanged';
      const next = { ...record, paused };
      this.#records.put(next);
      this.#periodic.arm(next);
      return 'updated';
    });
  }

  #periodicRecord(jobId: string): SwarmJobRecord {
    const record = this.#records.get(jobId);
    if (!record || record.status === 'dead')
      throw new NotFoundError(`job "${jobId}" not found`, { details: { jobId } });
    if (record.spec.type !== 'periodic')
      throw new ConflictError(`job "${jobId}" is not periodic`, { code: 'not_periodic', details: { jobId } });
    return record;
  }

  /** Runs one execution of a parameterized batch job (a function invocation) as a one-task Swarm job. */
  async dispatch(jobId: string, request?: DispatchRequest): Promise<Execution> {
    const record = this.#records.get(jobId);
    if (!record || record.status === 'dead')
      throw new NotFoundError(`job "${jobId}" not found`, { details: { jobId } });
    return this.#executions.dispatch(record, request).catch((error: unknown) => {
      throw fromEngine(error);
    });
  }

  getExecution(executionId: string): Promise<Execution | undefined> {
    return this.#executions.get(executionId);
  }

  listExecutions(jobId: string): Promise<readonly Execution[]> {
    return this.#executions.list(jobId);
  }

  async memoryUsage(allocationId: string): Promise<MemoryUsage> {
    const allocation = await this.getAllocation(allocationId);
    if (!allocation)
      throw new NotFoundError(`allocation "${allocationId}" not found`, { details: { allocation: allocationId } });
    return allocation.memory;
  }

  /** Calls `listener` after each round of CPU and memory samples of running tasks. */
  onSampled(listener: () => void): Unsubscribe {
    this.#sync.events.on('sampled', listener);
    return () => this.#sync.events.off('sampled', listener);
  }

  watch(listener: (change: AllocationChange) => void): Unsubscribe {
    this.#sync.events.on('change', listener);
    return () => this.#sync.events.off('change', listener);
  }

  /** Stops following tasks and deregisters their instances; the services keep running. */
  async close(): Promise<void> {
    await this.#queue.catch(() => undefined);
    this.#logs?.close();
    this.#executions.close();
    this.#periodic.close();
    this.#sync.close();
  }

  async #submit(job: JobSpec): Promise<SubmitResult> {
    const record = this.#records.get(job.id);
    const same =
      record !== undefined && record.status === 'running' && canonicalJson(record.spec) === canonicalJson(job);
    const version = same ? record.version : (record?.version ?? 0) + 1;
    const scaled: string[] = [];
    const rolled: string[] = [];
    const scaledCounts: Record<string, number> = {};
    // A parameterized batch job (functions) runs only when dispatched: it has no standing services.
    for (const group of job.type === 'service' ? job.taskGroups : []) {
      const before = record?.spec.taskGroups.find((g) => g.name === group.name);
      // A count set by scale (autoscaling) stands until the submitted spec changes the group's own count.
      const kept = record?.scaled[group.name];
      if (kept !== undefined && before?.count === group.count) scaledCounts[group.name] = kept;
      const replicas = scaledCounts[group.name] ?? group.count;
      const { outcome: written, service } = await this.#objects.write(job, group, version, replicas);
      // The group's other services (older versions) are removed once this one's tasks pass.
      this.#handOvers.set(`${job.id}/${group.name}`, { service, replicas });
      // A group whose version changed rolls (to a new service, or back to one still running).
      if (before === undefined || groupVersionHash(record!.spec, before) !== groupVersionHash(job, group))
        rolled.push(group.name);
      else if (written !== 'unchanged') scaled.push(group.name);
    }
    const groups = new Set(job.taskGroups.map((g) => g.name));
    const removed = await this.#objects.removeServices(
      (s) => s.Spec?.Labels?.[SwarmLabel.job] === job.id && !groups.has(s.Spec.Labels[SwarmLabel.group] ?? ''),
    );
    for (const key of this.#handOvers.keys())
      if (key.startsWith(`${job.id}/`) && !groups.has(key.slice(job.id.length + 1))) this.#handOvers.delete(key);
    const stored: SwarmJobRecord = {
      spec: job,
      version,
      status: 'running',
      submittedAt: same ? record.submittedAt : new Date().toISOString(),
      scaled: scaledCounts,
      ...(record?.status === 'running' && record.paused ? { paused: true } : {}),
    };
    this.#records.put(stored);
    this.#periodic.arm(stored);
    await this.#objects.removeSecrets(job.id, await this.#objects.secretsInUse(job.id));
    await this.#sync.sync();
    const outcome: WriteOutcome =
      record === undefined || record.status === 'dead'
        ? 'created'
        : same && scaled.length + rolled.length + removed === 0
          ? 'unchanged'
          : 'updated';
    return { outcome, jobVersion: version, scaled, rolled, restarted: [], awaitingPromotion: [] };
  }

  /**
   * Start before stop, gated by the platform's checks: a group's older services are removed once the
   * current service has its replicas running, each passing its checks. A version that never passes
   * leaves the old one serving; the deploy's rollback then makes the old one current again.
   */
  async #handOver(): Promise<void> {
    for (const [key, target] of [...this.#handOvers]) {
      const [jobId = '', group = ''] = [key.slice(0, key.lastIndexOf('/')), key.slice(key.lastIndexOf('/') + 1)];
      const services = await this.#objects.groupServices(jobId, group);
      const current = services.find((s) => s.Spec?.Name === target.service);
      const others = services.filter((s) => s !== current);
      if (current === undefined || others.length === 0) {
        if (current !== undefined || services.length === 0) this.#handOvers.delete(key);
        continue;
      }
      const ready = this.#sync.readyTasks(current.ID);
      if (ready < target.replicas) continue;
      for (const old of others) await this.#engine.getService(old.ID).remove();
      this.#handOvers.delete(key);
      (this.#options.logger ?? silentLogger()).info(
        { job: jobId, group, service: target.service, removed: others.map((o) => o.Spec?.Name) },
        'swarm service handed over',
      );
    }
  }

  /** Puts back every recorded job's services; removes services of jobs with no running record. */
  async #adopt(): Promise<void> {
    for (const record of this.#records.all()) this.#periodic.arm(record);
    const running = new Set(
      this.#records
        .all()
        .filter((r) => r.status === 'running')
        .map((r) => r.spec.id),
    );
    const gone = await this.#objects.removeServices((s) => !running.has(s.Spec?.Labels?.[SwarmLabel.job] ?? ''));
    if (gone > 0)
      (this.#options.logger ?? silentLogger()).info({ services: gone }, 'removed swarm services of unknown jobs');
    for (const record of this.#records.all().filter((r) => r.status === 'running' && r.spec.type === 'service'))
      for (const group of record.spec.taskGroups) {
        const replicas = record.scaled[group.name] ?? group.count;
        const { service } = await this.#objects.write(record.spec, group, record.version, replicas);
        this.#handOvers.set(`${record.spec.id}/${group.name}`, { service, replicas });
      }
  }

  #checkOf(service: string): { path: string; intervalMs: number; timeoutMs: number } | undefined {
    for (const record of this.#records.all())
      for (const group of record.spec.taskGroups)
        for (const registered of group.services)
          if (registered.name === service && registered.check)
            return {
              path: registered.check.path,
              intervalMs: registered.check.interval.milliseconds,
              timeoutMs: registered.check.timeout.milliseconds,
            };
    return undefined;
  }

  #exclusive<T>(work: () => Promise<T>): Promise<T> {
    const guarded = () =>
      work().catch((error: unknown) => {
        throw fromEngine(error);
      });
    const next = this.#queue.then(guarded, guarded);
    this.#queue = next.catch(() => undefined);
    return next;
  }
}
