/**
 * Exec on the swarm driver: a command in a task's own container, through the Engine API's exec
 * (`POST /containers/<id>/exec`) of the node that runs it, as the container's user, in its namespaces.
 * The task's container and node come from its allocation (else, for a process on this host, from its
 * cgroup). The manager's engine runs the containers of its own node; another node's engine is the
 * address its `svc.engine` label gives (`docker node update --label-add svc.engine=tcp://<host>:2376`,
 * TLS as for the manager). A process on this host is signalled directly; on another node the command
 * is started through `/bin/sh`, which prints its process id first, and is signalled by a second exec.
 * Terminal sessions get a TTY and follow resizes; one-shot commands get their stdout and stderr apart.
 */
import fs from 'node:fs';
import { PassThrough } from 'node:stream';
import type Docker from 'dockerode';
import type { ExecPort, ExecResult, ExecTarget, PtyProcess, TerminalSize } from '../../domain/exec/exec-port.js';
import type { TaskContainer } from '../../domain/scheduler/index.js';
import { NodeEngines } from './node-engines.js';

/** How long a session's processes get after SIGHUP before SIGKILL. */
const KILL_GRACE_MS = 2000;
/** `program` of a target whose container runs on the Docker engine. */
export const ENGINE_PROGRAM = 'docker-engine';
/** Starts a command on another node so that its process id comes first (it is signalled by it). */
const PID_FIRST = ['/bin/sh', '-c', 'echo "$$"; exec "$@"', 'svc-exec'];

/** The Docker container the process `pid` runs in, read from its cgroup; undefined for any other process. */
export function dockerContainerOf(pid: number): string | undefined {
  try {
    const cgroup = fs.readFileSync(`/proc/${pid}/cgroup`, 'utf8');
    return /(?:\/docker\/|docker-)([0-9a-f]{64})(?:\.scope)?$/m.exec(cgroup)?.[1];
  } catch {
    return undefined;
  }
}

/** The engine that runs a target's container, and how its processes are signalled. */
interface Reach {
  readonly engine: Docker;
  /** Signals a process of the command (its process group where it leads one). */
  signal(pid: number, name: 'SIGHUP' | 'SIGKILL'): void;
  /** Remote: the command is wrapped so that its process id comes first. */
  readonly remote: boolean;
}

type Hijacked = NodeJS.ReadWriteStream & { destroy(): void; end(): void };

/** The exec adapter of the swarm driver. */
export class EngineExec implements ExecPort {
  readonly #nodes: NodeEngines;
  readonly #managerLocal: boolean;

  /** `managerLocal`: the manager's engine runs on this host (a unix socket), so its processes are ours to signal. */
  constructor(engine: Docker | NodeEngines, options: { readonly managerLocal?: boolean } = {}) {
    this.#nodes = engine instanceof NodeEngines ? engine : new NodeEngines(engine);
    this.#managerLocal = options.managerLocal ?? true;
  }

  target(pid: number, task?: TaskContainer): ExecTarget | undefined {
    const container = task === undefined ? dockerContainerOf(pid) : task.id;
    if (container === undefined) return undefined;
    return {
      pid,
      uid: -1,
      gid: -1,
      groups: [],
      cwd: '/',
      env: {},
      isolated: true,
      container: { name: container, program: ENGINE_PROGRAM, ...(task ? { node: task.node } : {}) },
    };
  }

  /** The engine of the target's node, and how its processes are signalled. */
  async #reach(target: ExecTarget): Promise<Reach> {
    const node = target.container?.node;
    const engine = await this.#nodes.engineOf(node);
    if (this.#managerLocal && (await this.#nodes.onManager(node))) return { engine, signal, remote: false };
    const container = engine.getContainer(target.container!.name);
    return {
      engine,
      remote: true,
      signal: (pid, name) => {
        if (pid <= 0) return;
        const kill = `kill -${name.slice(3)} -- -${pid} 2>/dev/null || kill -${name.slice(3)} ${pid}`;
        void container
          .exec({ Cmd: ['/bin/sh', '-c', kill], AttachStdout: false, AttachStderr: false })
          .then((exec) => exec.start({ Detach: true }))
          .catch(() => undefined);
      },
    };
  }

  spawnPty(target: ExecTarget, argv: readonly string[], size: TerminalSize): PtyProcess {
    const dataListeners: ((data: string) => void)[] = [];
    const exitListeners: ((exit: { exitCode: number; signal: number | undefined }) => void)[] = [];
    const pending: string[] = [];
    let stream: Hijacked | undefined;
    let exec: Docker.Exec | undefined;
    let reach: Reach | undefined;
    let pid = 0;
    let ended = false;
    let order: Promise<unknown> = Promise.resolve();
    const finish = (exitCode: number) => {
      if (ended) return;
      ended = true;
      for (const listener of exitListeners) listener({ exitCode, signal: undefined });
    };
    const emit = (data: string) => {
      for (const listener of dataListeners) listener(data);
    };
    void (async () => {
      reach = await this.#reach(target);
      const container = reach.engine.getContainer(target.container!.name);
      exec = await container.exec({
        Cmd: reach.remote ? [...PID_FIRST, ...argv] : [...argv],
        AttachStdin: true,
        AttachStdout: true,
        AttachStderr: true,
        Tty: true,
        Env: ['TERM=xterm-256color'],
      });
      stream = await exec.start({ hijack: true, stdin: true, Tty: true });
      await exec.resize({ h: size.rows, w: size.cols }).catch(() => undefined);
      if (!reach.remote) pid = ((await exec.inspect()) as { Pid?: number }).Pid ?? 0;
      stream.setEncoding('utf8');
      // On another node the first line is the command's process id, not output.
      let head = reach.remote ? '' : undefined;
      stream.on('data', (data: string) => {
        if (head === undefined) return emit(data);
        head += data;
        const newline = head.indexOf('\n');
        if (newline < 0) return;
        pid = Number.parseInt(head.slice(0, newline), 10) || 0;
        const rest = head.slice(newline + 1);
        head = undefined;
        if (rest !== '') emit(rest);
      });
      stream.on('end', () => {
        void exec!
          .inspect()
          .then((info: { ExitCode?: number | null }) => finish(info.ExitCode ?? 137))
          .catch(() => finish(137));
      });
      for (const data of pending.splice(0)) stream.write(data);
    })().catch((error: unknown) => {
      emit(`${error instanceof Error ? error.message : String(error)}\r\n`);
      finish(126);
    });
    return {
      get pid() {
        return pid;
      },
      // Keystrokes and resizes reach the engine in the order they came: input typed after a resize
      // (a `stty size`) sees the new size.
      write: (data) => {
        if (ended) return;
        if (!stream) pending.push(data);
        else order = order.then(() => void stream!.write(data));
      },
      resize: ({ cols, rows }) => {
        if (ended || !exec) return;
        order = order.then(() => exec!.resize({ h: rows, w: cols }).catch(() => undefined));
      },
      kill: () => {
        if (ended || !reach) return;
        const signalled = reach;
        signalled.signal(pid, 'SIGHUP');
        const timer = setTimeout(() => {
          if (!ended) signalled.signal(pid, 'SIGKILL');
        }, KILL_GRACE_MS);
        timer.unref();
      },
      onData: (listener) => {
        dataListeners.push(listener);
      },
      onExit: (listener) => {
        exitListeners.push(listener);
      },
    };
  }

  async run(
    target: ExecTarget,
    argv: readonly string[],
    options: { readonly stdin: string; readonly timeoutMs: number; readonly maxOutputBytes: number },
  ): Promise<ExecResult> {
    const reach = await this.#reach(target);
    const container = reach.engine.getContainer(target.container!.name);
    const exec = await container.exec({
      Cmd: reach.remote ? [...PID_FIRST, ...argv] : [...argv],
      AttachStdin: true,
      AttachStdout: true,
      AttachStderr: true,
      Tty: false,
    });
    const stream = (await exec.start({ hijack: true, stdin: true })) as Hijacked;
    const out = { stdout: [] as Buffer[], stderr: [] as Buffer[] };
    const sizes = { stdout: 0, stderr: 0 };
    let truncated = false;
    let pid = 0;
    // On another node the first line of stdout is the command's process id, not output.
    let head: Buffer | undefined = reach.remote ? Buffer.alloc(0) : undefined;
    const keep = (name: 'stdout' | 'stderr', chunk: Buffer) => {
      const room = options.maxOutputBytes - sizes[name];
      if (chunk.length > room) truncated = true;
      if (room <= 0) return;
      const kept = chunk.subarray(0, room);
      out[name].push(kept);
      sizes[name] += kept.length;
    };
    const stdout = new PassThrough();
    stdout.on('data', (chunk: Buffer) => {
      if (head === undefined) return keep('stdout', chunk);
      head = Buffer.concat([head, chunk]);
      const newline = head.indexOf(0x0a);
      if (newline < 0) return;
      pid = Number.parseInt(head.subarray(0, newline).toString('utf8'), 10) || 0;
      const rest = head.subarray(newline + 1);
      head = undefined;
      if (rest.length > 0) keep('stdout', rest);
    });
    const stderr = new PassThrough();
    stderr.on('data', (chunk: Buffer) => keep('stderr', chunk));
    reach.engine.modem.demuxStream(stream, stdout, stderr);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      if (reach.remote) reach.signal(pid, 'SIGKILL');
      else void exec.inspect().then((info: { Pid?: number }) => reach.signal(info.Pid ?? 0, 'SIGKILL'));
    }, options.timeoutMs);
    stream.write(options.stdin);
    // Half-close: the command reads its input to the end while its output still comes back.
    stream.end();
    await new Promise<void>((resolve) => {
      stream.on('end', resolve);
      stream.on('close', resolve);
      stream.on('error', () => resolve());
    });
    clearTimeout(timer);
    const info = (await exec.inspect()) as { ExitCode?: number | null };
    return {
      exitCode: info.ExitCode ?? 128 + 9,
      signal: timedOut ? 'SIGKILL' : null,
      stdout: Buffer.concat(out.stdout).toString('utf8'),
      stderr: Buffer.concat(out.stderr).toString('utf8'),
      truncated,
      timedOut,
    };
  }
}

function signal(pid: number, name: NodeJS.Signals): void {
  if (pid <= 0) return;
  try {
    process.kill(pid, name);
  } catch {
    // Already gone.
  }
}
