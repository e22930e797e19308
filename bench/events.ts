/**
 * bench/events: durable event ingest per second with 30 % duplicate dedupe keys (in process
 * through the EventEmitterPort, and over HTTP `POST /api/events`), then `GET /api/events/active`
 * latency with 100,000 stored events. control.db runs with synchronous=FULL as in production.
 *
 * Run: node --import tsx bench/events.ts [--ingest N] [--clients N] [--stored N] [--groups N] [--requests N]
 *      [--node-clients] [--http-only] [--production] [--random-keys] [--sustained N]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { startControlPlane } from '../wiring/control-plane.js';
import { loadConfig } from '../platform/config.js';
import { silentLogger } from '../platform/logger.js';
import type { EventInput } from '../domain/events/event-port.js';
import { activeGroups } from '../store/control/events.js';

function arg(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 ? Number(process.argv[index + 1]) : fallback;
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

const ingest = arg('ingest', 20_000);
const stored = arg('stored', 100_000);
const groups = arg('groups', 2_000);
const requests = arg('requests', 1000);
const clients = arg('clients', 64);
/** Events posted to our server after the timed HTTP phase, to see the rate hold as the tables grow. */
const sustained = arg('sustained', 0);
/** `getconf CLK_TCK`: the unit of `/proc/<pid>/stat`'s times. */
const CLOCK_TICKS = 100;
/**
 * `--production`: the HTTP target runs the production profile (a control token, explicit auth, audit
 * receipts reserved before each event, ADR 0187); the clients send the token to both servers.
 */
const production = process.argv.includes('--production');
const BENCH_TOKEN = 'bench-events-token';
const clientHeaders: Record<string, string> = {
  'content-type': 'application/json',
  ...(production ? { authorization: `Bearer ${BENCH_TOKEN}` } : {}),
};
/** Only the HTTP phase (the floor and ours), for alternated runs. */
const httpOnly = process.argv.includes('--http-only');
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-events-'));
// Apps run as their own users below it (ADR 0047): they must be able to enter it.
fs.chmodSync(root, 0o711);
if (process.argv.includes('--floor') || process.argv.includes('--child')) {
  // A server child ends with the bench that started it, even when the bench dies without SIGTERM.
  process.stdin.resume();
  process.stdin.once('end', () => process.kill(process.pid, 'SIGTERM'));
}
if (process.argv.includes('--floor')) {
  // The HTTP floor: a bare node:http server that reads each POST body, parses its JSON and answers
  // 201, storing nothing. It is what any HTTP ingest on this machine pays before our code runs.
  const floor = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { dedupeKey?: string };
      const body = JSON.stringify({ recorded: true, dedupe_key: event.dedupeKey ?? null });
      res.writeHead(201, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
  });
  floor.listen(0, '127.0.0.1', () => {
    const { port } = floor.address() as { port: number };
    process.stdout.write(`http://127.0.0.1:${port}\n`);
  });
  process.on('SIGTERM', () => {
    fs.rmSync(root, { recursive: true, force: true });
    process.exit(0);
  });
  await new Promise(() => undefined);
}
if (process.argv.includes('--child')) {
  // HTTP ingest target: a control plane in its own process, so the load generator does not share its event loop.
  const child = await startControlPlane(
    loadConfig({
      SVC_PORT: '0',
      SVC_POSTGRES_MANAGED: 'false',
      SVC_DATA_DIR: path.join(root, 'data'),
      SVC_APPS_DIR: path.join(root, 'apps'),
      SVC_LOG_LEVEL: 'silent',
      SVC_CAPACITY_CHECK_INTERVAL: 'off',
      ...(production
        ? {
            SVC_PROFILE: 'production',
            SVC_API_TOKEN: BENCH_TOKEN,
            SVC_REQUIRE_EXPLICIT_AUTH: 'true',
            SVC_RELEASE_SIGNATURE_POLICY: 'none',
          }
        : {}),
    }),
    silentLogger(),
  );
  process.stdout.write(`${child.url}\n`);
  process.on(
    'SIGTERM',
    () =>
      void child.close().then(() => {
        fs.rmSync(root, { recursive: true, force: true });
        process.exit(0);
      }),
  );
  await new Promise(() => undefined);
}
const plane = await startControlPlane(
  loadConfig({
    SVC_PORT: '0',
    SVC_POSTGRES_MANAGED: 'false',
    SVC_DATA_DIR: path.join(root, 'data'),
    SVC_APPS_DIR: path.join(root, 'apps'),
    SVC_LOG_LEVEL: 'silent',
    SVC_CAPACITY_CHECK_INTERVAL: 'off',
  }),
  silentLogger(),
);

/**
 * `--random-keys`: dedupe keys look random (a hash, as a client's UUIDs would), instead of a prefix
 * and a counter that sort in the order they are sent: a random key writes its index's b-tree at a
 * random page (ADR 0204).
 */
const randomKeys = process.argv.includes('--random-keys');

/** The dedupe key of the n-th distinct event of a stream. */
function dedupeKeyOf(prefix: string, n: number): string {
  const key = `${prefix}-${n}`;
  return randomKeys ? createHash('sha256').update(key).digest('hex').slice(0, 32) : key;
}

/** The i-th event of a stream where 30 % repeat a recent dedupe key. */
function burstEvent(prefix: string, i: number): EventInput {
  const key = dedupeKeyOf(prefix, i >= 10 && i % 10 < 3 ? i - 7 : i);
  return {
    type: 'event.test',
    severity: 'warning',
    app: `app-${i % 50}`,
    title: `bench ${i}`,
    dedupeKey: key,
    metadata: { correlationKey: `app-${i % 50}:bench` },
  };
}

// 1. In-process ingest: many emits in flight, each acknowledged only after its batch commits.
if (!httpOnly) {
  const started = performance.now();
  let recorded = 0;
  let duplicates = 0;
  const inFlight = 512;
  let next = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < ingest) {
        const result = await plane.events.emit(burstEvent('inproc', next++));
        if (result.recorded) recorded++;
        else duplicates++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  console.log(
    `ingest (in process, ${inFlight} in flight): ${ingest} events (${recorded} recorded, ${duplicates} duplicates) in ${seconds.toFixed(2)} s = ${Math.round(ingest / seconds)} events/s (goal >= 5,000/s)`,
  );
}

// 2. HTTP ingest: POST /api/events with keep-alive against a control plane in a child process;
// throughput is bounded by clients in flight per commit (each commit's fsync blocks that process).
{
  // The HTTP floor first, then the control plane, each in its own process with the same clients and bodies.
  const floor = await httpIngest('--floor', 'http-floor');
  const ours = await httpIngest('--child', 'http');
  console.log(
    `ingest over HTTP: ${ours.rate} events/s beside ${floor.rate}/s for a bare node:http server that parses each body and stores nothing (${(ours.rate / floor.rate).toFixed(2)}x its floor; goal >= 10,000/s); server CPU per request ${ours.serverUs} us beside the floor's ${floor.serverUs} us, clients ${ours.clientUs} us beside ${floor.clientUs} us (load average ${os.loadavg()[0]!.toFixed(2)})`,
  );
}

/** User + system CPU seconds a process has used so far, from `/proc/<pid>/stat` (Linux). */
function processCpuSeconds(pid: number, thread?: number): number {
  // Fields after the command's closing parenthesis: state is field 3, utime 14 and stime 15. With
  // `thread`, that thread's own (the main thread's id is the process id: its serving thread).
  const stat = fs.readFileSync(thread === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${thread}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

/** Write syscalls (`syscw`) and bytes handed to them (`wchar`) of a process so far, from `/proc/<pid>/io`. */
function processWrites(pid: number): { calls: number; bytes: number } {
  const io = fs.readFileSync(`/proc/${pid}/io`, 'utf8');
  const field = (name: string) => Number(/^(\w+): (\d+)$/m.exec(io.slice(io.indexOf(`${name}:`)))?.[2] ?? 0);
  return { calls: field('syscw'), bytes: field('wchar') };
}

/** One HTTP ingest run's figures. */
interface IngestRun {
  readonly rate: number;
  /** Server process CPU per request (user + system), microseconds. */
  readonly serverUs: number;
  /** Load generator (this process) CPU per request, microseconds. */
  readonly clientUs: number;
}

/**
 * Events per second over HTTP against the server `mode` starts in a child process. The clients are
 * `clients` keep-alive connections of one undici `Pool` (no pipelining: one request in flight per
 * connection), the same for the floor and for ours; `--node-clients` uses `http.request` on an
 * `http.Agent` instead, to compare what the load generator itself costs.
 */
async function httpIngest(mode: '--floor' | '--child', prefix: string): Promise<IngestRun> {
  // The child runs with this process's Node options (`--import tsx`, and `--cpu-prof` when profiling).
  const server = spawn(
    process.execPath,
    [...process.execArgv, fileURLToPath(import.meta.url), mode, ...(production ? ['--production'] : [])],
    {
      // stdin stays open while this process lives: the child ends when it closes (this process died).
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  const baseUrl = await new Promise<string>((resolve) =>
    readline.createInterface({ input: server.stdout }).once('line', resolve),
  );
  const post = process.argv.includes('--node-clients') ? nodeClient(baseUrl) : undiciClient(baseUrl);
  const burst = async (prefix: string, total: number) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: clients }, async () => {
        while (next < total) {
          const status = await post.send(JSON.stringify(burstEvent(prefix, next++)));
          if (status !== 201 && status !== 200) throw new Error(`POST answered ${status}`);
        }
      }),
    );
  };
  await burst(`${prefix}-warmup`, 2_000);
  const total = Math.min(ingest, 10_000);
  const serverCpu0 = processCpuSeconds(server.pid!);
  const servingCpu0 = processCpuSeconds(server.pid!, server.pid);
  const serverWrites0 = processWrites(server.pid!);
  const clientCpu0 = process.cpuUsage();
  const started = performance.now();
  await burst(prefix, total);
  const seconds = (performance.now() - started) / 1000;
  const clientCpu = process.cpuUsage(clientCpu0);
  const serverUs = Math.round(((processCpuSeconds(server.pid!) - serverCpu0) * 1e6) / total);
  const servingUs = Math.round(((processCpuSeconds(server.pid!, server.pid) - servingCpu0) * 1e6) / total);
  // Beside the answer's one writev, what the server writes per request is its WAL frames (ADR 0204).
  const serverWrites = processWrites(server.pid!);
  const writeCalls = (serverWrites.calls - serverWrites0.calls) / total;
  const writeKib = (serverWrites.bytes - serverWrites0.bytes) / total / 1024;
  const clientUs = Math.round((clientCpu.user + clientCpu.system) / total);
  const rate = Math.round(total / seconds);
  const target = mode === '--floor' ? 'bare node:http floor' : 'POST /api/events, server in its own process';
  console.log(
    `ingest (HTTP, ${target}, ${clients} keep-alive clients via ${post.name}): ${total} events in ${seconds.toFixed(2)} s = ${rate} events/s; CPU per request: server ${serverUs} us (serving thread ${servingUs} us: at most ${Math.round(1e6 / servingUs)}/s), clients ${clientUs} us; server writes per request: ${writeCalls.toFixed(1)} calls, ${writeKib.toFixed(1)} KiB`,
  );
  // `--sustained N`: N more events after the timed ones, in bursts of 10,000, each one's rate printed:
  // a rate that falls as control.db and the dedupe window fill shows here, not in 10,000 (ADR 0212).
  const rates: number[] = [];
  for (let done = 0; mode === '--child' && done < sustained; done += 10_000) {
    const chunk = Math.min(10_000, sustained - done);
    const at = performance.now();
    await burst(`${prefix}-sustained-${done}`, chunk);
    rates.push(Math.round(chunk / ((performance.now() - at) / 1000)));
  }
  if (rates.length > 0)
    console.log(
      `sustained ingest after the timed events, ${sustained} more in bursts of 10,000 (events/s each): ${rates.join(', ')}`,
    );
  await post.close();
  server.kill('SIGTERM');
  await new Promise((resolve) => server.once('exit', resolve));
  return { rate, serverUs, clientUs };
}

/** A load generator: sends one JSON body and resolves with the answer's status once its body is read. */
interface IngestClient {
  readonly name: string;
  send(body: string): Promise<number>;
  close(): Promise<void>;
}

function undiciClient(baseUrl: string): IngestClient {
  const pool = new Pool(baseUrl, { connections: clients, pipelining: 1 });
  return {
    name: 'undici Pool',
    async send(body) {
      const res = await pool.request({
        path: '/api/events',
        method: 'POST',
        headers: clientHeaders,
        body,
      });
      await res.body.dump();
      return res.statusCode;
    },
    close: () => pool.close(),
  };
}

function nodeClient(baseUrl: string): IngestClient {
  const agent = new http.Agent({ keepAlive: true, maxSockets: clients });
  const url = new URL(`${baseUrl}/api/events`);
  return {
    name: 'http.request',
    send: (body) =>
      new Promise<number>((resolve, reject) => {
        const req = http.request(
          {
            host: url.hostname,
            port: url.port,
            path: url.pathname,
            method: 'POST',
            agent,
            headers: { ...clientHeaders, 'content-length': String(Buffer.byteLength(body)) },
          },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          },
        );
        req.on('error', reject);
        req.end(body);
      }),
    close: async () => agent.destroy(),
  };
}

// 3. Fill to `stored` events over `groups` incident groups; about 10 % of groups stay unresolved.
if (!httpOnly) {
  const have = (plane.db.prepare('SELECT COUNT(*) AS n FROM events').get() as { n: number }).n;
  let next = 0;
  const toAdd = Math.max(0, stored - have);
  await Promise.all(
    Array.from({ length: 512 }, async () => {
      while (next < toAdd) {
        const i = next++;
        const group = i % groups;
        const last = i + groups >= toAdd;
        const severity = last && group % 10 !== 0 ? 'info' : group % 3 === 0 ? 'critical' : 'warning';
        await plane.events.emit({
          type: severity === 'info' ? 'service.health.recovered' : 'service.health.warning',
          severity,
          app: `app-${group % 200}`,
          title: `fill ${i}`,
          metadata: { correlationKey: `app-${group % 200}:p${group}:health` },
        });
      }
    }),
  );
  // Clear the benchmark's own ingest groups so the active view shows the fill's unresolved groups.
  await plane.eventServices.events
    .incidentAction({ action: 'acknowledge', correlationKey: 'app-0:bench' })
    .catch(() => undefined);
  const count = (plane.db.prepare('SELECT COUNT(*) AS n FROM events').get() as { n: number }).n;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const get = () =>
    new Promise<{ ms: number; size: number }>((resolve, reject) => {
      const t0 = performance.now();
      http
        .get(`${plane.url}/api/events/active`, { agent }, (res) => {
          let size = 0;
          res.on('data', (c: Buffer) => (size += c.length));
          res.on('end', () => resolve({ ms: performance.now() - t0, size }));
        })
        .on('error', reject);
    });
  // Let the fill's garbage be collected, then warm up: this measures steady-state reads.
  await new Promise((resolve) => setTimeout(resolve, 1000));
  for (let i = 0; i < 100; i++) await get();
  const samples: number[] = [];
  let size = 0;
  for (let i = 0; i < requests; i++) {
    const r = await get();
    samples.push(r.ms);
    size = r.size;
  }
  samples.sort((a, b) => a - b);
  const active = ((await (await fetch(`${plane.url}/api/events/active`)).json()) as { incidents: unknown[] }).incidents
    .length;
  console.log(
    `GET /api/events/active with ${count} stored events, ${active} unresolved groups (${Math.round(size / 1024)} KiB): p50 ${percentile(samples, 50).toFixed(1)} ms, p99 ${percentile(samples, 99).toFixed(1)} ms (goal p99 < 20 ms)`,
  );
  // The same view recomputed from the database: an info event before each read invalidates the cache.
  const cold: number[] = [];
  for (let i = 0; i < Math.min(requests, 300); i++) {
    await plane.events.emit({ type: 'event.test', severity: 'info', title: `invalidate ${i}` });
    cold.push((await get()).ms);
  }
  cold.sort((a, b) => a - b);
  console.log(
    `GET /api/events/active after a write each time (the written group re-read): p50 ${percentile(cold, 50).toFixed(1)} ms, p99 ${percentile(cold, 99).toFixed(1)} ms`,
  );
  // The full rebuild (at start and when a snooze ends), in process without HTTP.
  const full: number[] = [];
  for (let i = 0; i < 100; i++) {
    const t0 = performance.now();
    activeGroups(plane.db, Date.now());
    full.push(performance.now() - t0);
  }
  full.sort((a, b) => a - b);
  console.log(
    `active view full rebuild from the database (in process): p50 ${percentile(full, 50).toFixed(1)} ms, p99 ${percentile(full, 99).toFixed(1)} ms`,
  );
  agent.destroy();
}

await plane.close();
fs.rmSync(root, { recursive: true, force: true });
