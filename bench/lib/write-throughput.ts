/**
 * Benchmark (a) of `bench/knowledge.ts`: durable write throughput through the real server (group
 * commit, docs/adr/0182), each figure beside the same run's serial one, and retrieve latency while
 * writes run beside idle retrieve latency. Request bodies are serialised before the clock starts,
 * and clients use plain keep-alive HTTP, so the figures measure the server more than the client
 * (both share this process).
 */
import http from 'node:http';
import os from 'node:os';
import { percentile } from './bench-args.js';
import { threadCpuMicros } from './write-floors.js';

/** One write request body. */
export interface WriteBody {
  readonly content: string;
  readonly source_id: string;
  readonly vector?: number[];
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

/** POSTs a prepared JSON body; resolves with the parsed answer, rejects on a non-2xx status. */
export async function postRaw(url: string, body: string): Promise<any> {
  try {
    return await postOnce(url, body);
  } catch (error) {
    // A keep-alive socket the server closed while the benchmark was busy elsewhere: reconnect once.
    if ((error as NodeJS.ErrnoException).code === 'ECONNRESET') return postOnce(url, body);
    throw error;
  }
}

function postOnce(url: string, body: string): Promise<any> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if ((res.statusCode ?? 500) >= 300)
            reject(new Error(`${url} answered ${res.statusCode}: ${text.slice(0, 300)}`));
          else resolve(JSON.parse(text));
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Main-thread CPU per write of each measured run, by its label (docs/adr/0166). */
const cpuPerWrite = new Map<string, number>();

/**
 * Sends `bodies` with `clients` concurrent clients; answers writes per second. The main thread's CPU
 * per write (server and clients share it) is kept under `label`: 1 s divided by it bounds the rate.
 */
async function drive(
  url: string,
  bodies: readonly string[],
  clients: number,
  perBody = 1,
  label?: string,
): Promise<number> {
  let cursor = 0;
  const cpu0 = threadCpuMicros();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (cursor < bodies.length) {
        const res = await postRaw(url, bodies[cursor++]!);
        if (perBody > 1 && res.results.some((r: { status: number }) => r.status !== 200))
          throw new Error('a batch item failed');
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  if (label !== undefined) cpuPerWrite.set(label, (threadCpuMicros() - cpu0) / (bodies.length * perBody));
  return (bodies.length * perBody) / seconds;
}

function rate(n: number): string {
  return `${Math.round(n).toLocaleString('en-US')}/s`;
}

/** Runs benchmark (a) against a started store at `base`. */
export async function writeThroughput(
  base: string,
  writes: number,
  sample: (i: number, vector: boolean) => WriteBody,
  queryVector: () => number[],
): Promise<void> {
  const write = (ns: string) => `${base}/v1/namespaces/${ns}/write`;
  const batch = (ns: string) => `${base}/v1/namespaces/${ns}/write/batch`;
  const singles = (n: number, vector: boolean, offset: number) =>
    Array.from({ length: n }, (_, i) => JSON.stringify(sample(offset + i, vector)));
  const batches = (n: number, vector: boolean, size: number) =>
    Array.from({ length: Math.ceil(n / size) }, (_, b) =>
      JSON.stringify({ writes: Array.from({ length: size }, (_, i) => sample(b * size + i, vector)) }),
    );
  console.log(
    `(a) durable write throughput (group commit, one fdatasync per group), load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}:`,
  );
  await drive(write('warm'), singles(100, true, 0), 8);

  const serialVec = await drive(write('serial-v'), singles(Math.max(200, writes / 4), true, 0), 1);
  const eightVec = await drive(write('http-v'), singles(writes, true, 0), 8, 1, '8 clients, vector + text');
  console.log(
    `    384-dim vector + text, HTTP: 1 client (serial) ${rate(serialVec)}; 8 clients ${rate(eightVec)} (goal >= 3,000/s)`,
  );
  const serialText = await drive(write('serial-t'), singles(Math.max(200, writes / 4), false, 0), 1);
  const eightText = await drive(write('http-t'), singles(writes, false, 0), 8, 1, '8 clients, text');
  console.log(`    text only, HTTP:             1 client (serial) ${rate(serialText)}; 8 clients ${rate(eightText)}`);

  const batchText = await drive(batch('batch-t'), batches(writes * 10, false, 1000), 1, 1000, 'batch, text');
  const batchVec = await drive(batch('batch-v'), batches(writes * 2, true, 1000), 1, 1000, 'batch, vector + text');
  console.log(
    `    batch route, 1,000 writes a request, 1 client: text only ${rate(batchText)} nodes (goal >= 20,000/s); 384-dim vector + text ${rate(batchVec)} nodes (goal >= 5,000/s)`,
  );

  console.log(
    `    main-thread CPU per write (server and clients; 1 s / it bounds the rate): ${[...cpuPerWrite]
      .map(([label, us]) => `${label} ${Math.round(us)} us (<= ${rate(1e6 / us)})`)
      .join('; ')}`,
  );

  // Retrieve latency idle, then while 8 clients write (same queries, same namespace).
  const queries = Array.from({ length: 300 }, () => JSON.stringify({ vector: queryVector(), top_k: 10 }));
  const retrieve = `${base}/v1/namespaces/http-v/retrieve`;
  const timeQueries = async () => {
    const ms: number[] = [];
    for (const q of queries) {
      const s = performance.now();
      await postRaw(retrieve, q);
      ms.push(performance.now() - s);
    }
    return ms;
  };
  await timeQueries();
  const idle = await timeQueries();
  let writing = true;
  const load = Array.from({ length: 8 }, async (_, c) => {
    for (let i = 0; writing; i++) await postRaw(write('load'), JSON.stringify(sample(c * 1_000_000 + i, true)));
  });
  const busy = await timeQueries();
  writing = false;
  await Promise.all(load);
  const idle99 = percentile(idle, 99);
  const busy99 = percentile(busy, 99);
  console.log(
    `    vector retrieve p50/p99: idle ${percentile(idle, 50).toFixed(2)}/${idle99.toFixed(2)} ms; while 8 clients write ${percentile(busy, 50).toFixed(2)}/${busy99.toFixed(2)} ms (p99 ${(busy99 / idle99).toFixed(2)}x idle, goal <= 2x)`,
  );
}
