/**
 * Exec port: how the exec sessions service reaches into a running allocation. The local driver's
 * adapter (platform/exec) enters the allocation's mount namespace as the app's user, with its
 * environment and working folder (ADR 0168); the service depends only on this interface.
 */
import type { TaskContainer } from '../scheduler/allocation.js';

/** Where a command runs: the live process of an allocation, read from the host when the session starts. */
export interface ExecTarget {
  /** The allocation's task process. */
  readonly pid: number;
  readonly uid: number;
  readonly gid: number;
  readonly groups: readonly number[];
  /** The task's working folder (in its mount namespace). */
  readonly cwd: string;
  /** The task's environment. */
  readonly env: Readonly<Record<string, string>>;
  /** True when the command enters the task's mount namespace and switches to its user (the platform is root). */
  readonly isolated: boolean;
  /** The container the task runs in (ADR 0219): the command runs there through the engine, as its user. */
  readonly container?: { readonly name: string; readonly program: string; readonly node?: string };
}

/** Terminal size in character cells. */
export interface TerminalSize {
  readonly cols: number;
  readonly rows: number;
}

/** A running command on a pseudo-terminal. */
export interface PtyProcess {
  readonly pid: number;
  write(data: string): void;
  resize(size: TerminalSize): void;
  /** Sends SIGHUP to the session (the shell and what it runs), then SIGKILL after a grace period. */
  kill(): void;
  onData(listener: (data: string) => void): void;
  onExit(listener: (exit: { exitCode: number; signal: number | undefined }) => void): void;
}

/** What a one-shot command printed and how it ended. */
export interface ExecResult {
  readonly exitCode: number;
  readonly signal: string | null;
  readonly stdout: string;
  readonly stderr: string;
  /** True when stdout or stderr passed the output limit and was cut. */
  readonly truncated: boolean;
  readonly timedOut: boolean;
}

/** The adapter. */
export interface ExecPort {
  /**
   * The target of a live task process; undefined when the process is gone. `container` is the task's
   * container and node where its driver reports them (a process on another node is not on this host).
   */
  target(pid: number, container?: TaskContainer): ExecTarget | undefined;
  /** Starts `argv` on a new PTY in `target`. */
  spawnPty(target: ExecTarget, argv: readonly string[], size: TerminalSize): PtyProcess;
  /** Runs `argv` in `target` to completion with `stdin`, capturing output up to `maxOutputBytes` per stream. */
  run(
    target: ExecTarget,
    argv: readonly string[],
    options: { readonly stdin: string; readonly timeoutMs: number; readonly maxOutputBytes: number },
  ): Promise<ExecResult>;
}
