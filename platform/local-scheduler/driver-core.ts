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
import type { RegistryWriter } from '../../domain/registry/index.js';
import {
  filesFingerprint,
  isTerminalAllocation,
  milliseconds,
  rollFingerprint,
  type AllocationChange,
  type AllocationKind,
  type AllocationStatus,
  type Duration,
  type Execution,
  type RestartPolicySpec,
  type TaskEvent,
  type TaskGroupSpec,
} from '../../domain/scheduler/index.js';
import { silentLogger } from '../logger.js';
import { AllocationRunner, type RunOutcome, type RunnerContext } from './allocation-runner.js';
import { toAllocation, toExecution } from './allocation-view.js';
import type { AllocationRecord, DriverState, ExecutionRecord, JobRecord } from './driver-state.js';
import { pickFreePort } from './port-allocator.js';
import { StateFile } from './state-file.js';
import { allocationPaths, type HostVolume } from './task-environment.js';
import { detectCpuWeights, NO_CPU_WEIGHTS } from './cpu-weight.js';
import { detectAppIdentities, type AppIdentities } from './app-identity.js';
import { SpawnerSupervisor } from './spawner-supervisor.js';
import { DEFAULT_TASK_LIMITS, detectPrivateMounts, type PrivateMounts, type TaskLimits } from './task-sandbox.js';
import { firstBlockedFolder } from '../postgres/managed-postgres-layout.js';
import type { LogSink } from '../../domain/logs/index.js';
import { LogCapture, type CaptureTarget } from './log-capture.js';
import { traceMark } from '../../domain/observability/trace-marks.js';

/** Any other user: what an app user can pass through, at least. */
const NOBODY = { name: 'nobody', uid: 65534, gid: 65534 };

/** Options of the local driver. */
export interface LocalSchedulerOptions {
  /** Root of driver state: `<dataDir>/scheduler/state.json` and `<dataDir>/allocs/<id>/`. */
  readonly dataDir: string;
  /** Where instances and check results are published. */
  readonly registry: RegistryWriter;
  /** @default silent */
  readonly logger?: Logger;
  /** How often liveness of re-adopted processes and RSS are sampled. @default 250ms */
  readonly monitorInterval?: Duration;
  /** Restart policy of groups that set none. @default 1s initial, 30s max, reset after 10s */
  readonly defaultRestart?: RestartPolicySpec;
  /** Host directories offered as named volumes. @default none */
  readonly hostVolumes?: Readonly<Record<string, HostVolume>>;
  /** Region name of this local target. @default local */
  readonly region?: string;
  /** @default dc1 */
  readonly datacenter?: string;
  /** Bytes of stdout/stderr kept in an execution record. @default 1 MiB */
  readonly outputLimitBytes?: number;
  /** Executions kept per job. @default 100 */
  readonly executionHistory?: number;
  /** cgroup mount under which CPU weights are applied (`resources.cpu`); null turns them off. @default /sys/fs/cgroup */
  readonly cgroupRoot?: string | null;
  /** Who tasks run as. @default each app's own system user when root, else the platform's user ({@link detectAppIdentities}) */
  readonly identities?: AppIdentities;
  /** `RLIMIT_NOFILE` and `RLIMIT_NPROC` of every task. @default {@link DEFAULT_TASK_LIMITS} */
  readonly limits?: TaskLimits;
  /** Private mount namespaces (own `/tmp`, bind-mounted volumes). @default probed ({@link detectPrivateMounts}) */
  readonly privateMounts?: PrivateMounts;
  /** Where every allocation's stdout and stderr lines go (docs/adr/0165). @default not captured */
  readonly logs?: LogSink;
  /**
   * Start-up window of a new allocation's health checks: probed at once, then after 100 ms,
   * doubling up to the interval, until the first pass; failures inside it raise no health event.
   * @default 60s
   */
  readonly healthStartupWindow?: Duration;
  /**
   * How long an allocation replaced by a passing one stays up after leaving the registry, before
   * its drain signal: requests the gateway already chose it for arrive and finish. @default 500ms
   */
  readonly withdrawDelay?: Duration;
  /** Folder of app releases; each app's subfolder is made readable by that app's group only. @default `<dataDir>/releases` */
  readonly releasesDir?: string;
  /** `<dataDir>/secrets`: each app's decrypted secret files, copied into its tasks' `secrets/` folder. */
  readonly appSecretsDir?: string;
  /**
   * Tasks are forked and exec'd by a small helper process rather than by this one (ADR 0199): a
   * fork of a large process blocks the event loop for time proportional to its memory mappings.
   * Without Perl, or with false, tasks are spawned from this process. @default true
   */
  readonly spawnHelper?: boolean;
}

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
  readonly #capture: LogCapture | undefined;
  readonly #spawner: SpawnerSupervisor | undefined;
  closed = false;

  constructor(options: LocalSchedulerOptions) {
    this.options = options;
    this.logger = options.logger ?? silentLogger();
    this.#stateFile = new StateFile(path.join(options.dataDir, 'scheduler'));
    this.#releaseLock = this.#stateFile.acquireLock();
    this.state = this.#stateFile.load();
    this.events.setMaxListeners(0);
    const cpuWeights = options.cgroupRoot === null ? NO_CPU_WEIGHTS : detectCpuWeights(options.cgroupRoot ?? undefined);
    if (cpuWeights.kind === 'none')
      this.logger.info({ reason: cpuWeights.reason }, 'CPU weights (resources.cpu) are not applied');
    const identities = options.identities ?? detectAppIdentities();
    if (identities.mode === 'platform-user')
      this.logger.warn(
        { reason: identities.reason },
        "apps share the platform's user: not running as root, so apps are not isolated from each other or from the platform",
      );
    const privateMounts =
      options.privateMounts ??
      (identities.mode === 'app-users'
        ? detectPrivateMounts()
        : { available: false, reason: "apps run as the platform's user" });
    if (!privateMounts.available)
      this.logger.info({ reason: privateMounts.reason }, 'no private mount namespace per task');
    if (identities.mode === 'app-users') {
      secureDriverFolders(options.dataDir);
      // An app user must pass through every folder above its release (a checkout under /root, say).
      const blocked = firstBlockedFolder(options.dataDir, NOBODY);
      if (blocked !== undefined)
        this.logger.error(
          { blocked, dataDir: options.dataDir },
          `app users cannot enter ${blocked}, so app processes cannot reach their releases: chmod o+x ${blocked} (enter, not list), or set SVC_DATA_DIR to a folder under one they can enter`,
        );
    }
    this.#capture = options.logs ? new LogCapture({ sink: options.logs, logger: this.logger }) : undefined;
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

  // Jobs and allocations by app, rebuilt after one is added or removed (`indexChanged`): the app
  // controller asks for one app's jobs and allocations on every reconcile, and scanning all of them
  // each time made a resync over 500 apps quadratic (ADR 0195). An app's records never change app.
  #byApp: { jobs: Map<string, JobRecord[]>; allocations: Map<string, AllocationRecord[]> } | undefined;

  /** Says that a job or an allocation was added to or removed from the state. */
  indexChanged(): void {
    this.#byApp = undefined;
  }

  /** Says that `record` was put in the state in place of `previous` (if any), of the same id. */
  jobPut(record: JobRecord, previous: JobRecord | undefined): void {
    const index = this.#byApp;
    if (index === undefined) return;
    if (previous !== undefined && previous.spec.app !== record.spec.app) return this.indexChanged();
    const ofApp = index.jobs.get(record.spec.app);
    const at = previous === undefined ? -1 : (ofApp?.indexOf(previous) ?? -1);
    if (ofApp && at >= 0) ofApp[at] = record;
    else if (previous !== undefined) this.indexChanged();
    else if (ofApp) ofApp.push(record);
    else index.jobs.set(record.spec.app, [record]);
  }

  #index(): { jobs: Map<string, JobRecord[]>; allocations: Map<string, AllocationRecord[]> } {
    if (this.#byApp === undefined) {
      const jobs = new Map<string, JobRecord[]>();
      for (const job of Object.values(this.state.jobs)) {
        const list = jobs.get(job.spec.app);
        if (list) list.push(job);
        else jobs.set(job.spec.app, [job]);
      }
      const allocations = new Map<string, AllocationRecord[]>();
      for (const record of Object.values(this.state.allocations)) {
        const list = allocations.get(record.app);
        if (list) list.push(record);
        else allocations.set(record.app, [record]);
      }
      this.#byApp = { jobs, allocations };
    }
    return this.#byApp;
  }

  /** The jobs of `app` (all jobs when undefined). */
  jobsOf(app: string | undefined): readonly JobRecord[] {
    return app === undefined ? Object.values(this.state.jobs) : (this.#index().jobs.get(app) ?? []);
  }

  /** The allocations of `app` (all when undefined). */
  recordsOf(app: string | undefined): readonly AllocationRecord[] {
    return app === undefined ? this.records() : (this.#index().allocations.get(app) ?? []);
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
    this.#captureOutput(record);
    const change: AllocationChange = {
      allocation: toAllocation(record),
      ...(previousStatus !== record.status ? { previousStatus } : {}),
      ...(event ? { event } : {}),
    };
    this.events.emit('change', change);
  }

  /** Follows the output of every allocation that runs, and reads those that ended to their end (driver start). */
  startCapture(): void {
    if (!this.#capture) return;
    for (const record of this.records()) {
      if (!isTerminal(record.status)) {
        this.#captureOutput(record);
        continue;
      }
      const paths = allocationPaths(record.dir);
      const behind = (['stdout', 'stderr'] as const).some((stream) => {
        const size = fileSize(stream === 'stdout' ? paths.stdout : paths.stderr);
        return size > (this.options.logs?.offsetOf(record.id, stream) ?? 0);
      });
      if (behind) this.#captureOutput(record);
    }
  }

  /** Reads (what is left of) an allocation's output while it runs; leaves it once ended and read. */
  #captureOutput(record: AllocationRecord): void {
    const capture = this.#capture;
    if (!capture) return;
    if (!capture.following(record.id)) {
      if (isTerminal(record.status) && record.task.startedAt === undefined) return; // never ran
      capture.follow(this.#captureTarget(record));
    } else capture.touch(record.id, record.task.pid === undefined);
    if (isTerminal(record.status)) capture.finish(record.id);
  }

  /** Commits every line written so far (tests, benchmarks). */
  async drainLogs(): Promise<void> {
    await this.#capture?.drain();
  }

  #captureTarget(record: AllocationRecord): CaptureTarget {
    const job = this.state.jobs[record.jobId];
    const commit = job && job.version === record.jobVersion ? job.spec.meta?.['svc.commit'] : undefined;
    const paths = allocationPaths(record.dir);
    return {
      allocation: record.id,
      app: record.app,
      process: job?.spec.meta?.['svc.process'] ?? record.taskGroup,
      release: commit !== undefined ? commit.slice(0, 12) : `v${record.jobVersion}`,
      files: { stdout: paths.stdout, stderr: paths.stderr },
    };
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
    // A spare process already in its cgroup starts the task when there is one (ADR 0201).
    const id = this.#spawner?.live()?.takeSpare() ?? randomUUID();
    const used = this.usedPorts();
    const ports = [];
    for (const port of group.ports) {
      const value = port.static ?? (await pickFreePort(HOST_IP, used));
      used.add(value);
      ports.push({ label: port.label, value, hostIp: HOST_IP });
    }
    const now = new Date().toISOString();
    const received: TaskEvent = { type: 'Received', message: 'Task received by the local driver', at: now };
    const record: AllocationRecord = {
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
    this.state.allocations[id] = record;
    // Added to the index as it is (a rebuild per placement was quadratic while 500 apps started).
    const ofApp = this.#byApp?.allocations.get(record.app);
    if (ofApp) ofApp.push(record);
    else this.#byApp?.allocations.set(record.app, [record]);
    const runner = new AllocationRunner(record, this.ctx);
    this.runners.set(id, runner);
    this.changed(record, 'pending', received);
    // Answered once the task exec'd (or failed to): the allocation is running when the submit returns.
    await runner.start();
    return record;
  }

  /** Drains and stops an allocation (or just marks it when no runner supervises it). */
  async stopAllocation(record: AllocationRecord, description: string): Promise<void> {
    record.desiredStatus = 'stop';
    const runner = this.runners.get(record.id);
    if (runner) {
      await runner.stop(description);
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

  /** Ports held by allocations that are not terminal. */
  usedPorts(): Set<number> {
    const used = new Set<number>();
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

/**
 * Closes the driver's folders to app users: the data folder can be entered (apps reach their
 * allocation, data and release folders below it) but not listed, and the state file, which holds
 * every task's environment, is the platform's alone.
 */
function secureDriverFolders(dataDir: string): void {
  fs.mkdirSync(dataDir, { recursive: true });
  fs.chmodSync(dataDir, 0o711);
  for (const [name, mode] of [
    ['scheduler', 0o700],
    ['allocs', 0o711],
    ['app-data', 0o711],
  ] as const) {
    const dir = path.join(dataDir, name);
    fs.mkdirSync(dir, { recursive: true, mode });
    fs.chmodSync(dir, mode);
  }
}

function fileSize(file: string): number {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0;
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
