/**
 * The `postmaster.pid` file a running PostgreSQL server keeps in its data folder, and whether the
 * process it names still runs: how a platform that was killed finds the server it started.
 */
import fs from 'node:fs';
import path from 'node:path';
import { signalReaches } from '../host/signal-reaches.js';

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
  if (!signalReaches(pid)) return false;
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

/**
 * Stops the server a platform left running in cluster folder `clusterDir` (a killed platform, or one
 * released for an API restart), with a fast shutdown (SIGINT), then an immediate one (SIGQUIT) if it
 * has not exited within `timeoutMs`. Returns the postmaster's pid, or undefined when none ran.
 */
export async function stopLeftPostgres(clusterDir: string, timeoutMs = 60_000): Promise<number | undefined> {
  const found = readPostmasterPid(clusterDir);
  if (!found || !processAlive(found.pid) || !isPostgresProcess(found.pid)) return undefined;
  const exited = async (limitMs: number): Promise<boolean> => {
    const deadline = Date.now() + limitMs;
    while (processAlive(found.pid)) {
      if (Date.now() > deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return true;
  };
  process.kill(found.pid, 'SIGINT');
  if (!(await exited(timeoutMs))) {
    process.kill(found.pid, 'SIGQUIT');
    await exited(10_000);
  }
  return found.pid;
}
