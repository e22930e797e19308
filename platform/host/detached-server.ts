/**
 * A server the platform supervises (the managed PostgreSQL, the managed registry): started in its
 * own session, so that a Ctrl-C in the platform's terminal does not reach it and it outlives a killed
 * platform for the next start to adopt, with its output appended to a log file of its own.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import fs from 'node:fs';

/** Starts `file` detached, stdin closed, stdout and stderr appended to `logFile` (created 0600). */
export function spawnDetachedServer(
  file: string,
  args: readonly string[],
  logFile: string,
  options: Pick<SpawnOptions, 'cwd' | 'env' | 'uid' | 'gid'>,
): ChildProcess {
  const log = fs.openSync(logFile, 'a', 0o600);
  try {
    return spawn(file, [...args], { ...options, detached: true, stdio: ['ignore', log, log] });
  } finally {
    fs.closeSync(log);
  }
}

/** The last `lines` lines of a server's log, for error messages; `missing` when there is none. */
export function logTail(file: string, missing: string, lines = 5): string {
  try {
    return fs.readFileSync(file, 'utf8').trim().split('\n').slice(-lines).join('\n');
  } catch {
    return missing;
  }
}

/** The wait before restart number `failures` (1-based) of a supervised server: doubling from `baseMs`, at most 10 s. */
export function restartDelay(baseMs: number, failures: number): number {
  return Math.min(10_000, baseMs * 2 ** (failures - 1));
}

/**
 * Runs `start` once `delay` has passed; `started` hears it succeed, `failed` hear it throw. Returns the
 * timer (to clear on close) and, once the timer fired, the attempt (to wait for on close).
 */
export function scheduleRestart(
  delay: number,
  start: () => Promise<void>,
  on: { readonly started: () => void; readonly failed: (error: unknown) => void },
): { readonly timer: NodeJS.Timeout; readonly attempt: () => Promise<void> | undefined } {
  let attempt: Promise<void> | undefined;
  const timer = setTimeout(() => {
    attempt = start().then(
      () => on.started(),
      (error: unknown) => on.failed(error),
    );
  }, delay);
  return { timer, attempt: () => attempt };
}
