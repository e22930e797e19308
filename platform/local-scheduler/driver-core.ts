/**
 * Driver core: the local driver's shared state (persisted jobs, allocations and executions, the
 * live runners) and the primitives every operation uses: place, stop, record a change, finish.
 */
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { ConflictError, NotFoundError } from '../../domain/errors.js';
import {
  filesFingerprint,
  isTerminalAllocation,
  milliseconds,
  rollFingerprint,
  type AllocatedPort,
  type AllocationChange,
  type AllocationKind,
  type AllocationStatus,
  type Execution,
  type TaskEvent,
  type TaskGroupSpec,
} from '../../domain/scheduler/index.js';
import { silentLogger } from '../logger.js';
import { AllocationRunner } from './allocations/allocation-runner.js';
import type { RunnerContext, RunOutcome } from './allocations/runner-context.js';
import { toAllocation, toExecution } from './allocations/allocation-view.js';
import type { AllocationRecord, DriverState, ExecutionRecord, JobRecord } from './driver-state.js';
import { pickFreePort } from './allocations/port-allocator.js';
import { StateFile } from './state-file.js';
import { allocationPaths } from './tasks/task-environment.js';
import { detectCpuWeights, NO_CPU_WEIGHTS } from './tasks/cpu-weight.js';
import { SpawnerSupervisor } from './tasks/spawner-supervisor.js';
import { DEFAULT_TASK_LIMITS } from './tasks/task-sandbox.js';
import { traceMark } from '../../domain/observability/trace-marks.js';
import type { LocalSchedulerOptions } from './local-scheduler-options.js';
import { prepareHostIsolation } from './isolation/host-isolation.js';
import { AllocationLogCapture } from './allocations/allocation-log-capture.js';
import { AppIndex } from './app-index.js';
import { PreparedContainers } from './containers/prepared-containers.js';

const HOST_IP = '127.0.0.1';

/** True for statuses an allocation never leaves. */
export const isTerminal: (status: AllocationStatus) => boolean = isTerminalAllocation;

/** State and primitives shared by the driver's operations. */
export class DriverCore {
  readonly options: LocalSchedulerOptions;
  readonly logger: Logger;
  readonly state: DriverState;
  readonly runners = new Map<string, AllocationRunner>();
  readonly events = new EventEmitter();
  readonly ctx: RunnerContext;
  readonly #stateFile: StateFile;
  readonly #releaseLock: () => void;
  readonly #capture: AllocationLogCapture | undefined;
  readonly #appIndex: AppIndex;
  readonly #spawner: SpawnerSupervisor | undefined;
  /** Containers created ahead of their start (ADR 0228); undefined: no container runtime. */
  readonly prepared: PreparedContainers | undefined;
  closed = false;

  constructor(options: LocalSchedulerOptions) {
    this.options = options;
    this.logger = options.logger ?? silentLogger();
    this.#stateFile = new StateFile(path.join(options.dataDir, 'scheduler'));
    this.#releaseLock = this.#stateFile.acquireLock();
    this.state = this.#stateFile.load();
    this.#appIndex = new AppIndex(this.state);
    this.events.setMaxListeners(0);
    const cpuWeights = options.cgroupRoot === null ? NO_CPU_WEIGHTS : detectCpuWeights(options.cgroupRoot ?? undefined);
    if (cpuWeights.kind === 'none')
      this.logger.info({ reason: cpuWeights.reason }, 'CPU weights (resources.cpu) are not applied');
    const { identities, privateMounts } = prepareHostIsolation(options, this.logger);
    this.#capture = options.logs ? new AllocationLogCapture(options.logs, this.state, this.logger) : undefined;
    this.ctx = {
      identities,
      limits: options.limits ?? DEFAULT_TASK_LIMITS,
      folders: {
        appDataRoot: path.join(options.dataDir, 'app-data'),
        releasesDir: options.releasesDir ?? path.join(options.dataDir, 'releases'),
        privateMounts: privateMounts.available,
        ...(options.appSecretsDir ? { appSecretsRoot: options.appSecretsDir } : {}),
      },
      cpuWeights,
      ...(options.containers ? { containers: options.containers } : {}),
      prepared: { claim: (id, digest) => this.prepared?.claim(id, digest) === true },
      logger: this.logger,
      registry: options.registry,
      hostVolumes: options.hostVolumes ?? {},
      defaultRestart: options.defaultRestart ?? {
        initialDelay: milliseconds(1000),
        maxDelay: milliseconds(30_000),
        resetAfter: milliseconds(10_000),
      },
      ...(options.healthStartupWindow ? { healthStartupWindowMs: options.healthStartupWindow.milliseconds } : {}),
      ...(options.spawnHelper !== false ? { spawner: () => this.#spawner?.live() } : {}),
      passing: (record) => this.events.emit('passing', record),
      changed: (record, previousStatus, event) => this.changed(record, previousStatus, event),
      finished: (record, outcome) => this.finished(record, outcome),
    };
    this.prepared =
      // On the host network only: on the bridge network a prepared container's start failed (exit
      // 125) after the container it replaced on the same published port was removed (ADR 0228).
      options.containers && options.containers.prepareAhead !== false && options.containers.network === 'host'
        ? new PreparedContainers({
            runtime: options.containers,
            launch: this.ctx,
            logger: this.logger,
            prepareIdentity: (app, user) => this.ctx.identities.prepare(app, user),
            allocationDir: (id) => this.#allocationDir(id),
            pickPorts: (group) => this.#pickPorts(group),
            newRecord: (job, group, index, id, ports) =>
              this.#newRecord(job, group, 'group', index, false, {}, id, ports),
          })
        : undefined;
    if (options.spawnHelper !== false)
      this.#spawner = new SpawnerSupervisor({
        cpuWeights: this.ctx.cpuWeights,
        allocationDir: (id) => this.#allocationDir(id),
        logger: this.logger,
      });
  }

  #allocationDir(id: string): string {
    return path.join(this.options.dataDir, 'allocs', id);
  }

  /** Resolves once no spare's folders are being made (see {@link SpawnerSupervisor.settled}). */
  async aheadSettled(): Promise<void> {
    await this.#spawner?.settled();
  }

  records(): AllocationRecord[] {
    return Object.values(this.state.allocations);
  }

  /** Says that a job or an allocation was added to or removed from the state (see {@link AppIndex}). */
  indexChanged(): void {
    this.#appIndex.changed();
  }

  /** Says that `record` was put in the state in place of `previous` (if any), of the same id. */
  jobPut(record: JobRecord, previous: JobRecord | undefined): void {
    this.#appIndex.jobPut(record, previous);
  }

  /** The jobs of `app` (all jobs when undefined). */
  jobsOf(app: string | undefined): readonly JobRecord[] {
    return app === undefined ? Object.values(this.state.jobs) : this.#appIndex.jobsOf(app);
  }

  /** The allocations of `app` (all when undefined). */
  recordsOf(app: string | undefined): readonly AllocationRecord[] {
    return app === undefined ? this.records() : this.#appIndex.allocationsOf(app);
  }

  job(jobId: string): JobRecord {
    const job = this.state.jobs[jobId];
    if (!job) throw new NotFoundError(`job ${jobId} not found`);
    return job;
  }

  save(): void {
    // Coalesce: one submit or tick changes many records; write the file once per event-loop turn,
    // and while a write is in flight, once after it (its fsyncs run off the event loop, ADR 0190).
    if (this.#savePending) return;
    this.#savePending = true;
    if (!this.#saving) setImmediate(() => this.#write());
  }

  #write(): void {
    if (!this.#savePending || this.closed) return;
    this.#savePending = false;
    this.#saving = this.#stateFile
      .saveAsync(this.state)
      .catch((error: unknown) => this.logger.error({ err: error }, 'local scheduler: state file not written'))
      .finally(() => {
        this.#saving = undefined;
        if (this.#savePending) this.#write();
      });
  }

  /** Writes pending state now, synchronously (atomic temp file + rename, fsynced). */
  flush(): void {
    if (!this.#savePending) return;
    this.#savePending = false;
    this.#stateFile.save(this.state);
  }

  #savePending = false;
  #saving: Promise<void> | undefined;

  /** Detaches every runner (processes keep running), saves and releases the lock. */
  close(): void {
    this.closed = true;
    this.#capture?.close();
    for (const runner of this.runners.values()) runner.detach();
    this.runners.clear();
    // Its tasks keep running (re-parented), for the next driver to re-adopt; its spares exit.
    this.#spawner?.close();
    this.#savePending = true;
    this.flush();
    this.#releaseLock();
    this.events.removeAllListeners();
  }

  /** Persists a changed allocation and notifies watchers. */
  changed(record: AllocationRecord, previousStatus: AllocationStatus, event?: TaskEvent): void {
    if (this.closed) return;
    record.modifiedAt = new Date().toISOString();
    this.save();
    this.#capture?.follow(record);
    const change: AllocationChange = {
      allocation: toAllocation(record),
      ...(previousStatus !== record.status ? { previousStatus } : {}),
      ...(event ? { event } : {}),
    };
    this.events.emit('change', change);
  }

  /** Follows the output of every allocation that runs, and reads those that ended to their end (driver start). */
  startCapture(): void {
    this.#capture?.resume(this.records());
  }

  /** Commits every line written so far (tests, benchmarks). */
  async drainLogs(): Promise<void> {
    await this.#capture?.drain();
  }

  /** Records the end of a run: drops the runner and completes the execution record, if any. */
  finished(record: AllocationRecord, outcome: RunOutcome): void {
    this.runners.delete(record.id);
    this.ctx.cpuWeights.release(record.id);
    const execution = record.executionId ? this.state.executions[record.executionId] : undefined;
    if (execution && execution.status === 'running') {
      const limit = this.options.outputLimitBytes ?? 1024 * 1024;
      const paths = allocationPaths(record.dir);
      execution.status = outcome === 'succeeded' ? 'succeeded' : outcome === 'timed_out' ? 'timed_out' : 'failed';
      execution.exitCode = record.task.exitCode ?? null;
      execution.output = readTail(paths.stdout, limit);
      execution.errorOutput = readTail(paths.stderr, limit);
      execution.finishedAt = record.task.finishedAt ?? new Date().toISOString();
      execution.durationMs =
        Date.parse(execution.finishedAt) - Date.parse(record.task.startedAt ?? execution.startedAt);
    }
    this.changed(record, record.status);
  }

  /**
   * Retires an allocation whose replacement passes: it leaves the registry at once (no new
   * requests), keeps serving what it accepted for the withdraw delay, then drains (drain.signal,
   * drain.timeout). Not awaited: a drain may take the whole drain timeout.
   */
  retireAllocation(record: AllocationRecord, description: string): void {
    if (record.desiredStatus === 'stop') return;
    record.desiredStatus = 'stop';
    this.runners.get(record.id)?.withdraw();
    this.changed(record, record.status);
    const timer = setTimeout(() => {
      if (this.closed) return; // re-adopted with desiredStatus stop, and drained, by the next driver
      this.stopAllocation(record, description).catch((error: unknown) =>
        this.logger.warn({ allocationId: record.id, err: error }, 'drain of a replaced allocation failed'),
      );
    }, this.options.withdrawDelay?.milliseconds ?? 500);
    timer.unref();
  }

  /** Places and starts a new allocation of `group` (ports picked now, kept for its lifetime). */
  async place(
    job: JobRecord,
    group: TaskGroupSpec,
    kind: AllocationKind,
    index: number,
    canary: boolean,
    extraEnv: Record<string, string>,
    executionId?: string,
  ): Promise<AllocationRecord> {
    // The app's user exists before the allocation does, so its start looks nothing up (ADR 0190). A
    // failure here is the task's start failure: the runner tries again and records it.
    await this.ctx.identities.prepare(job.spec.app, group.task.user).catch(() => undefined);
    traceMark('driver:place');
    // A container prepared ahead (ADR 0228) brings its id and ports; else a spare process already in
    // its cgroup starts the task when there is one (ADR 0201).
    const prepared = kind === 'group' && !canary ? this.prepared?.take(job, group, index) : undefined;
    const id = prepared?.id ?? this.#spawner?.live()?.takeSpare() ?? randomUUID();
    const ports = prepared?.ports ?? (await this.#pickPorts(group));
    const record = this.#newRecord(job, group, kind, index, canary, extraEnv, id, ports, executionId);
    this.state.allocations[id] = record;
    this.#appIndex.allocationPlaced(record);
    const runner = new AllocationRunner(record, this.ctx);
    this.runners.set(id, runner);
    this.changed(record, 'pending', record.task.events[0]);
    // Answered once the task exec'd (or failed to): the allocation is running when the submit returns.
    await runner.start();
    return record;
  }

  /**
   * Creates the container of the next allocation of a service `group` whose task names an image,
   * ahead of its start (ADR 0228); nothing for other groups or without a container runtime.
   */
  async prepareAhead(job: JobRecord, group: TaskGroupSpec, index = 0): Promise<void> {
    if (!this.prepared || this.closed || group.task.image === undefined || job.spec.type !== 'service') return;
    await this.prepared.prepare(job, group, index);
  }

  /** Ports for a new allocation of `group`: static ones as given, others free on the host and held by no allocation. */
  async #pickPorts(group: TaskGroupSpec): Promise<AllocatedPort[]> {
    const used = this.usedPorts();
    const ports: AllocatedPort[] = [];
    for (const port of group.ports) {
      const value = port.static ?? (await pickFreePort(HOST_IP, used));
      used.add(value);
      ports.push({ label: port.label, value, hostIp: HOST_IP });
    }
    return ports;
  }

  #newRecord(
    job: JobRecord,
    group: TaskGroupSpec,
    kind: AllocationKind,
    index: number,
    canary: boolean,
    extraEnv: Record<string, string>,
    id: string,
    ports: AllocatedPort[],
    executionId?: string,
  ): AllocationRecord {
    const now = new Date().toISOString();
    const received: TaskEvent = { type: 'Received', message: 'Task received by the local driver', at: now };
    return {
      id,
      jobId: job.spec.id,
      app: job.spec.app,
      jobType: job.spec.type,
      taskGroup: group.name,
      jobVersion: job.version,
      kind,
      index,
      canary,
      status: 'pending',
      desiredStatus: 'run',
      region: job.spec.region ?? this.options.region ?? 'local',
      datacenter: job.spec.datacenters?.[0] ?? this.options.datacenter ?? 'dc1',
      nodePool: job.spec.nodePool ?? 'default',
      ports,
      group,
      fingerprint: rollFingerprint(job.spec, group),
      filesFingerprint: filesFingerprint(group),
      extraEnv,
      dir: this.#allocationDir(id),
      task: {
        name: group.task.name,
        state: 'pending',
        failed: false,
        restarts: 0,
        oomKilled: false,
        events: [received],
      },
      memory: { currentRssBytes: 0, peakRssBytes: 0, limitBytes: group.task.resources.memoryMb * 1024 * 1024 },
      ...(executionId !== undefined ? { executionId } : {}),
      createdAt: now,
      modifiedAt: now,
    };
  }

  /**
   * Drains and stops an allocation (or just marks it when no runner supervises it); with
   * `untilPortsFree`, resolves once its ports are free (see {@link AllocationRunner.stopUntilPortsFree}).
   */
  async stopAllocation(record: AllocationRecord, description: string, untilPortsFree = false): Promise<void> {
    record.desiredStatus = 'stop';
    const runner = this.runners.get(record.id);
    if (runner) {
      await (untilPortsFree ? runner.stopUntilPortsFree(description) : runner.stop(description));
      return;
    }
    this.changed(record, record.status);
  }

  /** Starts one execution (dispatch or periodic child) of `group` and records it as running. */
  async launchExecution(
    job: JobRecord,
    group: TaskGroupSpec,
    kind: AllocationKind,
    extraEnv: Record<string, string>,
    executionId?: string,
  ): Promise<Execution> {
    const id = executionId ?? `exec-${randomUUID()}`;
    if (this.state.executions[id]) throw new ConflictError(`execution ${id} already exists`);
    const execution: ExecutionRecord = {
      id,
      jobId: job.spec.id,
      taskGroup: group.name,
      allocationId: '',
      status: 'running',
      exitCode: null,
      output: '',
      errorOutput: '',
      durationMs: null,
      startedAt: new Date().toISOString(),
    };
    this.state.executions[id] = execution;
    this.#trimExecutions(job.spec.id);
    const alloc = await this.place(job, group, kind, 0, false, extraEnv, id);
    execution.allocationId = alloc.id;
    this.save();
    return toExecution(execution);
  }

  /** Ports held by allocations that are not terminal, and by containers prepared for the next ones. */
  usedPorts(): Set<number> {
    const used = new Set<number>(this.prepared?.reservedPorts());
    for (const a of this.records()) if (!isTerminal(a.status)) for (const p of a.ports) used.add(p.value);
    return used;
  }

  #trimExecutions(jobId: string): void {
    const keep = this.options.executionHistory ?? 100;
    const list = Object.values(this.state.executions)
      .filter((e) => e.jobId === jobId && e.status !== 'running')
      .sort((a, b) => b.startedAt.localeCompare(a.startedAt));
    for (const old of list.slice(keep)) delete this.state.executions[old.id];
  }
}

/** The last `limit` bytes of a file (only those are read: log capture may have released the rest). */
function readTail(file: string, limit: number): string {
  let fd: number | undefined;
  try {
    fd = fs.openSync(file, 'r');
    const size = fs.fstatSync(fd).size;
    const length = Math.min(limit, size);
    const buffer = Buffer.alloc(length);
    fs.readSync(fd, buffer, 0, length, size - length);
    return buffer.toString('utf8');
  } catch {
    return '';
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}
