/**
 * Benchmark (a) of `bench/knowledge.ts`: durable write throughput through the real server (group
 * commit, docs/adr/0182), each figure beside the same run's serial one, and retrieve latency while
 * writes run beside idle retrieve latency. Request bodies are serialised before the clock starts.
 * The clients run in child processes (`write-clients.ts`, undici pools; docs/adr/0203), so this
 * process's main thread is the server's alone: its CPU per write and the clients' are printed apart.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import os from 'node:os';
import { percentile, positiveIntArg } from './bench-args.js';
import { threadCpuMicros } from './write-floors.js';
import type { ClientAnswer, ClientCommand } from './write-clients.js';
import { startStallRecorder } from './write-stalls.js';
import { ThreadCpuMeter, type ThreadCpu } from './thread-cpu.js';

/** One write request body. */
export interface WriteBody {
  readonly content: string;
  readonly source_id: string;
  readonly vector?: number[];
}

/** A child process running HTTP clients; one command at a time. */
class Clients {
  private readonly child: ChildProcess;
  private pending: { resolve: (a: ClientAnswer) => void; reject: (e: Error) => void } | undefined;

  constructor() {
    // Only tsx's loader: a --cpu-prof of the bench profiles the server, not its clients.
    const execArgv = ['--import', 'tsx'];
    this.child = fork(new URL('./write-clients.ts', import.meta.url), [], { execArgv, stdio: 'inherit' });
    this.child.on('message', (answer: ClientAnswer) => {
      const pending = this.pending;
      this.pending = undefined;
      if (answer.kind === 'failed') pending?.reject(new Error(answer.message));
      else pending?.resolve(answer);
    });
    // A client process that dies fails the command it was running instead of hanging the bench.
    this.child.on('exit', (code, signal) => {
      const pending = this.pending;
      this.pending = undefined;
      pending?.reject(new Error(`bench client process exited (code ${code}, signal ${signal})`));
    });
  }

  run(command: ClientCommand): Promise<ClientAnswer> {
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject };
      this.child.send(command);
    });
  }

  send(command: ClientCommand): void {
    this.child.send(command);
  }

  close(): void {
    this.child.disconnect();
  }
}

/** CPU per write of each measured run, by its label: the server's threads, and the clients' process. */
const cpuPerWrite = new Map<string, { server: ThreadCpu; clients: number; perGroup: number | undefined }>();

/** The issue's goal of each measured run (writes or nodes per second), where it has one. */
const GOALS: Record<string, number> = {
  '8 clients, vector + text': 3000,
  'batch, text': 20_000,
  'batch, vector + text': 5000,
};

/** The server's CPU per write on all its threads. */
function total(cpu: ThreadCpu): number {
  return cpu.serving + cpu.pool + cpu.v8 + cpu.later;
}

/** Server threads read before and after each run (docs/adr/0208); set by `writeThroughput`. */
let meter: ThreadCpuMeter | undefined;

/** Durations (ms) of the retrieve service's calls since the last drain, when the bench runs the store in process. */
export type RetrieveServiceTimes = () => number[];

/** The group commit's counters (docs/adr/0182), when the bench runs the store in process. */
export type GroupCounters = () => {
  readonly groups: number;
  readonly writes: number;
  /** The checkpoint worker's counters (docs/adr/0166, 0205). */
  readonly checkpoints?: { readonly checkpoints: number; readonly gates: number; readonly unsyncedRestarts: number };
};
let groupCounters: GroupCounters | undefined;

/**
 * Sends `bodies` with `clients` concurrent clients; answers writes per second. The server thread's
 * CPU per write is kept under `label`: 1 s divided by it bounds the rate.
 */
async function drive(
  runner: Clients,
  url: string,
  bodies: string[],
  clients: number,
  perBody = 1,
  label?: string,
): Promise<number> {
  const { origin, pathname } = new URL(url);
  await runner.run({ kind: 'prepare', bodies });
  const groups0 = groupCounters?.();
  const threads0 = meter?.read();
  const answer = await runner.run({ kind: 'drive', origin, path: pathname, clients, perBody });
  const server = threads0 && meter ? meter.since(threads0) : undefined;
  const groups1 = groupCounters?.();
  if (answer.kind !== 'driven') throw new Error(`unexpected answer ${answer.kind}`);
  const writes = bodies.length * perBody;
  const perGroup =
    groups0 && groups1 ? (groups1.writes - groups0.writes) / Math.max(1, groups1.groups - groups0.groups) : undefined;
  if (label !== undefined && server !== undefined) {
    const per = (us: number) => us / writes;
    cpuPerWrite.set(label, {
      server: { serving: per(server.serving), pool: per(server.pool), v8: per(server.v8), later: per(server.later) },
      clients: per(answer.cpuMicros),
      perGroup,
    });
  }
  return writes / answer.seconds;
}

function rate(n: number): string {
  return `${Math.round(n).toLocaleString('en-US')}/s`;
}

/**
 * Per run: the server's CPU per write on each of its threads and the clients', and the two rates they
 * bound (docs/adr/0208): one serving thread cannot pass 1 s / its CPU per write, and the machine
 * cannot pass its cores / (server + clients) CPU per write while the clients run on it.
 */
function printCeilings(): void {
  const cores = os.cpus().length;
  const us = (n: number) => `${Math.round(n)} us`;
  console.log(`    CPU per write and the rates it bounds (${cores} cores; the clients run on the same machine):`);
  for (const [label, cpu] of cpuPerWrite) {
    const { serving, pool, v8, later } = cpu.server;
    const server = total(cpu.server);
    const oneThread = 1e6 / serving;
    const machine = (cores * 1e6) / (server + cpu.clients);
    const goal = GOALS[label];
    const verdict =
      goal === undefined
        ? ''
        : `; goal ${rate(goal)} ${goal > machine ? 'is above both bounds' : goal > oneThread ? 'is above the one-thread bound only' : 'is within both bounds'}`;
    console.log(
      `      ${label}: server ${us(server)} (serving thread ${us(serving)}, V8 helper threads ${us(v8)}, libuv pool ${us(pool)}, checkpoint worker ${us(later)}), clients ${us(cpu.clients)}; bounds: one serving thread <= ${rate(oneThread)}, whole machine <= ${rate(machine)}${verdict}`,
    );
  }
}

/** Runs benchmark (a) against a started store at `base`. */
export async function writeThroughput(
  base: string,
  writes: number,
  sample: (i: number, vector: boolean) => WriteBody,
  queryVector: () => number[],
  counters?: GroupCounters,
  serviceTimes?: RetrieveServiceTimes,
  threads?: ThreadCpuMeter,
): Promise<void> {
  groupCounters = counters;
  // Started before the store, the meter tells the checkpoint worker from V8's threads (thread-cpu.ts).
  meter = threads ?? (await ThreadCpuMeter.start());
  const write = (ns: string) => `${base}/v1/namespaces/${ns}/write`;
  const batch = (ns: string) => `${base}/v1/namespaces/${ns}/write/batch`;
  const singles = (n: number, vector: boolean, offset: number) =>
    Array.from({ length: n }, (_, i) => JSON.stringify(sample(offset + i, vector)));
  const batches = (n: number, vector: boolean, size: number) =>
    Array.from({ length: Math.ceil(n / size) }, (_, b) =>
      JSON.stringify({ writes: Array.from({ length: size }, (_, i) => sample(b * size + i, vector)) }),
    );
  console.log(
    `(a) durable write throughput (group commit, one fdatasync per group; clients in a child process), load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}:`,
  );
  const writers = new Clients();
  const prober = new Clients();
  try {
    await drive(writers, write('warm'), singles(100, true, 0), 8);

    const serialVec = await drive(writers, write('serial-v'), singles(Math.max(200, writes / 4), true, 0), 1);
    const eightVec = await drive(writers, write('http-v'), singles(writes, true, 0), 8, 1, '8 clients, vector + text');
    console.log(
      `    384-dim vector + text, HTTP: 1 client (serial) ${rate(serialVec)}; 8 clients ${rate(eightVec)} (goal >= 3,000/s)`,
    );
    const serialText = await drive(writers, write('serial-t'), singles(Math.max(200, writes / 4), false, 0), 1);
    const eightText = await drive(writers, write('http-t'), singles(writes, false, 0), 8, 1, '8 clients, text');
    console.log(`    text only, HTTP:             1 client (serial) ${rate(serialText)}; 8 clients ${rate(eightText)}`);

    const batchText = await drive(writers, batch('batch-t'), batches(writes * 10, false, 1000), 1, 1000, 'batch, text');
    const batchVec = await drive(
      writers,
      batch('batch-v'),
      batches(writes * 2, true, 1000),
      1,
      1000,
      'batch, vector + text',
    );
    // Two requests in flight, as an import tool would send: the server parses the next batch while
    // the previous one's fdatasync runs, which one client's request after request leaves idle.
    const batchText2 = await drive(writers, batch('batch-t2'), batches(writes * 10, false, 1000), 2, 1000);
    console.log(
      `    batch route, 1,000 writes a request, 1 client: text only ${rate(batchText)} nodes (goal >= 20,000/s); 384-dim vector + text ${rate(batchVec)} nodes (goal >= 5,000/s); text only, 2 requests in flight: ${rate(batchText2)} nodes`,
    );
    printCeilings();
    if (counters)
      console.log(
        `    writes per group commit: ${[...cpuPerWrite]
          .map(([label, us]) => `${label} ${us.perGroup?.toFixed(1) ?? '?'}`)
          .join('; ')}`,
      );

    // Retrieve latency idle, then while 8 clients write (same queries, same namespace); the probe
    // and the writers are two client processes, and the server's event-loop delay is sampled.
    const { origin } = new URL(base);
    // --probes N: a longer probe crosses more checkpoints and GC cycles, for a steadier p99 (docs/adr/0205).
    const queries = Array.from({ length: positiveIntArg('probes', 1000) }, () =>
      JSON.stringify({ vector: queryVector(), top_k: 10 }),
    );
    await prober.run({ kind: 'prepare', bodies: queries });
    const probe = async () => {
      const answer = await prober.run({ kind: 'probe', origin, path: '/v1/namespaces/http-v/retrieve' });
      if (answer.kind !== 'probed') throw new Error(`unexpected answer ${answer.kind}`);
      return answer.ms;
    };
    await probe();
    serviceTimes?.();
    const templates = Array.from({ length: 500 }, (_, i) => JSON.stringify(sample(1_000_000 + i, true)));
    await writers.run({ kind: 'prepare', bodies: templates });
    const lag = monitorEventLoopDelay({ resolution: 1 });
    lag.enable();
    const idle = await probe();
    const idleService = serviceTimes?.() ?? [];
    const idleLag = { p99: lag.percentile(99) / 1e6, max: lag.max / 1e6 };
    lag.reset();
    const stalls = process.argv.includes('--stalls') ? await startStallRecorder() : undefined;
    const ckpt0 = counters?.().checkpoints;
    const cpu0 = threadCpuMicros();
    const loading = writers.run({ kind: 'load', origin, path: '/v1/namespaces/load/write', clients: 8 });
    const busy = await probe();
    const busyService = serviceTimes?.() ?? [];
    const busyLag = { p99: lag.percentile(99) / 1e6, max: lag.max / 1e6 };
    lag.disable();
    await stalls?.stop();
    writers.send({ kind: 'stop' });
    const loaded = await loading;
    const serverCpu = threadCpuMicros() - cpu0;
    const ckpt1 = counters?.().checkpoints;
    const idle99 = percentile(idle, 99);
    const busy99 = percentile(busy, 99);
    console.log(
      `    vector retrieve p50/p99: idle ${percentile(idle, 50).toFixed(2)}/${idle99.toFixed(2)} ms; while 8 clients write ${percentile(busy, 50).toFixed(2)}/${busy99.toFixed(2)} ms (p99 ${(busy99 / idle99).toFixed(2)}x idle, goal <= 2x)`,
    );
    if (idleService.length > 0 && busyService.length > 0) {
      const ms = (values: number[], p: number) => percentile(values, p).toFixed(2);
      console.log(
        `    retrieve service time (in the server, from call to answer) p50/p99: idle ${ms(idleService, 50)}/${ms(idleService, 99)} ms; writing ${ms(busyService, 50)}/${ms(busyService, 99)} ms (the rest of a retrieve's latency is waiting for the loop and HTTP)`,
      );
    }
    if (loaded.kind === 'loaded')
      console.log(
        `    during the busy probe: ${loaded.writes} writes, server thread ${Math.round(serverCpu / Math.max(1, loaded.writes))} us CPU per write (retrieves included); event-loop delay p99/max idle ${idleLag.p99.toFixed(1)}/${idleLag.max.toFixed(1)} ms, writing ${busyLag.p99.toFixed(1)}/${busyLag.max.toFixed(1)} ms`,
      );
    if (ckpt0 && ckpt1)
      console.log(
        `    WAL during the busy probe (docs/adr/0205): ${ckpt1.checkpoints - ckpt0.checkpoints} checkpoints in the worker, ${ckpt1.gates - ckpt0.gates} group commits waited for one, ${ckpt1.unsyncedRestarts - ckpt0.unsyncedRestarts} restarts without the header fsync on the loop`,
      );
  } finally {
    writers.close();
    prober.close();
  }
}
