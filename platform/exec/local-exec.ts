/**
 * Exec on the local driver: a command in a running task's own world. The target is read from the
 * live process (`/proc/<pid>`: its real uid, gid and groups, environment and working folder), so a
 * re-adopted task and a task started by another release of the platform are entered the same way.
 *
 * As root the command runs as `nsenter --target <pid> --mount --wd -- setpriv --reuid U --regid G
 * --groups|--clear-groups --no-new-privs -- <argv>`: the task's mount namespace (its private /tmp
 * and volumes), its working folder and its user, never root (ADR 0047, 0168). Not root, tasks run as
 * the platform's own user and so does the command, in the task's environment and working folder.
 * PTYs come from node-pty; one-shot commands from child_process with pipes.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import * as pty from 'node-pty';
import type { ExecPort, ExecResult, ExecTarget, PtyProcess, TerminalSize } from '../../domain/exec/exec-port.js';

const NSENTER = '/usr/bin/nsenter';
const SETPRIV = '/usr/bin/setpriv';
/** How long a session's processes get after SIGHUP before SIGKILL. */
const KILL_GRACE_MS = 2000;

function ids(status: string, name: string): number[] {
  return (new RegExp(`^${name}:[ \\t]*(.*)$`, 'm').exec(status)?.[1] ?? '').split(/\s+/).filter(Boolean).map(Number);
}

/**
 * The container a task's leader runs, from its command line: an attached `podman … run --name
 * svc-<allocation> … --user U:G` (ADR 0219), possibly under the shell that records a batch task's
 * exit; undefined for a host process.
 */
export function containerOfLeader(
  argv: readonly string[],
): { name: string; program: string; uid: number; gid: number } | undefined {
  const program = argv.find((arg) => /(^|\/)podman$/.test(arg));
  const at = program === undefined ? -1 : argv.indexOf(program);
  if (program === undefined || !argv.slice(at).includes('run')) return undefined;
  const name = argv[argv.indexOf('--name', at) + 1];
  if (argv.indexOf('--name', at) < 0 || name === undefined || !name.startsWith('svc-')) return undefined;
  const user = /^(\d+):(\d+)$/.exec(argv[argv.indexOf('--user', at) + 1] ?? '');
  return { name, program, uid: user ? Number(user[1]) : 0, gid: user ? Number(user[2]) : 0 };
}

/** Reads the target of `pid` from /proc; undefined when the process is gone. */
export function readExecTarget(pid: number, isolated = process.getuid?.() === 0): ExecTarget | undefined {
  try {
    const container = containerOfLeader(fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0'));
    // A container's environment, folder and user are its own: the engine applies them.
    if (container)
      return {
        pid,
        uid: container.uid,
        gid: container.gid,
        groups: [],
        cwd: '/',
        env: {},
        isolated,
        container: { name: container.name, program: container.program },
      };
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const environ = fs.readFileSync(`/proc/${pid}/environ`, 'utf8');
    const cwd = fs.readlinkSync(`/proc/${pid}/cwd`);
    const env: Record<string, string> = {};
    for (const entry of environ.split('\0')) {
      const at = entry.indexOf('=');
      if (at > 0) env[entry.slice(0, at)] = entry.slice(at + 1);
    }
    return {
      pid,
      uid: ids(status, 'Uid')[0] ?? -1,
      gid: ids(status, 'Gid')[0] ?? -1,
      groups: ids(status, 'Groups'),
      cwd,
      env,
      isolated,
    };
  } catch {
    return undefined;
  }
}

/** The program and arguments that run `argv` in `target`, and the folder to start them in. */
export function execArgv(
  target: ExecTarget,
  argv: readonly string[],
  tty = false,
): { file: string; args: string[]; cwd: string } {
  if (argv.length === 0) throw new Error('execArgv: empty command');
  if (target.container)
    return {
      file: target.container.program,
      args: [
        'exec',
        '--interactive',
        ...(tty ? ['--tty'] : []),
        '--user',
        `${target.uid}:${target.gid}`,
        target.container.name,
        ...argv,
      ],
      cwd: '/',
    };
  if (!target.isolated) return { file: argv[0]!, args: argv.slice(1), cwd: target.cwd };
  const groups = target.groups.length > 0 ? ['--groups', target.groups.join(',')] : ['--clear-groups'];
  return {
    file: NSENTER,
    args: [
      '--target',
      String(target.pid),
      '--mount',
      '--wd',
      '--',
      SETPRIV,
      '--reuid',
      String(target.uid),
      '--regid',
      String(target.gid),
      ...groups,
      '--no-new-privs',
      '--',
      ...argv,
    ],
    // nsenter changes to the task's folder inside its namespace; the host folder may not exist there.
    cwd: '/',
  };
}

/**
 * Opens the terminal's own end (its `/dev/pts/N`) in the platform, kept open until the exit is reported.
 *
 * When the last holder of that end closes, Linux may answer the next read of the platform's end with
 * EIO while output written just before the exit is still in flight, and node-pty then drops it (its
 * issue #72): a command that prints and exits at once lost its last output, 98 sessions of 100 when
 * twenty ran at once. While the platform holds the end, no read fails; node-pty reads what arrives and
 * reports the exit once its stream closes, at most 200 ms after the process ended (its own bound).
 */
function holdTerminal(child: pty.IPty): number | undefined {
  const name = (child as pty.IPty & { readonly ptsName?: string }).ptsName;
  if (name === undefined) return undefined;
  try {
    return fs.openSync(name, fs.constants.O_RDWR | fs.constants.O_NOCTTY);
  } catch {
    // The process may already be gone with its terminal; its output is then as node-pty reads it.
    return undefined;
  }
}

function ptyProcess(child: pty.IPty): PtyProcess {
  let exited = false;
  let held = holdTerminal(child);
  child.onExit(() => {
    exited = true;
    if (held !== undefined) fs.closeSync(held);
    held = undefined;
  });
  return {
    pid: child.pid,
    write: (data) => {
      if (!exited) child.write(data);
    },
    resize: ({ cols, rows }) => {
      if (!exited) child.resize(cols, rows);
    },
    kill: () => {
      if (exited) return;
      child.kill('SIGHUP');
      const timer = setTimeout(() => {
        if (!exited) child.kill('SIGKILL');
      }, KILL_GRACE_MS);
      timer.unref();
    },
    onData: (listener) => {
      child.onData(listener);
    },
    onExit: (listener) => {
      child.onExit(({ exitCode, signal }) =>
        listener({ exitCode, signal: signal === undefined || signal === 0 ? undefined : signal }),
      );
    },
  };
}

/** The local driver's exec adapter. */
export class LocalExec implements ExecPort {
  target(pid: number): ExecTarget | undefined {
    return readExecTarget(pid);
  }

  spawnPty(target: ExecTarget, argv: readonly string[], size: TerminalSize): PtyProcess {
    const { file, args, cwd } = execArgv(target, argv, true);
    return ptyProcess(
      pty.spawn(file, args, {
        name: 'xterm-256color',
        cols: size.cols,
        rows: size.rows,
        cwd,
        env: {
          ...(target.container ? { PATH: process.env.PATH ?? '/usr/bin:/bin' } : target.env),
          TERM: 'xterm-256color',
        },
      }),
    );
  }

  run(
    target: ExecTarget,
    argv: readonly string[],
    options: { readonly stdin: string; readonly timeoutMs: number; readonly maxOutputBytes: number },
  ): Promise<ExecResult> {
    const { file, args, cwd } = execArgv(target, argv);
    return new Promise((resolve) => {
      const env = target.container ? { PATH: process.env.PATH ?? '/usr/bin:/bin' } : { ...target.env };
      const child = spawn(file, args, { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
      const out = { stdout: [] as Buffer[], stderr: [] as Buffer[] };
      const sizes = { stdout: 0, stderr: 0 };
      let truncated = false;
      let timedOut = false;
      const collect = (stream: 'stdout' | 'stderr') => (chunk: Buffer) => {
        const room = options.maxOutputBytes - sizes[stream];
        if (room <= 0) {
          truncated = true;
          return;
        }
        if (chunk.length > room) truncated = true;
        const kept = chunk.subarray(0, room);
        out[stream].push(kept);
        sizes[stream] += kept.length;
      };
      child.stdout.on('data', collect('stdout'));
      child.stderr.on('data', collect('stderr'));
      // A command that exits without reading its input closes the pipe: that is not an error.
      child.stdin.on('error', () => undefined);
      child.stdin.end(options.stdin);
      const timer = setTimeout(() => {
        timedOut = true;
        child.kill('SIGKILL');
      }, options.timeoutMs);
      let spawnError: Error | undefined;
      child.on('error', (error) => {
        spawnError = error;
      });
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        const stderr = Buffer.concat(out.stderr).toString('utf8');
        resolve({
          exitCode: code ?? (spawnError ? 127 : 128 + 9),
          signal,
          stdout: Buffer.concat(out.stdout).toString('utf8'),
          stderr: spawnError ? `${stderr}${spawnError.message}\n` : stderr,
          truncated,
          timedOut,
        });
      });
    });
  }
}
