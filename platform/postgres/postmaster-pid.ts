/**
 * The `postmaster.pid` file a running PostgreSQL server keeps in its data folder, and whether the
 * process it names still runs: how a platform that was killed finds the server it started.
 */
import fs from 'node:fs';
import path from 'node:path';

/** What `postmaster.pid` says (lines 1, 4, 5, 6 and 8 of the file). */
export interface PostmasterPid {
  readonly pid: number;
  readonly port: number;
  readonly socketDir: string;
  readonly listenAddresses: string;
  /** `ready` once the server accepts connections (also `starting`, `stopping`, `standby`). */
  readonly status: string;
}

/** Reads `<dataDir>/postmaster.pid`; undefined when absent or unreadable. */
export function readPostmasterPid(dataDir: string): PostmasterPid | undefined {
  let text: string;
  try {
    text = fs.readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8');
  } catch {
    return undefined;
  }
  const lines = text.split('\n');
  const pid = Number(lines[0]);
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  return {
    pid,
    port: Number(lines[3]),
    socketDir: lines[4]?.trim() ?? '',
    listenAddresses: lines[5]?.trim() ?? '',
    status: lines[7]?.trim() ?? '',
  };
}

/**
 * True while process `pid` runs. A zombie (dead, not yet reaped: an adopted server's parent may be
 * an init that does not reap) counts as gone.
 */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The state follows the parenthesized command name, which may itself hold parentheses.
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true;
  }
}

/** True when `pid` runs a `postgres` program (guards against a recycled pid). */
export function isPostgresProcess(pid: number): boolean {
  try {
    const argv0 = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] ?? '';
    return path.basename(argv0) === 'postgres' || argv0.startsWith('postgres:');
  } catch {
    return false;
  }
}
