/**
 * The podman command of the platform: every call carries the OCI runtime and the platform's own
 * containers configuration (registries.conf with the docker.io mirror, ADR 0219), so the platform
 * never depends on, nor writes to, the host's `/etc/containers`.
 */
import { execFile, spawn } from 'node:child_process';
import { DomainError } from '../../domain/errors.js';

/** How the platform drives podman. */
export interface PodmanOptions {
  /** The podman program. @default podman */
  readonly program?: string;
  /** OCI runtime (`--runtime`): runc, as crun refuses hybrid cgroup layouts. @default runc */
  readonly runtime?: string;
  /** `CONTAINERS_REGISTRIES_CONF`: the platform's registries.conf; undefined: the host's. */
  readonly registriesConf?: string;
}

/** What a finished podman command printed. */
export interface PodmanResult {
  readonly ok: boolean;
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** A podman command failed; `output` holds the tail of what it printed. */
export class PodmanError extends DomainError {
  constructor(what: string, result: PodmanResult) {
    const output = `${result.stdout}${result.stderr}`.trim().slice(-4000);
    super('unavailable', 'container_engine_failed', `${what} failed (exit ${String(result.code)}): ${output}`, {
      details: { exitCode: result.code },
    });
  }
}

/** Runs podman commands with the platform's runtime and configuration. */
export class Podman {
  readonly program: string;
  readonly runtime: string;
  readonly #env: NodeJS.ProcessEnv;

  constructor(options: PodmanOptions = {}) {
    this.program = options.program ?? 'podman';
    this.runtime = options.runtime ?? 'runc';
    this.#env = {
      ...process.env,
      ...(options.registriesConf !== undefined ? { CONTAINERS_REGISTRIES_CONF: options.registriesConf } : {}),
    };
  }

  /** The environment every podman process of the platform runs with. */
  get env(): NodeJS.ProcessEnv {
    return this.#env;
  }

  /** The global arguments that precede every subcommand. */
  globalArgs(): string[] {
    return ['--runtime', this.runtime];
  }

  /**
   * Runs `podman <args>`; resolves with its output whatever its exit code. `env` replaces the
   * environment (it must carry the platform's own, {@link env}).
   */
  run(
    args: readonly string[],
    options: { timeoutMs?: number; input?: string; env?: NodeJS.ProcessEnv } = {},
  ): Promise<PodmanResult> {
    return new Promise((resolve) => {
      const child = execFile(
        this.program,
        [...this.globalArgs(), ...args],
        { env: options.env ?? this.#env, timeout: options.timeoutMs ?? 60_000, maxBuffer: 64 * 1024 * 1024 },
        (error, stdout, stderr) => {
          const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
          resolve({ ok: !error, code, stdout, stderr: error && !stderr ? error.message : stderr });
        },
      );
      if (options.input !== undefined) child.stdin?.end(options.input);
      else child.stdin?.end();
    });
  }

  /** Runs `podman <args>` and returns its stdout; throws {@link PodmanError} naming `what` on failure. */
  async check(what: string, args: readonly string[], options: { timeoutMs?: number } = {}): Promise<string> {
    const result = await this.run(args, options);
    if (!result.ok) throw new PodmanError(what, result);
    return result.stdout;
  }

  /**
   * Runs a long podman command (a build, a push), handing each output line to `onLine` as it comes;
   * resolves with the result once it ends.
   */
  stream(args: readonly string[], onLine: (line: string) => void, timeoutMs: number): Promise<PodmanResult> {
    return new Promise((resolve) => {
      const child = spawn(this.program, [...this.globalArgs(), ...args], {
        env: this.#env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      const keep = (text: string, chunk: string) => (text + chunk).slice(-64 * 1024);
      const lines = (chunk: string) => {
        for (const line of chunk.split('\n')) if (line.trim() !== '') onLine(line);
      };
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        stdout = keep(stdout, chunk);
        lines(chunk);
      });
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        stderr = keep(stderr, chunk);
        lines(chunk);
      });
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      child.on('error', (error) => {
        clearTimeout(timer);
        resolve({ ok: false, code: null, stdout, stderr: `${stderr}${error.message}` });
      });
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ ok: code === 0, code, stdout, stderr });
      });
    });
  }
}
