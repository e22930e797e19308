/**
 * The API process of this host, as the host agent sees it: `svc serve` records itself in
 * `<platform dir>/api.json` (pid and start time, serve arguments, working directory, URL, release);
 * the agent restarts it by stopping that process and starting the release in `current` (`bin/svc.js`
 * of a built checkout, the `svc` executable of the release artifact: {@link releaseCommand}) with
 * `serve`, the same arguments and its own environment, detached, output appended to
 * `<platform dir>/api.log`.
 * With a restart command (a service unit: `systemctl restart svc`) the agent runs that instead; in
 * `stop` mode (the installed unit, `Restart=always`, ADR 0087) it only stops the API and its
 * supervisor starts `current` again.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { writeFileAtomic } from '../files/write-file-atomic.js';
import { isProcessAlive, listProcesses, readEnvironment, readProcess } from '../local-scheduler/tasks/process-table.js';
import { releaseCommand } from './release-command.js';
import {
  handOffSpawnOptions,
  PREPARED_START_ENV,
  sendListeners,
  startPrepared,
  whenPrepared,
} from './listener-handoff.js';

/** What `svc serve` records about itself. */
export interface ApiProcessRecord {
  readonly pid: number;
  readonly startTime: string | undefined;
  /** The arguments after `serve`. */
  readonly argv: readonly string[];
  readonly cwd: string;
  readonly url: string;
  /** The release folder it runs from (its package root). */
  readonly root: string;
}

const RECORD = 'api.json';
/**
 * The process an agent last spawned as the API: `api.json` comes only once it listens, and an agent
 * that dies in between would leave a starting API no record names. Written twice: before the spawn
 * with a spawn id the process carries in its environment ({@link SPAWN_ID_ENV}), so that an agent
 * killed between the spawn and the second write still leaves its API findable; after it with the
 * pid and start time.
 */
const STARTED = 'api-started.json';
const SPAWN_ID_ENV = 'SVC_API_SPAWN_ID';

/** Records the running API (called by `svc serve` once it listens). */
export function recordApiProcess(platformDir: string, record: Omit<ApiProcessRecord, 'pid' | 'startTime'>): void {
  fs.mkdirSync(platformDir, { recursive: true });
  writeFileAtomic(
    path.join(platformDir, RECORD),
    JSON.stringify({ pid: process.pid, startTime: readProcess(process.pid)?.startTime, ...record }),
    0o600,
  );
}

/** Removes the record when it is this process's (called at a clean stop). */
export function clearApiProcess(platformDir: string): void {
  const file = path.join(platformDir, RECORD);
  if (readApiProcess(platformDir)?.pid === process.pid) fs.rmSync(file, { force: true });
}

/** The recorded API process, or undefined. */
export function readApiProcess(platformDir: string): ApiProcessRecord | undefined {
  try {
    return JSON.parse(fs.readFileSync(path.join(platformDir, RECORD), 'utf8')) as ApiProcessRecord;
  } catch {
    return undefined;
  }
}

/** True when the recorded API process is alive (same pid and start time). */
export function apiAlive(record: ApiProcessRecord | undefined): boolean {
  return record !== undefined && isProcessAlive(record.pid, record.startTime);
}

/** A process by pid and start time (a recycled pid is another process). */
type StartedApi = Pick<ApiProcessRecord, 'pid' | 'startTime'>;

/** What `api-started.json` holds: the spawn id always, the process once spawned. */
interface StartedRecord extends Partial<StartedApi> {
  readonly spawnId?: string;
}

/** An API stopped by {@link ApiRestarter.stopRecorded}. */
export interface StoppedApi {
  /** The pid of the process that was (or, with a restart command, will be) replaced. */
  readonly replaced: number | undefined;
  readonly record: ApiProcessRecord | undefined;
  /** False with a restart command or in `stop` mode: the API still runs until the second half replaces it. */
  readonly stopped: boolean;
  /** The next API, started prepared before the old one stopped: the second half tells it to start. */
  readonly prepared?: ChildProcess;
}

/** Options of {@link ApiRestarter}. */
export interface ApiRestarterOptions {
  readonly platformDir: string;
  /** The `current` link: the API starts from the release it points at when spawned. */
  readonly currentLink: string;
  /** Environment of the started API (the agent's own). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Run with `/bin/sh -c` instead of stopping and starting the process (service units). */
  readonly restartCommand?: string;
  /**
   * `spawn`: stop the API, then start `current`'s; `stop`: only stop it, a supervisor starts it again
   * (a systemd unit tracks only the processes it started itself). @default spawn
   */
  readonly mode?: 'spawn' | 'stop';
  /** How long a stopping API may take before SIGKILL. @default 30000 */
  readonly stopTimeoutMs?: number;
  /**
   * How long the next API, started prepared while the old one serves, may take to load its code;
   * past it (or when it exits) the old API stops all the same and the next one starts plainly.
   * @default 30000
   */
  readonly prepareTimeoutMs?: number;
}

/** Restarts only the API process. */
export class ApiRestarter {
  #started: StartedApi | undefined;

  constructor(private readonly options: ApiRestarterOptions) {}

  /** False once the API process this restarter last started has exited (undefined: it started none, or a restart command did). */
  startedAlive(): boolean | undefined {
    return this.#started === undefined ? undefined : isProcessAlive(this.#started.pid, this.#started.startTime);
  }

  /** The last record `svc serve` wrote. */
  record(): ApiProcessRecord | undefined {
    return readApiProcess(this.options.platformDir);
  }

  /**
   * Stops the recorded API (SIGUSR2, see {@link stop}; SIGKILL after the stop timeout) and starts the one in
   * `current`; resolves once the new process is spawned (or the restart command returned, or, in
   * `stop` mode, once the old process is gone), with the pid of the process it replaced.
   * `fallback` gives serve arguments when nothing was recorded.
   */
  async restart(fallback?: Pick<ApiProcessRecord, 'argv' | 'cwd' | 'url'>): Promise<{ replaced: number | undefined }> {
    const stopped = await this.stopRecorded(fallback);
    await this.startStopped(stopped);
    return { replaced: stopped.replaced };
  }

  /**
   * The first half of a restart: stops the recorded API and waits until it is gone (with a restart
   * command, which stops and starts in one, nothing is stopped here). What it returns starts the
   * API again with {@link startStopped}.
   */
  async stopRecorded(fallback?: Pick<ApiProcessRecord, 'argv' | 'cwd' | 'url'>): Promise<StoppedApi> {
    const before = this.record() ?? (fallback ? { pid: 0, startTime: undefined, root: '', ...fallback } : undefined);
    this.#started = undefined;
    // With a restart command, or a supervisor that starts the API again (`stop` mode), the API keeps
    // running until the second half replaces it.
    if (this.options.restartCommand !== undefined || this.options.mode === 'stop')
      return { replaced: before?.pid, record: before, stopped: false };
    if (!before)
      throw new Error(
        `no API process is recorded in ${path.join(this.options.platformDir, RECORD)} and no serve arguments were given`,
      );
    // An agent that died after spawning an API but before that API recorded itself (a restart step
    // it ran when killed) left it starting: it would take the port from the one started below.
    const orphan = this.#startedUnrecorded(before);
    if (orphan !== undefined) await this.stop(orphan);
    // While the old API serves, the next one loads its code (most of a start) beside it, holding
    // the same listeners; the gap while neither serves is then the old one's stop and the new
    // one's opening of its stores (ADR 0159).
    const prepared = apiAlive(before) ? await this.#prepare(before) : undefined;
    if (apiAlive(before)) await this.stop(before);
    return { replaced: before.pid, record: before, stopped: true, ...(prepared ? { prepared } : {}) };
  }

  /** The second half: starts the API from `current` (or runs the restart command, or, in `stop` mode, stops it for its supervisor to start `current`). */
  async startStopped(stopped: StoppedApi): Promise<void> {
    if (this.options.mode === 'stop') {
      // An API that is not recorded (one crashing as it starts) is the supervisor's business.
      if (stopped.record !== undefined && apiAlive(stopped.record)) await this.stop(stopped.record);
      return;
    }
    if (this.options.restartCommand !== undefined) {
      await runCommand(this.options.restartCommand, this.options.env);
      return;
    }
    // The prepared API closes the channel itself once it has the word (closing it here could drop
    // the word still being written; a prepared API whose channel closes before the word exits).
    if (stopped.prepared !== undefined && startPrepared(stopped.prepared)) return;
    this.start(stopped.record!);
  }

  /** The API process last spawned here (by any agent) when it still runs and is not `recorded`. */
  #startedUnrecorded(recorded: StartedApi): StartedApi | undefined {
    let started: StartedRecord;
    try {
      started = JSON.parse(fs.readFileSync(path.join(this.options.platformDir, STARTED), 'utf8')) as StartedRecord;
    } catch {
      return undefined;
    }
    // The same pid is the same process unless both start times are known and differ (a recycled pid).
    const isRecorded = (candidate: StartedApi) =>
      candidate.pid === recorded.pid &&
      (candidate.startTime === undefined ||
        recorded.startTime === undefined ||
        candidate.startTime === recorded.startTime);
    if (started.pid !== undefined) {
      const candidate = { pid: started.pid, startTime: started.startTime };
      return !isRecorded(candidate) && isProcessAlive(candidate.pid, candidate.startTime) ? candidate : undefined;
    }
    // Killed between the spawn and its record: the process is known by the spawn id it carries.
    if (started.spawnId === undefined) return undefined;
    const found = listProcesses().find(
      (info) => info.state !== 'Z' && readEnvironment(info.pid)?.get(SPAWN_ID_ENV) === started.spawnId,
    );
    if (found === undefined) return undefined;
    const candidate = { pid: found.pid, startTime: found.startTime };
    return isRecorded(candidate) ? undefined : candidate;
  }

  /** Starts the next API prepared; undefined when it did not get ready (it is stopped then). */
  async #prepare(record: Pick<ApiProcessRecord, 'argv' | 'cwd' | 'url'>): Promise<ChildProcess | undefined> {
    const child = this.#spawn(record, true);
    if (child === undefined) return undefined;
    if (await whenPrepared(child, this.options.prepareTimeoutMs ?? 30_000)) return child;
    try {
      child.kill('SIGKILL');
    } catch {
      // Gone already.
    }
    this.#started = undefined;
    return undefined;
  }

  /**
   * Stops one API process for a restart and waits until it is gone: SIGUSR2, which `svc serve` takes
   * as a restart (it stops like on SIGTERM but leaves the managed PostgreSQL server running for the
   * next API to adopt, so apps keep their database connections).
   */
  async stop(record: StartedApi): Promise<void> {
    try {
      process.kill(record.pid, 'SIGUSR2');
    } catch {
      return;
    }
    const deadline = Date.now() + (this.options.stopTimeoutMs ?? 30_000);
    // Not our child: its exit can only be seen in /proc.
    while (isProcessAlive(record.pid, record.startTime)) {
      if (Date.now() > deadline) {
        try {
          process.kill(record.pid, 'SIGKILL');
        } catch {
          // Gone meanwhile.
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /**
   * Starts the release in `current` (`<current>/bin/svc.js` or `<current>/svc`, the link followed
   * at spawn time) with `serve` detached, the recorded arguments, on the recorded port.
   */
  start(record: Pick<ApiProcessRecord, 'argv' | 'cwd' | 'url'>): number {
    return this.#spawn(record, false)?.pid ?? 0;
  }

  #spawn(record: Pick<ApiProcessRecord, 'argv' | 'cwd' | 'url'>, prepared: boolean): ChildProcess | undefined {
    const [program, ...leading] = releaseCommand(this.options.currentLink);
    const log = fs.openSync(path.join(this.options.platformDir, 'api.log'), 'a', 0o600);
    try {
      const port = new URL(record.url).port;
      const handOff = handOffSpawnOptions();
      const spawnId = randomUUID();
      const startedFile = path.join(this.options.platformDir, STARTED);
      writeFileAtomic(startedFile, JSON.stringify({ spawnId } satisfies StartedRecord), 0o600);
      const child = spawn(program, [...leading, 'serve', ...record.argv], {
        cwd: record.cwd,
        env: {
          ...this.options.env,
          ...(port === '' ? {} : { SVC_PORT: port }),
          ...handOff.env,
          [SPAWN_ID_ENV]: spawnId,
          ...(prepared ? { [PREPARED_START_ENV]: '1' } : {}),
        },
        detached: true,
        stdio: handOff.ipc || prepared ? ['ignore', log, log, 'ipc'] : ['ignore', log, log],
      });
      child.unref();
      sendListeners(child);
      if (child.pid === undefined) return undefined;
      this.#started = { pid: child.pid, startTime: readProcess(child.pid)?.startTime };
      writeFileAtomic(startedFile, JSON.stringify({ ...this.#started, spawnId } satisfies StartedRecord), 0o600);
      return child;
    } finally {
      fs.closeSync(log);
    }
  }
}

function runCommand(command: string, env: Readonly<Record<string, string | undefined>>): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', command], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-2048)));
    child.stderr.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-2048)));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`the restart command exited ${code}: ${output.trim()}`)),
    );
  });
}
