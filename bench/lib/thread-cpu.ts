/**
 * CPU time of every thread of the bench's (the server's) process, by kind (docs/adr/0208), so that
 * bench (a) can give the whole server's CPU per write and not only its serving thread's:
 *
 * - `serving`: the main thread, the one event loop that runs every request and every SQLite call;
 * - `pool`: libuv's thread pool, which runs the group commits' `fdatasync` (docs/adr/0182);
 * - `v8`: the other threads the process had before the store started, V8's platform workers
 *   (parallel scavenges, concurrent marking, background compilation) and node's own;
 * - `later`: threads started after that, i.e. the WAL checkpoint worker (docs/adr/0166).
 *
 * Node 20 gives its threads no names, so the pool is found by keeping it busy: four `pbkdf2` calls run
 * on the four pool threads at once, and the threads whose CPU rose are the pool. Linux only (`/proc`);
 * elsewhere everything is counted as `serving`.
 */
import fs from 'node:fs';
import { pbkdf2 } from 'node:crypto';

/** Microseconds of CPU by thread id. */
type Snapshot = Map<string, number>;

/** CPU of the process's threads, in microseconds, by kind. */
export interface ThreadCpu {
  readonly serving: number;
  readonly pool: number;
  readonly v8: number;
  readonly later: number;
}

function snapshot(): Snapshot {
  const cpu: Snapshot = new Map();
  let tids: string[];
  try {
    tids = fs.readdirSync('/proc/self/task');
  } catch {
    const c = process.cpuUsage();
    return new Map([[String(process.pid), c.user + c.system]]);
  }
  for (const tid of tids) {
    try {
      const fields = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      cpu.set(tid, (Number(fields[11]) + Number(fields[12])) * 10_000); // utime + stime, 10 ms ticks
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return cpu;
}

/** Sorts the process's threads into kinds; call before the store starts. */
export class ThreadCpuMeter {
  readonly #pool = new Set<string>();
  readonly #early = new Set<string>();

  private constructor() {}

  /** Finds the libuv pool's threads and the threads that exist now. */
  static async start(): Promise<ThreadCpuMeter> {
    const meter = new ThreadCpuMeter();
    const before = snapshot();
    // ~50 ms of CPU on each pool thread: enough for the 10 ms ticks of /proc to show which.
    await Promise.all(
      Array.from(
        { length: 4 },
        () =>
          new Promise<void>((resolve, reject) =>
            pbkdf2('bench', 'salt', 250_000, 32, 'sha256', (e) => (e ? reject(e) : resolve())),
          ),
      ),
    );
    const after = snapshot();
    for (const [tid, cpu] of after) {
      if (tid !== String(process.pid) && cpu - (before.get(tid) ?? 0) >= 20_000) meter.#pool.add(tid);
      meter.#early.add(tid);
    }
    return meter;
  }

  /** A reading to pass to `since`. */
  read(): Snapshot {
    return snapshot();
  }

  /** CPU by kind since `earlier` (a `read()`). */
  since(earlier: Snapshot): ThreadCpu {
    const now = snapshot();
    let serving = 0;
    let pool = 0;
    let v8 = 0;
    let later = 0;
    for (const [tid, cpu] of now) {
      const used = cpu - (earlier.get(tid) ?? 0);
      if (tid === String(process.pid)) serving += used;
      else if (this.#pool.has(tid)) pool += used;
      else if (this.#early.has(tid)) v8 += used;
      else later += used;
    }
    return { serving, pool, v8, later };
  }
}
