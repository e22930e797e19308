/**
 * Exec on the swarm driver: a command in a task's own container, through the Engine API's exec
 * (`POST /containers/<id>/exec`), as the container's user, in its namespaces. The container is found
 * from the task's process on this node: its cgroup names the Docker container it belongs to. A task
 * on another node has no process here, so it has no target (the exec service says it stopped).
 * Terminal sessions get a TTY and follow resizes; one-shot commands get their stdout and stderr apart.
 */
import fs from 'node:fs';
import { PassThrough } from 'node:stream';
import type Docker from 'dockerode';
import type { ExecPort, ExecResult, ExecTarget, PtyProcess, TerminalSize } from '../../domain/exec/exec-port.js';

/** How long a session's processes get after SIGHUP before SIGKILL. */
const KILL_GRACE_MS = 2000;
/** `program` of a target whose container runs on the Docker engine. */
export const ENGINE_PROGRAM = 'docker-engine';

/** The Docker container the process `pid` runs in, read from its cgroup; undefined for any other process. */
export function dockerContainerOf(pid: number): string | undefined {
  try {
    const cgroup = fs.readFileSync(`/proc/${pid}/cgroup`, 'utf8');
    return /(?:\/docker\/|docker-)([0-9a-f]{64})(?:\.scope)?$/m.exec(cgroup)?.[1];
  } catch {
    return undefined;
  }
}

type Hijacked = NodeJS.ReadWriteStream & { destroy(): void; end(): void };

/** The exec adapter of the swarm driver. */
export class EngineExec implements ExecPort {
  constructor(private readonly engine: Docker) {}

  target(pid: number): ExecTarget | undefined {
    const container = dockerContainerOf(pid);
    if (container === undefined) return undefined;
    return {
      pid,
      uid: -1,
      gid: -1,
      groups: [],
      cwd: '/',
      env: {},
      isolated: true,
      container: { name: container, program: ENGINE_PROGRAM },
    };
  }

  spawnPty(target: ExecTarget, argv: readonly string[], size: TerminalSize): PtyProcess {
    const dataListeners: ((data: string) => void)[] = [];
    const exitListeners: ((exit: { exitCode: number; signal: number | undefined }) => void)[] = [];
    const pending: string[] = [];
    let stream: Hijacked | undefined;
    let exec: Docker.Exec | undefined;
    let hostPid = 0;
    let ended = false;
    let order: Promise<unknown> = Promise.resolve();
    const finish = (exitCode: number) => {
      if (ended) return;
      ended = true;
      for (const listener of exitListeners) listener({ exitCode, signal: undefined });
    };
    const container = this.engine.getContainer(target.container!.name);
    void (async () => {
      exec = await container.exec({
        Cmd: [...argv],
        AttachStdin: true,
        AttachStdout: true,
        AttachStderr: true,
        Tty: true,
        Env: ['TERM=xterm-256color'],
      });
      stream = await exec.start({ hijack: true, stdin: true, Tty: true });
      await exec.resize({ h: size.rows, w: size.cols }).catch(() => undefined);
      hostPid = ((await exec.inspect()) as { Pid?: number }).Pid ?? 0;
      stream.setEncoding('utf8');
      stream.on('data', (data: string) => {
        for (const listener of dataListeners) listener(data);
      });
      stream.on('end', () => {
        void exec!
          .inspect()
          .then((info: { ExitCode?: number | null }) => finish(info.ExitCode ?? 137))
          .catch(() => finish(137));
      });
      for (const data of pending.splice(0)) stream.write(data);
    })().catch((error: unknown) => {
      for (const listener of dataListeners) listener(`${error instanceof Error ? error.message : String(error)}\r\n`);
      finish(126);
    });
    return {
      get pid() {
        return hostPid;
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
        if (ended) return;
        signal(hostPid, 'SIGHUP');
        const timer = setTimeout(() => {
          if (!ended) signal(hostPid, 'SIGKILL');
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
    const container = this.engine.getContainer(target.container!.name);
    const exec = await container.exec({
      Cmd: [...argv],
      AttachStdin: true,
      AttachStdout: true,
      AttachStderr: true,
      Tty: false,
    });
    const stream = (await exec.start({ hijack: true, stdin: true })) as Hijacked;
    const out = { stdout: [] as Buffer[], stderr: [] as Buffer[] };
    const sizes = { stdout: 0, stderr: 0 };
    let truncated = false;
    const collect = (name: 'stdout' | 'stderr') => {
      const sink = new PassThrough();
      sink.on('data', (chunk: Buffer) => {
        const room = options.maxOutputBytes - sizes[name];
        if (chunk.length > room) truncated = true;
        if (room <= 0) return;
        const kept = chunk.subarray(0, room);
        out[name].push(kept);
        sizes[name] += kept.length;
      });
      return sink;
    };
    this.engine.modem.demuxStream(stream, collect('stdout'), collect('stderr'));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      void exec.inspect().then((info: { Pid?: number }) => signal(info.Pid ?? 0, 'SIGKILL'));
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
