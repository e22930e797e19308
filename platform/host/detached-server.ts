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
