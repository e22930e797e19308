/**
 * Process table: what the local driver reads from Linux `/proc` to supervise host processes it
 * may not be the parent of (liveness guarded by start time, process-group membership, RSS).
 */
import fs from 'node:fs';
import { signalReaches } from '../../host/signal-reaches.js';

/** One process as seen in `/proc/<pid>/stat`. */
export interface ProcessInfo {
  readonly pid: number;
  readonly ppid: number;
  readonly pgrp: number;
  /** Single-letter state; `Z` is a zombie (exited, not yet reaped). */
  readonly state: string;
  /** Start time in clock ticks since boot: with the pid, identifies a process across pid reuse. */
  readonly startTime: string;
  /** Resident set size in pages (field 24 of stat); multiply by {@link PAGE_SIZE}. */
  readonly rssPages: number;
  /** CPU time used so far, user plus system (fields 14 and 15), in clock ticks ({@link CLOCK_TICKS_PER_SECOND}). */
  readonly cpuTicks: number;
}

/**
 * Clock ticks per second of `/proc/<pid>/stat` times (`USER_HZ`): fixed at 100 by the Linux ABI on
 * every architecture this platform runs on, whatever the kernel's internal HZ.
 */
export const CLOCK_TICKS_PER_SECOND = 100;

/** Parses one `/proc/<pid>/stat` line; the command name may contain spaces and parentheses. */
export function parseStat(line: string): ProcessInfo | undefined {
  const close = line.lastIndexOf(')');
  if (close < 0) return undefined;
  const pid = Number.parseInt(line.slice(0, line.indexOf(' ')), 10);
  // Fields after the command: state(3) ppid(4) pgrp(5) ... starttime(22), numbered from 1.
  const rest = line.slice(close + 2).split(' ');
  const state = rest[0];
  const ppid = Number(rest[1]);
  const pgrp = Number(rest[2]);
  const startTime = rest[19];
  const rssPages = Number(rest[21] ?? 0);
  const cpuTicks = Number(rest[11] ?? 0) + Number(rest[12] ?? 0);
  if (!state || startTime === undefined || !Number.isFinite(pid)) return undefined;
  return {
    pid,
    ppid,
    pgrp,
    state,
    startTime,
    rssPages: Number.isFinite(rssPages) ? rssPages : 0,
    cpuTicks: Number.isFinite(cpuTicks) ? cpuTicks : 0,
  };
}

/**
 * The kernel's page size, learned once by comparing this process's VmRSS (kB) with its stat rss
 * (pages); 4096 when /proc cannot tell.
 */
export const PAGE_SIZE: number = (() => {
  try {
    const kb = Number(/^VmRSS:\s+(\d+)\s+kB/m.exec(fs.readFileSync('/proc/self/status', 'utf8'))?.[1]);
    const pages = parseStat(fs.readFileSync('/proc/self/stat', 'utf8'))?.rssPages ?? 0;
    if (!(kb > 0) || !(pages > 0)) return 4096;
    const estimate = (kb * 1024) / pages;
    return [4096, 16384, 65536].reduce(
      (best, size) => (Math.abs(size - estimate) < Math.abs(best - estimate) ? size : best),
      4096,
    );
  } catch {
    return 4096;
  }
})();

interface ProcessIndex {
  readonly live: Set<number>;
  readonly byPgrp: Map<number, ProcessInfo[]>;
  readonly children: Map<number, ProcessInfo[]>;
}

// One index per table snapshot: a tick asks for hundreds of trees from the same table.
const indexes = new WeakMap<readonly ProcessInfo[], ProcessIndex>();

function indexOf(table: readonly ProcessInfo[]): ProcessIndex {
  let index = indexes.get(table);
  if (!index) {
    index = { live: new Set(), byPgrp: new Map(), children: new Map() };
    for (const p of table) {
      if (p.state === 'Z') continue;
      index.live.add(p.pid);
      const group = index.byPgrp.get(p.pgrp);
      if (group) group.push(p);
      else index.byPgrp.set(p.pgrp, [p]);
      const siblings = index.children.get(p.ppid);
      if (siblings) siblings.push(p);
      else index.children.set(p.ppid, [p]);
    }
    indexes.set(table, index);
  }
  return index;
}

/** Reads one process, or undefined when it does not exist. */
export function readProcess(pid: number): ProcessInfo | undefined {
  try {
    return parseStat(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return undefined;
  }
}

/** True when `pid` is a live (non-zombie) process that started at `startTime`. */
export function isProcessAlive(pid: number, startTime: string | undefined): boolean {
  if (!signalReaches(pid)) return false;
  const info = readProcess(pid);
  if (!info || info.state === 'Z') return false;
  return startTime === undefined || info.startTime === startTime;
}

/**
 * A live process's environment (`/proc/<pid>/environ`, as it was at exec), or undefined when the
 * process is gone or unreadable (another user's).
 */
export function readEnvironment(pid: number): Map<string, string> | undefined {
  let environ: string;
  try {
    environ = fs.readFileSync(`/proc/${pid}/environ`, 'utf8');
  } catch {
    return undefined;
  }
  const variables = new Map<string, string>();
  for (const entry of environ.split('\0')) {
    const equals = entry.indexOf('=');
    if (equals > 0) variables.set(entry.slice(0, equals), entry.slice(equals + 1));
  }
  return variables;
}

/** Every process currently in `/proc`. */
export function listProcesses(): ProcessInfo[] {
  const out: ProcessInfo[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    const first = entry.charCodeAt(0);
    if (first < 48 || first > 57) continue;
    const info = readProcess(Number(entry));
    if (info) out.push(info);
  }
  return out;
}

/**
 * {@link listProcesses} in slices of 64 processes, each slice in its own turn of the event loop: a
 * thousand processes take tens of milliseconds to read, which the periodic monitor should not hold
 * the event loop for (a request or a spec change waits behind it). Processes that appear or end
 * while it reads are seen or not, as with any read of /proc.
 */
export async function listProcessesInSlices(slice = 64): Promise<ProcessInfo[]> {
  const entries = (await fs.promises.readdir('/proc')).filter((entry) => {
    const first = entry.charCodeAt(0);
    return first >= 48 && first <= 57;
  });
  const out: ProcessInfo[] = [];
  for (let start = 0; start < entries.length; start += slice) {
    if (start > 0) await new Promise((resolve) => setImmediate(resolve));
    for (const entry of entries.slice(start, start + slice)) {
      const info = readProcess(Number(entry));
      if (info) out.push(info);
    }
  }
  return out;
}

let shared: ProcessInfo[] | undefined;

/**
 * {@link listProcesses}, read at most once per turn of the event loop: the callers of one turn (a
 * monitor tick, or hundreds of drains begun together) share one read of `/proc` and its index,
 * which on a host running a thousand processes is a thousand file reads (ADR 0190).
 */
export function processSnapshot(): ProcessInfo[] {
  if (shared === undefined) {
    shared = listProcesses();
    setImmediate(() => {
      shared = undefined;
    });
  }
  return shared;
}

/** Live members of a supervised tree: the process group of `root` plus any descendants that left it. */
export function processTree(root: number, table: readonly ProcessInfo[]): number[] {
  const index = indexOf(table);
  const members = new Set<number>();
  const pending: number[] = [];
  const add = (pid: number) => {
    if (!members.has(pid)) {
      members.add(pid);
      pending.push(pid);
    }
  };
  for (const p of index.byPgrp.get(root) ?? []) add(p.pid);
  if (index.live.has(root)) add(root);
  while (pending.length > 0) {
    for (const child of index.children.get(pending.pop()!) ?? []) add(child.pid);
  }
  return [...members];
}

/** Resident set size of a process in bytes (`VmRSS` of `/proc/<pid>/status`); 0 when gone. */
export function readRssBytes(pid: number): number {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    return match?.[1] ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** Sends `signal` once to every process of a tree (the group, then descendants outside it); true when any was signalled. */
export function signalTree(
  root: number,
  signal: NodeJS.Signals,
  table: readonly ProcessInfo[] = processSnapshot(),
): boolean {
  let groupSignalled = false;
  try {
    process.kill(-root, signal);
    groupSignalled = true;
  } catch {
    // The group may be gone while descendants that called setsid remain.
  }
  let any = groupSignalled;
  const byPid = new Map(table.map((p) => [p.pid, p]));
  for (const pid of processTree(root, table)) {
    if (groupSignalled && byPid.get(pid)?.pgrp === root) continue;
    try {
      process.kill(pid, signal);
      any = true;
    } catch {
      // Already gone.
    }
  }
  return any;
}

/** Pause between two polls of a draining tree. */
const TREE_POLL_MS = 20;

/** Resolves true once no live process of the tree rooted at `pid` remains, false after `timeoutMs`. */
export async function waitForTreeExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (let poll = 0; ; poll += 1) {
    // A signal 0 to the group and the leader costs two system calls; the whole /proc table (a
    // thousand files on a busy host, read by every drain at once) is read only when both are gone,
    // to find descendants that left the group, and every tenth poll (zombies answer signal 0).
    if ((!signalReaches(-pid) && !signalReaches(pid)) || poll % 10 === 9) {
      if (processTree(pid, processSnapshot()).length === 0) return true;
    }
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, TREE_POLL_MS));
  }
}
