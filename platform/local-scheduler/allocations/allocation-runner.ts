/**
 * Allocation runner: the local driver's supervisor of one allocation's host process: start (or
 * re-adopt), restart with exponential backoff, memory-limit kills, batch deadlines, and drain
 * (signal, wait, SIGKILL). Its service instances and health checks are `AllocationServices`.
 */
import type { ChildProcess } from 'node:child_process';
import type { AllocationStatus, TaskEvent, TaskEventType } from '../../../domain/scheduler/index.js';
import type { AllocationRecord } from '../driver-state.js';
import { SpawnerGoneError } from '../tasks/task-spawner.js';
import { AllocationServices } from './allocation-services.js';
import { isProcessAlive, readProcess, signalTree, type ProcessInfo } from '../tasks/process-table.js';
import { allocationPaths, readRecordedExit } from '../tasks/task-environment.js';
import { prepareLaunch, spawnFromHere, type Launch } from '../tasks/task-launch.js';
import { traceMark } from '../../../domain/observability/trace-marks.js';
import type { RunnerContext, RunOutcome } from './runner-context.js';
import { treeRssBytes, TreeCpuSampler } from '../tasks/task-tree-usage.js';
import { DEFAULT_RESTART_WINDOW_MS, mayRestart, RestartBackoff } from './restart-policy.js';
import { drainTree } from '../tasks/tree-drain.js';
import { ContainerTask } from '../containers/container-task.js';

const MAX_EVENTS = 25;

/** Supervises one allocation. */
export class AllocationRunner {
  readonly record: AllocationRecord;
  readonly #ctx: RunnerContext;
  /** Identifies the current run's leader: an exit reported for an earlier one is ignored. */
  #leader: object | undefined;
  /** A start through the spawner helper that has not answered yet. */
  #launching: Promise<void> | undefined;
  #adopted = false;
  #detached = false;
  readonly #cpu = new TreeCpuSampler();
  #stopping: Promise<void> | undefined;
  #restarting = false;
  #exitReason: 'oom' | 'timeout' | undefined;
  #restartTimer: NodeJS.Timeout | undefined;
  #deadlineTimer: NodeJS.Timeout | undefined;
  readonly #services: AllocationServices;
  #runStartedMs = 0;
  readonly #backoff = new RestartBackoff();
  /** The allocation's container when its task names an image (ADR 0219). */
  readonly #container: ContainerTask | undefined;

  constructor(record: AllocationRecord, ctx: RunnerContext) {
    this.record = record;
    this.#ctx = ctx;
    this.#services = new AllocationServices(record, ctx);
    this.#container =
      record.group.task.image !== undefined && ctx.containers ? new ContainerTask(record, ctx.containers) : undefined;
  }

  /** True while the allocation restarts its task on exit (a service group allocation). */
  get restartsOnExit(): boolean {
    return this.record.kind === 'group' && this.record.jobType === 'service';
  }

  /** Starts the task for the first time; resolves once a start through the helper is answered. */
  start(): Promise<void> {
    this.#register();
    this.#spawn();
    return this.#launching ?? Promise.resolve();
  }

  /** Takes over a live process left by a previous driver instance (same pid). */
  adopt(): void {
    const rec = this.record;
    this.#adopted = true;
    this.#runStartedMs = rec.task.startedAt ? Date.parse(rec.task.startedAt) : Date.now();
    const previous = rec.status;
    rec.status = 'running';
    rec.task.state = 'running';
    const event = this.#event('Adopted', `Re-adopted running process ${String(rec.task.pid)} after a driver restart`);
    this.#register();
    this.#armDeadline();
    this.#ctx.changed(rec, previous, event);
  }

  /** Samples liveness (adopted processes) and memory (all) from one `/proc` snapshot. */
  tick(table: readonly ProcessInfo[], byPid: ReadonlyMap<number, ProcessInfo>): void {
    const rec = this.record;
    const pid = rec.task.pid;
    if (this.#detached || pid === undefined) return;
    if (this.#adopted) {
      const info = byPid.get(pid);
      if (!info || info.state === 'Z' || info.startTime !== rec.task.pidStartTime) {
        this.#adopted = false;
        const recorded = this.restartsOnExit ? undefined : readRecordedExit(allocationPaths(rec.dir).exitStatus);
        const leader = {};
        this.#leader = leader;
        if (recorded !== undefined) this.#leaderExited(leader, recorded, null);
        else
          this.#leaderExited(
            leader,
            null,
            null,
            'exit status unknown: the process was re-adopted, not a child of this driver',
          );
        return;
      }
    }
    const usage = this.#container;
    // A container's memory is its cgroup's, and its limit the kernel's (the client holds none of it).
    const rss = usage ? usage.rssBytes() : treeRssBytes(pid, table, byPid);
    if (rss === undefined) return;
    rec.memory.currentRssBytes = rss;
    rec.memory.peakRssBytes = Math.max(rec.memory.peakRssBytes, rss);
    rec.memory.sampledAt = new Date().toISOString();
    const cpu = usage ? usage.cpu() : this.#cpu.sample(pid, table, byPid);
    if (cpu !== undefined) rec.cpu = cpu;
    if (
      !usage &&
      rss > rec.memory.limitBytes &&
      this.#exitReason === undefined &&
      !this.#stopping &&
      !this.#restarting
    ) {
      this.#exitReason = 'oom';
      this.#ctx.logger.warn(
        { allocationId: rec.id, rssBytes: rss, limitBytes: rec.memory.limitBytes },
        'memory limit exceeded: killing task',
      );
      signalTree(pid, 'SIGKILL', table);
    }
  }

  /** Drains the task (signal, wait up to the drain timeout, then SIGKILL) and completes the allocation. */
  stop(description: string): Promise<void> {
    if (this.#stopping) return this.#stopping;
    this.#stopping = this.#drainAndFinish(description);
    return this.#stopping;
  }

  /**
   * Stops the allocation, resolving as soon as its ports are free: for a container on the host's
   * network, once its processes are gone, while its client still cleans up and the container is
   * removed (the stop completes after); otherwise when the stop completes. A replacement on the same
   * fixed port starts then (ADR 0228).
   */
  stopUntilPortsFree(description: string): Promise<void> {
    const stopped = this.stop(description);
    const container = this.#container;
    if (!container || this.#ctx.containers?.network !== 'host') return stopped;
    return Promise.race([stopped, container.processesEnd(stopped)]);
  }

  /** Restarts the task in place (same allocation), e.g. after a rendered file changed. */
  async restartInPlace(reason: string): Promise<void> {
    if (this.#stopping || this.#detached) return;
    const rec = this.record;
    this.#restarting = true;
    try {
      this.#ctx.changed(rec, rec.status, this.#event('Restart Signaled', reason));
      clearTimeout(this.#restartTimer);
      await this.#launching;
      const pid = rec.task.pid;
      if (pid !== undefined && isProcessAlive(pid, rec.task.pidStartTime)) await this.#terminateTree(pid);
      rec.task.restarts += 1;
      rec.task.lastRestartAt = new Date().toISOString();
    } finally {
      this.#restarting = false;
    }
    if (!this.#stopping && !this.#detached) this.#spawn();
  }

  /** Stops supervising without touching the process: it keeps running for the next driver instance. */
  detach(): void {
    this.#detached = true;
    clearTimeout(this.#restartTimer);
    clearTimeout(this.#deadlineTimer);
    this.#services.stopChecks();
  }

  #spawn(): void {
    const rec = this.record;
    const identities = this.#ctx.identities;
    if (!identities.prepared(rec.app, rec.group.task.user)) {
      // Never a synchronous useradd or getent on the event loop: the user is made ready first (ADR 0190).
      identities.prepare(rec.app, rec.group.task.user).then(
        () => {
          if (!this.#stopping && !this.#detached) this.#spawn();
        },
        (error: unknown) => this.#onSpawnFailure(error as Error),
      );
      return;
    }
    const previous = rec.status;
    traceMark('runner:spawn');
    let launch: Launch;
    try {
      launch = prepareLaunch(this.record, this.#ctx, this.restartsOnExit);
    } catch (error) {
      this.#onSpawnFailure(error as Error);
      return;
    }
    traceMark('runner:prepared');
    const spawner = this.#ctx.spawner?.();
    if (spawner === undefined) {
      this.#spawnDirect(launch, previous);
      return;
    }
    // The helper forks and execs (ADR 0199): the control plane's loop goes on meanwhile.
    const leader = {};
    this.#leader = leader;
    // An exit may be read in the same chunk as the start's answer, before the start is recorded.
    let recorded = false;
    let early: [number | null, NodeJS.Signals | null] | undefined;
    let lostEarly = false;
    const cgroup = this.#ctx.cpuWeights.target(rec.id, rec.group.task.resources.cpuMhz);
    // A service's sandbox is applied by the helper's child itself: no wrapper execs (ADR 0199).
    const direct = launch.sandbox !== undefined && spawner.sandboxes ? launch.sandbox : undefined;
    const attempt = spawner
      .spawn(
        {
          file: direct?.argv.file ?? launch.file,
          args: direct?.argv.args ?? launch.args,
          ...(direct ? { sandbox: direct.sandbox } : {}),
          cwd: launch.cwd,
          env: launch.env,
          stdoutPath: launch.paths.stdout,
          stderrPath: launch.paths.stderr,
          ...(cgroup ? { cgroup } : {}),
        },
        {
          exit: (code, signal) => {
            if (!recorded) early = [code, signal];
            else if (this.#leader === leader) this.#leaderExited(leader, code, signal);
          },
          // The helper died: nobody reports this task's exit; watch it through /proc as a re-adopted one.
          lost: () => {
            if (!recorded) lostEarly = true;
            else if (this.#leader === leader) this.#adopted = true;
          },
        },
      )
      .then(
        ({ pid, warning }) => {
          if (this.#leader !== leader) return;
          if (this.#detached) {
            // Closed while it started: no driver records it, so it does not run on unsupervised.
            signalTree(pid, 'SIGKILL');
            return;
          }
          traceMark('runner:started');
          if (warning) this.#ctx.logger.warn({ allocationId: rec.id, reason: warning }, 'CPU weight not applied');
          this.#started(pid, previous, launch.started);
          recorded = true;
          if (early !== undefined && this.#leader === leader) this.#leaderExited(leader, ...early);
          else if (lostEarly) this.#adopted = true;
        },
        (error: unknown) => {
          if (this.#leader !== leader) return;
          this.#leader = undefined;
          if (this.#detached) return;
          if (error instanceof SpawnerGoneError) this.#spawnDirect(launch, rec.status);
          else this.#onSpawnFailure(error as Error);
        },
      )
      .finally(() => {
        if (this.#launching === attempt) this.#launching = undefined;
      });
    this.#launching = attempt;
    traceMark('runner:sent');
  }

  /** Spawns from this process (no helper here, or it died). */
  #spawnDirect(launch: Launch, previous: AllocationStatus): void {
    const rec = this.record;
    let child: ChildProcess;
    try {
      child = spawnFromHere(launch);
    } catch (error) {
      this.#onSpawnFailure(error as Error);
      return;
    }
    if (child.pid === undefined) {
      child.once('error', (error) => this.#onSpawnFailure(error));
      return;
    }
    child.unref();
    child.on('error', (error) => this.#ctx.logger.warn({ allocationId: rec.id, err: error }, 'task process error'));
    const leader = {};
    child.once('exit', (code, signal) => {
      if (this.#leader === leader) this.#leaderExited(leader, code, signal);
    });
    this.#leader = leader;
    try {
      this.#ctx.cpuWeights.place(rec.id, child.pid, rec.group.task.resources.cpuMhz);
    } catch (error) {
      // A weight is a refinement: the task runs without one rather than not at all.
      this.#ctx.logger.warn({ allocationId: rec.id, err: error }, 'CPU weight not applied');
    }
    this.#started(child.pid, previous, launch.started);
  }

  /** Records a started task (its pid is the program's once its wrappers exec'd). */
  #started(pid: number, previous: AllocationStatus, started: string): void {
    const rec = this.record;
    this.#adopted = false;
    this.#runStartedMs = Date.now();
    rec.task.pid = pid;
    rec.task.pidStartTime = readProcess(pid)?.startTime;
    rec.task.state = 'running';
    rec.task.startedAt = new Date().toISOString();
    rec.task.finishedAt = undefined;
    rec.task.exitCode = undefined;
    rec.task.signal = undefined;
    rec.status = 'running';
    this.#armDeadline();
    const event = this.#event('Started', `Task started by the local driver (pid ${pid})${started}`);
    this.#ctx.changed(rec, previous, event);
  }

  #onSpawnFailure(error: Error): void {
    const rec = this.record;
    this.#ctx.logger.error({ allocationId: rec.id, err: error }, 'task failed to start');
    const event = this.#event('Driver Failure', `failed to start task: ${error.message}`);
    this.#afterExit(event, 'failed');
  }

  /**
   * The task's leader ended. A container is asked whether the kernel killed it for its memory
   * limit, and removed, before the exit is handled.
   */
  #leaderExited(leader: object, code: number | null, signal: NodeJS.Signals | null, unknownReason?: string): void {
    if (!this.#container) {
      this.#onLeaderExit(code, signal, unknownReason);
      return;
    }
    void this.#container.finish().then(({ oomKilled, error }) => {
      if (error) this.#ctx.logger.warn({ allocationId: this.record.id, err: error }, 'container not removed');
      if (this.#leader !== leader) return;
      // Only a SIGKILL (137) is the kernel's OOM kill; a drain or a crash near the limit is not.
      if (oomKilled && code === 137 && this.#exitReason === undefined && !this.#stopping && !this.#restarting)
        this.#exitReason = 'oom';
      this.#onLeaderExit(code, signal, unknownReason);
    });
  }

  #onLeaderExit(code: number | null, signal: NodeJS.Signals | null, unknownReason?: string): void {
    if (this.#detached) return;
    const rec = this.record;
    this.#leader = undefined;
    const pid = rec.task.pid;
    // Children of a crashed leader would hold its ports; a drain waits for them itself.
    if (pid !== undefined && !this.#stopping && !this.#restarting) signalTree(pid, 'SIGKILL');
    rec.task.exitCode = code;
    rec.task.signal = signal;
    rec.task.finishedAt = new Date().toISOString();
    rec.task.pid = undefined;
    rec.task.pidStartTime = undefined;
    clearTimeout(this.#deadlineTimer);
    const reason = this.#exitReason;
    this.#exitReason = undefined;
    let event: TaskEvent;
    let outcome: RunOutcome;
    if (reason === 'oom') {
      rec.task.oomKilled = true;
      const mb = (rec.memory.peakRssBytes / 1024 / 1024).toFixed(0);
      event = this.#event(
        'OOM Killed',
        `OOM Killed: memory ${mb} MB exceeded the limit of ${rec.group.task.resources.memoryMb} MB`,
      );
      outcome = 'failed';
    } else if (reason === 'timeout') {
      event = this.#event(
        'Timed Out',
        `Task exceeded its timeout of ${String(rec.group.task.timeout?.milliseconds)}ms and was killed`,
      );
      outcome = 'timed_out';
    } else {
      if (!this.#stopping && !this.#restarting) rec.task.oomKilled = false;
      const status = unknownReason ?? `Exit Code: ${String(code)}${signal ? `, Signal: ${signal}` : ''}`;
      event = this.#event('Terminated', status);
      outcome = code === 0 ? 'succeeded' : 'failed';
    }
    if (this.#stopping || this.#restarting) {
      rec.task.state = 'dead';
      this.#ctx.changed(rec, rec.status, event);
      return;
    }
    this.#afterExit(event, outcome);
  }

  #afterExit(event: TaskEvent, outcome: RunOutcome): void {
    const rec = this.record;
    const previous = rec.status;
    const policy = rec.group.restart ?? this.#ctx.defaultRestart;
    if (this.restartsOnExit && rec.desiredStatus === 'run' && mayRestart(rec.task, policy)) {
      const delay = this.#backoff.next(policy, this.#runStartedMs);
      rec.task.restarts += 1;
      rec.task.lastRestartAt = new Date().toISOString();
      rec.task.state = 'pending';
      const restarting = this.#event('Restarting', `Task restarting in ${delay}ms (restart ${rec.task.restarts})`);
      this.#ctx.changed(rec, previous, event);
      this.#ctx.changed(rec, rec.status, restarting);
      this.#restartTimer = setTimeout(() => {
        if (!this.#stopping && !this.#detached) this.#spawn();
      }, delay);
      return;
    }
    const exhausted = this.restartsOnExit && rec.desiredStatus === 'run';
    rec.task.state = 'dead';
    rec.task.failed = exhausted || outcome !== 'succeeded';
    rec.status = exhausted || outcome !== 'succeeded' ? 'failed' : 'complete';
    rec.statusDescription = exhausted
      ? `${event.message}; exceeded ${String(policy.attempts)} restart attempts within ${policy.interval?.milliseconds ?? DEFAULT_RESTART_WINDOW_MS}ms`
      : event.message;
    this.#unregister();
    this.#ctx.changed(rec, previous, event);
    this.#ctx.finished(rec, outcome);
  }

  async #drainAndFinish(description: string): Promise<void> {
    const rec = this.record;
    rec.desiredStatus = 'stop';
    clearTimeout(this.#restartTimer);
    clearTimeout(this.#deadlineTimer);
    // A start under way records its pid first, so the drain reaches it.
    await this.#launching;
    const pid = rec.task.pid;
    if (pid !== undefined && isProcessAlive(pid, rec.task.pidStartTime)) await this.#terminateTree(pid);
    const previous = rec.status;
    rec.task.state = 'dead';
    rec.task.pid = undefined;
    rec.task.pidStartTime = undefined;
    rec.task.finishedAt ??= new Date().toISOString();
    if (!['complete', 'failed', 'lost'].includes(rec.status)) rec.status = 'complete';
    rec.statusDescription = description;
    this.#unregister();
    this.#ctx.changed(rec, previous);
    this.#ctx.finished(rec, 'stopped');
  }

  /** Sends the drain signal to the tree, waits up to the drain timeout, then SIGKILLs what is left. */
  async #terminateTree(pid: number): Promise<void> {
    const rec = this.record;
    const container = this.#container;
    await drainTree(
      pid,
      rec.group.drain,
      (type, message) => this.#ctx.changed(rec, rec.status, this.#event(type, message)),
      container ? (signal) => container.signal(signal) : undefined,
    );
    // A client killed after the drain timeout leaves its container running: it goes with the client.
    await this.#container?.remove();
  }

  #armDeadline(): void {
    const rec = this.record;
    clearTimeout(this.#deadlineTimer);
    const timeout = rec.group.task.timeout;
    if (this.restartsOnExit || !timeout) return;
    rec.deadlineAt ??= new Date(Date.now() + timeout.milliseconds).toISOString();
    const remaining = Math.max(0, Date.parse(rec.deadlineAt) - Date.now());
    this.#deadlineTimer = setTimeout(() => {
      const pid = rec.task.pid;
      if (pid === undefined || this.#stopping) return;
      this.#exitReason = 'timeout';
      signalTree(pid, 'SIGKILL');
    }, remaining);
  }

  #register(): void {
    if (this.restartsOnExit) this.#services.register();
  }

  /** True when the allocation has checks and every one passed at its latest probe. */
  get passing(): boolean {
    return this.#services.passing;
  }

  /** Re-registers services after a promotion changed the canary tag (checks keep running). */
  reregister(): void {
    this.#services.reregister();
  }

  /**
   * First step of a drain: the instances leave the registry (the gateway stops choosing them) while
   * the process keeps serving what it already accepted.
   */
  withdraw(): void {
    this.#services.unregister();
  }

  #unregister(): void {
    this.#services.unregister();
  }

  #event(type: TaskEventType, message: string): TaskEvent {
    const event: TaskEvent = { type, message, at: new Date().toISOString() };
    const events = this.record.task.events;
    events.push(event);
    if (events.length > MAX_EVENTS) events.splice(0, events.length - MAX_EVENTS);
    return event;
  }
}
