/**
 * Task spawner: a small long-lived helper process (a Perl script, 3-4 MB; Perl is part of every
 * Debian and Ubuntu base system) that forks and execs tasks for the local driver, so the control
 * plane never forks itself (ADR 0199). libuv forks the calling process for every `spawn()` and
 * blocks the event loop until the child has exec'd: for a control plane of a few hundred MB that is
 * page-table copying proportional to its mappings, and under load the wait for the child to be
 * scheduled. The helper forks a process of a few MB instead, off the control plane's loop.
 *
 * The child does what libuv's detached spawn did (new session, stdin from /dev/null, stdout and
 * stderr appended to the allocation's log files, the working directory, exactly the given
 * environment), and joins the allocation's CPU-weight cgroup itself before it execs, so every process
 * of the task starts in the group. The helper reports each pid once the exec succeeded (or why it
 * failed, through a close-on-exec pipe as libuv does) and each exit as `waitpid` saw it.
 *
 * When the helper cannot be started or dies, the driver spawns directly as before; tasks launched
 * through a helper that died are watched through `/proc` like re-adopted ones. The script itself is
 * in `task-spawner-script.ts`.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import type { Readable, Writable } from 'node:stream';
import { spawnerScript, SYSCALLS } from './task-spawner-script.js';

/**
 * The sandbox of ADR 0047 applied by the helper's child before it execs the task, in place of the
 * wrapper chain (`unshare`, the mount shell, `prlimit`, `setpriv`): a private mount namespace with
 * read-write bind mounts, the rlimits, then the user without other groups and with no new privileges.
 */
export interface SpawnSandbox {
  /** A private mount namespace (private propagation) with these read-write binds, in order; undefined: none. */
  readonly binds?: readonly { readonly source: string; readonly target: string }[];
  /** `RLIMIT_NOFILE`, soft = hard. */
  readonly nofile: number;
  /** The user to become, and `RLIMIT_NPROC` (applied with a user only); undefined: stay this user. */
  readonly identity?: {
    readonly uid: number;
    readonly gid: number;
    readonly groups: readonly number[];
    readonly nproc: number;
  };
}

/** What to start, as `child_process.spawn` with `detached: true` and output appended to two files would. */
export interface SpawnRequest {
  readonly file: string;
  readonly args: readonly string[];
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
  /** Appended to (created when missing). */
  readonly stdoutPath: string;
  readonly stderrPath: string;
  /** The cgroup the child joins before it execs: the folder (created), a weight file and its value. */
  readonly cgroup?: { readonly group: string; readonly file: string; readonly value: string };
  /** Applied by the child before it execs `file` (only when {@link TaskSpawner.sandboxes}). */
  readonly sandbox?: SpawnSandbox;
}

/** A task the helper started. */
export interface SpawnedTask {
  readonly pid: number;
  /** Why the CPU weight was not applied, when it was asked for and failed. */
  readonly warning?: string;
}

/** Follows one spawned task until its exit, or until the helper is gone (then nobody reports it). */
export interface TaskWatch {
  exit(code: number | null, signal: NodeJS.Signals | null): void;
  /** The helper died: this task's exit will not be reported (watch it through `/proc`). */
  lost(): void;
}

const SIGNAL_NAMES = new Map<number, NodeJS.Signals>(
  Object.entries(os.constants.signals).map(([name, number]) => [number, name as NodeJS.Signals]),
);

/** The driver's spawner helper: one per driver, started once. */
export class TaskSpawner {
  readonly #child: ChildProcessByStdio<Writable, Readable, null>;
  readonly #pending = new Map<string, { resolve(task: SpawnedTask): void; reject(error: Error): void }>();
  readonly #watches = new Map<number, TaskWatch>();
  #next = 0;
  #alive = true;
  #buffer = '';

  private constructor(child: ChildProcessByStdio<Writable, Readable, null>) {
    this.#child = child;
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => this.#read(chunk));
    child.stdin.on('error', () => this.#gone());
    child.once('error', () => this.#gone());
    child.once('exit', () => this.#gone());
    // Neither the helper nor its pipes keep the platform alive, except while a start awaits its answer.
    child.unref();
    this.#output().unref();
    (child.stdin as Writable & { unref?(): void }).unref?.();
  }

  /** True when the helper applies a {@link SpawnSandbox} itself (a known architecture). */
  get sandboxes(): boolean {
    return SYSCALLS[process.arch] !== undefined;
  }

  /** Starts the helper (`perl`); undefined when it cannot be started here. */
  static start(perl = 'perl'): TaskSpawner | undefined {
    try {
      const child = spawn(perl, ['-e', spawnerScript()], { stdio: ['pipe', 'pipe', 'inherit'] });
      if (child.pid === undefined) {
        child.once('error', () => undefined);
        return undefined;
      }
      return new TaskSpawner(child);
    } catch {
      return undefined;
    }
  }

  /** True while the helper runs. */
  get alive(): boolean {
    return this.#alive;
  }

  /** The helper's pid (tests). */
  get pid(): number | undefined {
    return this.#child.pid;
  }

  /**
   * Starts a task; resolves once it exec'd (its pid is the program's, after its wrappers exec
   * in turn), rejects when it could not be started. `watch` follows its exit.
   */
  spawn(request: SpawnRequest, watch: TaskWatch): Promise<SpawnedTask> {
    if (!this.#alive) return Promise.reject(new SpawnerGoneError());
    const id = String((this.#next += 1));
    const fields = [
      id,
      request.cwd,
      request.stdoutPath,
      request.stderrPath,
      request.cgroup?.group ?? '',
      request.cgroup?.file ?? '',
      request.cgroup?.value ?? '',
      ...sandboxFields(request.sandbox),
      String(request.args.length + 1),
      request.file,
      ...request.args,
      ...Object.entries(request.env).map(([name, value]) => `${name}=${value}`),
    ];
    if (fields.some((field) => field.includes('\0')))
      return Promise.reject(new Error('an argument or environment value contains a NUL byte'));
    const payload = Buffer.from(fields.join('\0'), 'utf8');
    return new Promise<SpawnedTask>((resolve, reject) => {
      this.#pending.set(id, {
        resolve: (task) => {
          this.#watches.set(task.pid, watch);
          resolve(task);
        },
        reject,
      });
      if (this.#pending.size === 1) this.#output().ref();
      this.#child.stdin.write(Buffer.concat([Buffer.from(`${payload.length}\n`), payload]));
      this.#refillSpares();
    });
  }

  /**
   * Keeps `count` spare processes forked ahead, each already in the cgroup `group(id)` gives for a
   * fresh id (ADR 0201): joining a cgroup waits for an RCU grace period in the kernel (10-15 ms
   * here), which a start then skips. {@link takeSpare} hands out the id for a new allocation, and
   * its start (a request with that cgroup) goes to the spare. Nothing is kept when `group` gives none.
   */
  keepSpares(count: number, group: (id: string) => string | undefined): void {
    this.#spareCount = count;
    this.#spareGroup = group;
    this.#refillSpares();
  }

  /** The id of a spare that joined its cgroup ahead (an allocation takes it as its own id), if one is ready. */
  takeSpare(): string | undefined {
    if (!this.#alive) return undefined;
    // The next spare is asked for after the start request that takes this one (spawn): the helper
    // forks it once that start exec'd, not before.
    return this.#spares.shift();
  }

  /** Ids of spares not handed out (their cgroups are released when the helper ends). */
  unusedSpares(): readonly string[] {
    return this.#spares;
  }

  /** Ids of spares ready, not handed out yet. */
  #spares: string[] = [];
  #spareCount = 0;
  #spareGroup: ((id: string) => string | undefined) | undefined;

  #refillSpares(): void {
    while (this.#alive && this.#spareGroup !== undefined && this.#spares.length < this.#spareCount) {
      const id = randomUUID();
      const group = this.#spareGroup(id);
      if (group === undefined || group.includes('\0')) return;
      this.#spares.push(id);
      const payload = Buffer.from(['spare', group].join('\0'), 'utf8');
      this.#child.stdin.write(Buffer.concat([Buffer.from(`${payload.length}\n`), payload]));
    }
  }

  /** Ends the helper; the tasks it started keep running. */
  close(): void {
    if (!this.#alive) return;
    this.#child.stdin.end();
    this.#gone();
  }

  #output(): { ref(): void; unref(): void } {
    return this.#child.stdout as unknown as { ref(): void; unref(): void };
  }

  #read(chunk: string): void {
    this.#buffer += chunk;
    let newline: number;
    while ((newline = this.#buffer.indexOf('\n')) >= 0) {
      const line = this.#buffer.slice(0, newline);
      this.#buffer = this.#buffer.slice(newline + 1);
      this.#answer(line);
    }
  }

  #answer(line: string): void {
    const [kind, a, b, ...rest] = line.split(' ');
    if (kind === 'exit') {
      const pid = Number(a);
      const watch = this.#watches.get(pid);
      this.#watches.delete(pid);
      const signal = Number(rest[0]);
      watch?.exit(signal > 0 ? null : Number(b), signal > 0 ? (SIGNAL_NAMES.get(signal) ?? 'SIGKILL') : null);
      return;
    }
    const pending = this.#pending.get(a ?? '');
    if (!pending) return;
    this.#pending.delete(a!);
    if (this.#pending.size === 0) this.#output().unref();
    if (kind === 'spawned') {
      const warning = rest.join(' ');
      pending.resolve({ pid: Number(b), ...(warning ? { warning } : {}) });
    } else pending.reject(new Error([b, ...rest].join(' ')));
  }

  #gone(): void {
    if (!this.#alive) return;
    this.#alive = false;
    for (const pending of this.#pending.values()) pending.reject(new SpawnerGoneError());
    this.#pending.clear();
    const watches = [...this.#watches.values()];
    this.#watches.clear();
    for (const watch of watches) watch.lost();
  }
}

function sandboxFields(sandbox: SpawnSandbox | undefined): string[] {
  if (sandbox === undefined) return ['0', '', '', '', '', '', '0', '0'];
  const { identity, binds } = sandbox;
  return [
    '1',
    String(sandbox.nofile),
    String(identity?.nproc ?? ''),
    String(identity?.uid ?? ''),
    String(identity?.gid ?? ''),
    identity?.groups.join(',') ?? '',
    binds === undefined ? '0' : '1',
    String(binds?.length ?? 0),
    ...(binds ?? []).flatMap((bind) => [bind.source, bind.target]),
  ];
}

/** The helper was gone before it answered: the caller spawns directly instead. */
export class SpawnerGoneError extends Error {
  constructor() {
    super('the task spawner is not running');
    this.name = 'SpawnerGoneError';
  }
}
