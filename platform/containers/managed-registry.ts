/**
 * The managed image registry of the container runtime (ADR 0220): Debian's `docker-registry` (the
 * CNCF Distribution registry), bound to loopback on a port chosen at first start and kept, its
 * storage in `<dataDir>/registry/storage`. The platform starts it, restarts it when it dies, adopts
 * one left running by an earlier start, and stops it when the platform stops, as it does the managed
 * PostgreSQL server. Images are pushed to it by the release builder and pulled from it by digest.
 */
import { execFile, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { UnavailableError } from '../../domain/errors.js';
import { signalReaches } from '../host/signal-reaches.js';
import { logTail, restartDelay, scheduleRestart, spawnDetachedServer } from '../host/detached-server.js';
import type { Logger } from '../logger.js';

/** Options of {@link ManagedRegistry.open}. */
export interface ManagedRegistryOptions {
  /** The platform data folder; the registry lives in `<dataDir>/registry`. */
  readonly dataDir: string;
  readonly logger: Logger;
  /** The registry program. @default docker-registry */
  readonly program?: string;
  /** Loopback port; 0 picks a free one at first start, kept afterwards. @default 0 */
  readonly port?: number;
  /** Longest wait for the registry to answer. @default 15000 */
  readonly startTimeoutMs?: number;
}

/** Where the registry's files live. */
export interface ManagedRegistryLayout {
  readonly base: string;
  readonly storage: string;
  readonly config: string;
  readonly state: string;
  readonly pidFile: string;
  readonly log: string;
}

/** The files of the managed registry under `dataDir`. */
export function managedRegistryLayout(dataDir: string): ManagedRegistryLayout {
  const base = path.join(dataDir, 'registry');
  return {
    base,
    storage: path.join(base, 'storage'),
    config: path.join(base, 'config.yml'),
    state: path.join(base, 'state.json'),
    pidFile: path.join(base, 'registry.pid'),
    log: path.join(base, 'registry.log'),
  };
}

/** The registry program's configuration: loopback only, deletes on (retention), no other listener. */
export function registryConfig(layout: ManagedRegistryLayout, port: number): string {
  return [
    'version: 0.1',
    'log:',
    '  level: warn',
    '  accesslog:',
    '    disabled: true',
    'storage:',
    '  filesystem:',
    `    rootdirectory: ${JSON.stringify(layout.storage)}`,
    '  delete:',
    '    enabled: true',
    'http:',
    `  addr: 127.0.0.1:${port}`,
    '',
  ].join('\n');
}

/** The managed registry; {@link ManagedRegistry.open} returns it answering. */
export class ManagedRegistry {
  readonly layout: ManagedRegistryLayout;
  readonly port: number;
  readonly #log: Logger;
  readonly #program: string;
  readonly #startTimeoutMs: number;
  #pid = 0;
  #child: ChildProcess | undefined;
  #poll: NodeJS.Timeout | undefined;
  #restartTimer: NodeJS.Timeout | undefined;
  #failures = 0;
  #closing = false;

  private constructor(options: ManagedRegistryOptions, port: number) {
    this.layout = managedRegistryLayout(options.dataDir);
    this.port = port;
    this.#log = options.logger.child({ component: 'managed-registry' });
    this.#program = options.program ?? 'docker-registry';
    this.#startTimeoutMs = options.startTimeoutMs ?? 15_000;
  }

  /** Creates the registry's folder when absent, then adopts its running server or starts one. */
  static async open(options: ManagedRegistryOptions): Promise<ManagedRegistry> {
    const layout = managedRegistryLayout(options.dataDir);
    fs.mkdirSync(layout.storage, { recursive: true, mode: 0o700 });
    let port = readPort(layout);
    if (port === undefined) {
      port = options.port && options.port > 0 ? options.port : await freeLoopbackPort();
      fs.writeFileSync(layout.state, `${JSON.stringify({ port })}\n`, { mode: 0o600 });
    }
    fs.writeFileSync(layout.config, registryConfig(layout, port), { mode: 0o600 });
    const registry = new ManagedRegistry(options, port);
    await registry.#startOrAdopt();
    return registry;
  }

  /** `127.0.0.1:<port>`: the registry part of image references. */
  get host(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** Process id of the running registry (0 while none runs). */
  get pid(): number {
    return this.#pid;
  }

  /** True when the registry answers its API root. */
  async answers(timeoutMs = 2_000): Promise<boolean> {
    try {
      const response = await fetch(`http://${this.host}/v2/`, { signal: AbortSignal.timeout(timeoutMs) });
      await response.arrayBuffer();
      return response.status === 200;
    } catch {
      return false;
    }
  }

  /** Stops supervising and leaves the registry running for the next start to adopt (an API restart). */
  release(): void {
    if (this.#closing) return;
    this.#closing = true;
    clearInterval(this.#poll);
    clearTimeout(this.#restartTimer);
    this.#child?.unref();
  }

  /** Stops the registry and waits for it to exit. */
  async close(): Promise<void> {
    if (this.#closing) return;
    this.#closing = true;
    clearInterval(this.#poll);
    clearTimeout(this.#restartTimer);
    const pid = this.#pid;
    this.#pid = 0;
    if (pid === 0 || !signalReaches(pid)) return;
    // The handle is referenced again so that the wait for its exit keeps the process alive.
    this.#child?.ref();
    const exited = this.#child
      ? new Promise<void>((resolve) => {
          if (this.#child!.exitCode !== null || this.#child!.signalCode !== null) resolve();
          else this.#child!.once('exit', () => resolve());
        })
      : waitFor(() => !alive(pid), 50, 10_000).catch(() => undefined);
    process.kill(pid, 'SIGTERM');
    await exited;
    fs.rmSync(this.layout.pidFile, { force: true });
    this.#log.info({ registryPid: pid }, 'managed registry stopped');
  }

  async #startOrAdopt(): Promise<void> {
    const pid = readPid(this.layout.pidFile);
    if (pid !== undefined && alive(pid) && isRegistryProcess(pid) && (await this.answers())) {
      this.#pid = pid;
      this.#poll = setInterval(() => {
        if (!alive(pid)) {
          clearInterval(this.#poll);
          this.#died(pid, 'unknown (adopted)');
        }
      }, 1_000);
      this.#poll.unref();
      this.#log.info({ registryPid: pid, port: this.port }, 'managed registry adopted');
      return;
    }
    await this.#start();
  }

  async #start(): Promise<void> {
    await this.#collectGarbage();
    const child: ChildProcess = spawnDetachedServer(this.#program, ['serve', this.layout.config], this.layout.log, {
      cwd: this.layout.base,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    });
    const failed = new Promise<never>((_, reject) => {
      child.once('error', (error) =>
        reject(
          new UnavailableError(
            `the image registry could not be started (${this.#program}: ${error.message}); install Debian's docker-registry package`,
            { code: 'registry_start_failed', cause: error },
          ),
        ),
      );
      child.once('exit', (code, signal) =>
        reject(
          new UnavailableError(
            `the image registry exited at start (${signal ?? `code ${code}`}): ${logTail(this.layout.log, '(no registry log)')}`,
            {
              code: 'registry_start_failed',
            },
          ),
        ),
      );
    });
    failed.catch(() => undefined);
    await Promise.race([
      waitFor(() => this.answers(500), 50, this.#startTimeoutMs).catch(() => {
        child.kill('SIGKILL');
        throw new UnavailableError(
          `the image registry did not answer on ${this.host} within ${this.#startTimeoutMs} ms: ${logTail(this.layout.log, '(no registry log)')}`,
          { code: 'registry_start_failed' },
        );
      }),
      failed,
    ]);
    child.removeAllListeners('exit');
    child.removeAllListeners('error');
    child.unref();
    const pid = child.pid ?? 0;
    this.#child = child;
    this.#pid = pid;
    fs.writeFileSync(this.layout.pidFile, `${pid}\n`, { mode: 0o600 });
    child.once('exit', (code, signal) => this.#died(pid, signal ?? `code ${code}`));
    this.#log.info({ registryPid: pid, port: this.port }, 'managed registry started');
  }

  /**
   * Frees the layers no manifest references any more (the manifests of removed releases and retired
   * apps are deleted through the API): run before the server starts, as the registry's collector
   * must not run beside uploads.
   */
  async #collectGarbage(): Promise<void> {
    if (!fs.existsSync(path.join(this.layout.storage, 'docker'))) return;
    const result = await new Promise<{ ok: boolean; output: string }>((resolve) => {
      execFile(
        this.#program,
        ['garbage-collect', this.layout.config],
        { timeout: 5 * 60_000, maxBuffer: 16 * 1024 * 1024 },
        (error, stdout, stderr) => resolve({ ok: !error, output: `${stdout}${stderr}` }),
      );
    });
    const freed = (result.output.match(/^blob eligible for deletion/gm) ?? []).length;
    if (!result.ok) this.#log.warn({ output: result.output.slice(-1000) }, 'registry garbage collection failed');
    else if (freed > 0) this.#log.info({ blobs: freed }, 'registry garbage collected');
  }

  #died(pid: number, exit: string): void {
    if (this.#closing || this.#pid !== pid) return;
    this.#pid = 0;
    this.#child = undefined;
    this.#failures += 1;
    const delay = restartDelay(250, this.#failures);
    this.#log.error({ registryPid: pid, exit, restartInMs: delay }, 'managed registry exited: restarting it');
    this.#restartTimer = scheduleRestart(delay, () => this.#startOrAdopt(), {
      started: () => {
        this.#failures = 0;
      },
      failed: (error) => {
        this.#log.error({ err: error }, 'managed registry restart failed');
        if (!this.#closing) this.#died(0, 'restart failed');
      },
    }).timer;
    this.#restartTimer.unref();
  }
}

function readPort(layout: ManagedRegistryLayout): number | undefined {
  try {
    const port = (JSON.parse(fs.readFileSync(layout.state, 'utf8')) as { port?: unknown }).port;
    return typeof port === 'number' && Number.isInteger(port) && port > 0 && port < 65536 ? port : undefined;
  } catch {
    return undefined;
  }
}

function readPid(file: string): number | undefined {
  try {
    const pid = Number(fs.readFileSync(file, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** True while `pid` runs and is not a zombie. */
function alive(pid: number): boolean {
  if (!signalReaches(pid)) return false;
  try {
    return !/^\d+ \(.*\) Z /.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** True when `pid` runs the registry program (a reused pid is another program). */
function isRegistryProcess(pid: number): boolean {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('registry');
  } catch {
    return false;
  }
}

function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function waitFor(done: () => boolean | Promise<boolean>, everyMs: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await done()) return;
    if (Date.now() > deadline) throw new Error(`not reached within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
