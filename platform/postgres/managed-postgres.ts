/**
 * The managed PostgreSQL server of the embedded default (ADR 0011): one cluster in
 * `<data>/postgres/cluster`, created once with `initdb`, run as an unprivileged system user, listening on
 * a Unix socket in `<data>/postgres/run` and on a loopback port chosen at first start and kept. The
 * platform starts it, restarts it when it dies, and stops it (fast shutdown) when the platform stops.
 * A server left running by a platform that was killed is found through `postmaster.pid` and adopted.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { UnavailableError } from '../../domain/errors.js';
import type { Logger } from '../logger.js';
import { postgresServerBinDir } from './postgres-binaries.js';
import { asUser, ensurePostgresOsUser, type OsUser } from './postgres-os-user.js';
import { initializeCluster, MANAGED_SUPERUSER, recoverState } from './managed-postgres-cluster.js';
import { signalReaches } from '../host/signal-reaches.js';
import { logTail, restartDelay, scheduleRestart, spawnDetachedServer } from '../host/detached-server.js';
import { isPostgresProcess, processAlive, readPostmasterPid } from './postmaster-pid.js';
import {
  firstBlockedFolder,
  managedPostgresLayout,
  readManagedState,
  writeManagedConf,
  type ManagedPostgresLayout,
  type ManagedState,
} from './managed-postgres-layout.js';

export { managedPostgresLayout, type ManagedPostgresLayout } from './managed-postgres-layout.js';

export interface ManagedPostgresOptions {
  /** The platform data folder; the cluster lives in `<dataDir>/postgres`. */
  readonly dataDir: string;
  readonly logger: Logger;
  /** Folder of the server programs. @default the Debian install of the cluster's major version (the newest at creation) */
  readonly binDir?: string;
  /** How often an adopted server (not our child) is checked for life. @default 1000 */
  readonly pollMs?: number;
  /** First delay before restarting a server that died; doubles up to 10 s. @default 250 */
  readonly restartDelayMs?: number;
  /** Longest wait for the server to accept connections. @default 60000 */
  readonly startTimeoutMs?: number;
}

/** How the platform's tools reach the managed server. */
export interface ManagedPostgresConnection {
  /** Folder of the Unix socket (a libpq host). */
  readonly socketDir: string;
  /** Loopback address of the TCP listener. */
  readonly host: '127.0.0.1';
  readonly port: number;
  /** Superuser role. */
  readonly user: string;
  /** File holding the superuser's password (mode 0600). */
  readonly passwordFile: string;
  /** Folder of the server and client programs. */
  readonly binDir: string;
}

/** What happened to the server process; for logs and tests. */
export interface ManagedPostgresEvent {
  readonly type: 'started' | 'adopted' | 'exited' | 'stopped';
  readonly pid: number;
  /** Exit code or signal (`exited`). */
  readonly exit?: string;
}

/** The managed server; {@link ManagedPostgres.open} returns it running. */
export class ManagedPostgres {
  readonly layout: ManagedPostgresLayout;
  readonly #log: Logger;
  readonly #user: OsUser;
  readonly #state: ManagedState;
  readonly #binDir: string;
  readonly #pollMs: number;
  readonly #restartDelayMs: number;
  readonly #startTimeoutMs: number;
  readonly #listeners = new Set<(event: ManagedPostgresEvent) => void>();
  #pid = 0;
  #child: ChildProcess | undefined;
  #poll: NodeJS.Timeout | undefined;
  #restartTimer: NodeJS.Timeout | undefined;
  #failures = 0;
  #closing = false;
  #restarting: { readonly attempt: () => Promise<void> | undefined } | undefined;

  private constructor(options: ManagedPostgresOptions, user: OsUser, state: ManagedState, binDir: string) {
    this.layout = managedPostgresLayout(options.dataDir);
    this.#log = options.logger.child({ component: 'managed-postgres' });
    this.#user = user;
    this.#state = state;
    this.#binDir = binDir;
    this.#pollMs = options.pollMs ?? 1000;
    this.#restartDelayMs = options.restartDelayMs ?? 250;
    this.#startTimeoutMs = options.startTimeoutMs ?? 60_000;
  }

  /** Creates the cluster when absent, then adopts its running server or starts it; resolves once it accepts connections. */
  static async open(options: ManagedPostgresOptions): Promise<ManagedPostgres> {
    const layout = managedPostgresLayout(options.dataDir);
    const user = ensurePostgresOsUser();
    fs.mkdirSync(layout.base, { recursive: true });
    fs.chmodSync(layout.base, 0o755);
    const blocked = firstBlockedFolder(layout.base, user);
    if (blocked !== undefined) {
      throw new UnavailableError(
        `the managed PostgreSQL runs as the system user ${user.name}, which cannot enter ${blocked}: grant it passage (\`setfacl -m u:${user.name}:x ${blocked}\` or \`chmod o+x ${blocked}\`), ` +
          'move SVC_DATA_DIR to a folder it can reach, or set SVC_POSTGRES_HOST to use an external server',
        { code: 'postgres_data_unreachable' },
      );
    }
    // initdb runs in a scratch folder renamed into place: a cluster folder is always a complete cluster.
    const state = !fs.existsSync(layout.cluster)
      ? await initializeCluster(layout, user, options)
      : fs.existsSync(layout.stateFile)
        ? readManagedState(layout)
        : await recoverState(layout, options.logger);
    const binDir = postgresServerBinDir({
      ...(options.binDir === undefined ? {} : { binDir: options.binDir }),
      major: state.major,
    });
    const server = new ManagedPostgres(options, user, state, binDir);
    await server.#startOrAdopt();
    return server;
  }

  /** Connection facts for the platform's tools (the superuser). */
  connection(): ManagedPostgresConnection {
    return {
      socketDir: this.layout.run,
      host: '127.0.0.1',
      port: this.#state.port,
      user: MANAGED_SUPERUSER,
      passwordFile: this.layout.superuserPasswordFile,
      binDir: this.#binDir,
    };
  }

  /** Process id of the running postmaster (0 while none runs). */
  get pid(): number {
    return this.#pid;
  }

  /** Calls `listener` for each start, adoption, unexpected exit and stop; returns the unsubscribe. */
  watch(listener: (event: ManagedPostgresEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Stops the server with a fast shutdown (rolls back open transactions, checkpoints), waiting for it to exit. */
  /**
   * Stops supervising and leaves the server running, for the next start of the platform to adopt:
   * an API restart by the host agent (ADR 0086), during which apps keep their connections.
   */
  release(): void {
    if (this.#closing) return;
    this.#closing = true;
    clearInterval(this.#poll);
    clearTimeout(this.#restartTimer);
    this.#child?.unref();
    if (this.#pid !== 0)
      this.#log.info({ postgresPid: this.#pid }, 'managed PostgreSQL left running for the next start to adopt');
  }

  async close(): Promise<void> {
    if (this.#closing) return;
    this.#closing = true;
    clearInterval(this.#poll);
    clearTimeout(this.#restartTimer);
    await this.#restarting?.attempt()?.catch(() => undefined);
    const pid = this.#pid;
    if (pid === 0 || !processAlive(pid)) return;
    // The child handle is referenced again so that the wait for its exit keeps the process alive.
    this.#child?.ref();
    const exited = this.#child
      ? new Promise<void>((resolve) => this.#child!.once('exit', () => resolve()))
      : waitUntil(() => !processAlive(pid), 100);
    process.kill(pid, 'SIGINT');
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), 60_000)));
    const outcome = await Promise.race([exited, deadline]);
    clearTimeout(timer);
    if (outcome === 'timeout') {
      this.#log.warn(
        { postgresPid: pid },
        'PostgreSQL did not finish a fast shutdown within 60 s: stopping it immediately',
      );
      process.kill(pid, 'SIGQUIT');
      await exited;
    }
    this.#pid = 0;
    this.#log.info({ postgresPid: pid }, 'managed PostgreSQL stopped');
    this.#emit({ type: 'stopped', pid });
  }

  #emit(event: ManagedPostgresEvent): void {
    for (const listener of this.#listeners) listener(event);
  }

  async #startOrAdopt(): Promise<void> {
    const found = readPostmasterPid(this.layout.cluster);
    if (found && processAlive(found.pid) && isPostgresProcess(found.pid)) {
      if (found.port === this.#state.port && found.socketDir === this.layout.run) {
        await waitUntil(
          () => readPostmasterPid(this.layout.cluster)?.status === 'ready' || !processAlive(found.pid),
          50,
          this.#startTimeoutMs,
        );
        if (processAlive(found.pid)) {
          this.#pid = found.pid;
          this.#watchAdopted();
          this.#log.info(
            { postgresPid: found.pid, port: found.port },
            'managed PostgreSQL adopted (left running by an earlier start)',
          );
          this.#emit({ type: 'adopted', pid: found.pid });
          return;
        }
      } else {
        // Running with other settings (an older layout): restart it with the current ones.
        this.#log.warn(
          { postgresPid: found.pid, port: found.port },
          'managed PostgreSQL runs with other settings: restarting it',
        );
        process.kill(found.pid, 'SIGINT');
        await waitUntil(() => !processAlive(found.pid), 100, 60_000);
      }
    } else if (found && !processAlive(found.pid) && signalReaches(found.pid)) {
      // A dead server its parent never reaped still holds the pid: PostgreSQL would take it for a live one.
      fs.rmSync(path.join(this.layout.cluster, 'postmaster.pid'), { force: true });
    }
    await this.#start();
  }

  async #start(): Promise<void> {
    writeManagedConf(this.layout, this.#state, this.#user);
    rotateLog(this.layout.log);
    // Its own session: a Ctrl-C in the platform's terminal must not reach it, and it outlives a killed platform.
    const child: ChildProcess = spawnDetachedServer(
      path.join(this.#binDir, 'postgres'),
      ['-D', this.layout.cluster],
      this.layout.log,
      {
        ...asUser(this.#user),
        cwd: this.layout.cluster,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C', TZ: 'UTC' },
      },
    );
    const started = new Promise<never>((_, reject) => {
      child.once('error', (error) =>
        reject(
          new UnavailableError(`PostgreSQL could not be started: ${error.message}`, {
            code: 'postgres_start_failed',
            cause: error,
          }),
        ),
      );
      child.once('exit', (code, signal) =>
        reject(
          new UnavailableError(
            `PostgreSQL exited at start (${signal ?? `code ${code}`}): ${logTail(this.layout.log, '(no server log)')}`,
            {
              code: 'postgres_start_failed',
            },
          ),
        ),
      );
    });
    started.catch(() => undefined);
    const pid = child.pid ?? 0;
    // A server that exits at start (another's shared memory still held, say) ends the race: the wait
    // for its readiness stops with it instead of reading postmaster.pid until the start timeout.
    const readyWait = new AbortController();
    const ready = waitUntil(
      () =>
        readPostmasterPid(this.layout.cluster)?.pid === pid &&
        readPostmasterPid(this.layout.cluster)?.status === 'ready',
      50,
      this.#startTimeoutMs,
      readyWait.signal,
    );
    const outcome = await Promise.race([
      ready.then(
        () => 'ready' as const,
        () => 'timeout' as const,
      ),
      started,
    ]).finally(() => readyWait.abort());
    if (outcome === 'timeout') {
      // Still starting at the deadline: it is stopped, not left running unwatched.
      child.kill('SIGQUIT');
      throw new UnavailableError(
        `PostgreSQL did not accept connections within ${this.#startTimeoutMs} ms: ${logTail(this.layout.log, '(no server log)')}`,
        { code: 'postgres_start_failed' },
      );
    }
    child.removeAllListeners('exit');
    child.removeAllListeners('error');
    child.unref();
    this.#child = child;
    this.#pid = pid;
    child.once('exit', (code, signal) => this.#died(pid, signal ?? `code ${code}`));
    this.#log.info(
      { postgresPid: pid, port: this.#state.port, socketDir: this.layout.run },
      'managed PostgreSQL started',
    );
    this.#emit({ type: 'started', pid });
  }

  /** An adopted server is not our child: its end is seen by polling. */
  #watchAdopted(): void {
    const pid = this.#pid;
    this.#poll = setInterval(() => {
      if (processAlive(pid)) return;
      clearInterval(this.#poll);
      this.#died(pid, 'unknown (adopted)');
    }, this.#pollMs);
  }

  #died(pid: number, exit: string): void {
    if (this.#closing || this.#pid !== pid) return;
    this.#pid = 0;
    this.#child = undefined;
    this.#failures += 1;
    const delay = restartDelay(this.#restartDelayMs, this.#failures);
    this.#log.error(
      { postgresPid: pid, exit, restartInMs: delay, log: logTail(this.layout.log, '(no server log)') },
      'managed PostgreSQL exited: restarting it',
    );
    this.#emit({ type: 'exited', pid, exit });
    const restart = scheduleRestart(delay, () => this.#startOrAdopt(), {
      started: () => {
        this.#failures = 0;
      },
      failed: (error) => {
        this.#log.error({ err: error }, 'managed PostgreSQL restart failed');
        if (!this.#closing) this.#died(0, 'restart failed');
      },
    });
    this.#restartTimer = restart.timer;
    this.#restarting = restart;
  }
}

/**
 * Resolves once `done()` holds, checking every `everyMs`; rejects after `timeoutMs`. Once `signal` is
 * aborted it stops checking and never settles: a wait that lost a race must not poll on to its deadline.
 */
function waitUntil(
  done: () => boolean,
  everyMs: number,
  timeoutMs = Number.POSITIVE_INFINITY,
  signal?: AbortSignal,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const check = () => {
      if (signal?.aborted) return;
      if (done()) return resolve();
      if (Date.now() > deadline)
        return reject(
          new UnavailableError(`PostgreSQL did not reach the expected state within ${timeoutMs} ms`, {
            code: 'postgres_start_failed',
          }),
        );
      setTimeout(check, everyMs);
    };
    check();
  });
}

/** Keeps the server log below 16 MiB: a larger one is moved to `server.log.1` at start. */
function rotateLog(file: string): void {
  try {
    if (fs.statSync(file).size > 16 * 1024 * 1024) fs.renameSync(file, `${file}.1`);
  } catch {
    // No log yet.
  }
}
