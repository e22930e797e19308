/**
 * Resource use of a task's process tree, read from one `/proc` snapshot: its resident memory, and
 * its CPU use over the period since the previous sample.
 */
import { CLOCK_TICKS_PER_SECOND, PAGE_SIZE, processTree, type ProcessInfo } from './process-table.js';

/** Shortest period a CPU sample covers. */
const CPU_SAMPLE_MS = 1000;

/** Resident memory of the tree led by `pid`, in bytes. */
export function treeRssBytes(
  pid: number,
  table: readonly ProcessInfo[],
  byPid: ReadonlyMap<number, ProcessInfo>,
): number {
  let rss = 0;
  for (const member of processTree(pid, table)) rss += (byPid.get(member)?.rssPages ?? 0) * PAGE_SIZE;
  return rss;
}

/** Samples the CPU use of one task's tree. */
export class TreeCpuSampler {
  /** The last CPU reading of the tree (ticks at a time), per leader pid: a restarted task starts anew. */
  #last: { pid: number; ticks: number; atMs: number } | undefined;

  /**
   * CPU use of the tree since the previous sample, at most once a second (a 250 ms tick at 100
   * ticks per second would read in steps of 4 %); undefined when no period ended. A tree that lost
   * a member can read fewer ticks than before: that period reads 0 rather than a negative use.
   */
  sample(
    pid: number,
    table: readonly ProcessInfo[],
    byPid: ReadonlyMap<number, ProcessInfo>,
  ): { percent: number; sampledAt: string } | undefined {
    let ticks = 0;
    for (const member of processTree(pid, table)) ticks += byPid.get(member)?.cpuTicks ?? 0;
    const now = Date.now();
    const last = this.#last;
    if (last !== undefined && last.pid === pid && now - last.atMs < CPU_SAMPLE_MS) return undefined;
    this.#last = { pid, ticks, atMs: now };
    if (last === undefined || last.pid !== pid) return undefined;
    const seconds = (now - last.atMs) / 1000;
    const percent = Math.max(0, ((ticks - last.ticks) / CLOCK_TICKS_PER_SECOND / seconds) * 100);
    return { percent: Math.round(percent * 10) / 10, sampledAt: new Date(now).toISOString() };
  }
}
