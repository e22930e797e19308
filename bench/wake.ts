/**
 * bench/wake: the wake gateway's cost. Prints (does not assert):
 *  (a) warm proxy overhead, for two apps: `noop` answers at once (the worst case for any proxy:
 *      the hop is all there is) and `db1ms` waits 1 ms per request, as a handler waiting on a
 *      database does. For each, in the same run and alternated: requests/s with autocannon
 *      (its own process) directly to the app, through the gateway (host-based), and through
 *      the floor: a bare TCP pipe in its own process that parses nothing, the least any proxy
 *      hop costs here. The gateway's CPU time per request is printed too. Latency at
 *      microsecond resolution comes from a sequential keep-alive run, alternated the same way.
 *      Goals: p50 ratio <= 1.15 and throughput >= 80 % of direct.
 *  (b) cold wake: time from the first request to the response minus the app's own boot-to-ready
 *      time (process start to listening, reported by the app), p50 over 20 wakes (goal < 20 ms),
 *      split into the part before the app's shell runs and the part after it listens, and that part
 *      again as the app saw it: until the first health request arrives, its answer, until the
 *      forwarded request arrives, and from there to the response (ADR 0163).
 *
 * Run: node --import tsx bench/wake.ts [--seconds N] [--connections N] [--wakes N] [--warm 0] [--cold-interval MS]
 */
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { startControlPlane } from '../wiring/control-plane.js';
import { setTraceSink } from '../domain/observability/trace-marks.js';
import { instanceStatus } from '../domain/registry/index.js';
import { loadConfig } from '../platform/config.js';
import { silentLogger } from '../platform/logger.js';
import { ReleaseBuilder } from '../platform/release-builder/index.js';
import { getApp, setAppRelease } from '../store/control/apps.js';
import { closePlaneAndStopApps } from '../test/helpers/stop-apps.js';
import { removeAppUsersCreatedHere } from './lib/app-users.js';
import { arg, percentile } from './lib/bench-args.js';
import { WAKE_BENCH_APP, wakeBenchSpec } from './lib/wake-bench-app.js';
import { startTcpPipe } from './lib/tcp-pipe.js';
import { get } from './lib/http-get.js';
import { printWakeTrace, type WakeTrace } from './lib/wake-trace.js';

const seconds = arg('seconds', 5);
// BENCH_MARKS=1 prints monotonic microseconds at the phase boundaries, to cut a --cpu-prof profile by phase.
const mark = (what: string) =>
  process.env.BENCH_MARKS && console.log(`mark ${what} ${process.hrtime.bigint() / 1000n}`);
const connections = arg('connections', 10);
// BENCH_TRACE=1 follows each cold wake through the trace marks on its path (ADR 0201).
const epochNow = () => performance.timeOrigin + performance.now();
let traceMarks: [string, number][] | undefined;
const traces: WakeTrace[] = [];
if (process.env.BENCH_TRACE) setTraceSink((label) => traceMarks?.push([label, epochNow()]));
const wakes = arg('wakes', 20);
// --warm 0 skips part (a), to look at cold wakes alone.
const warmRuns = arg('warm', 1);
// --cold-interval N: the cold app's health interval in ms (10 by default, so a wake is not held back
// by the check's schedule; 1000 is a usual service's, where the start-up backoff shows).
const coldIntervalMs = arg('cold-interval', 10);

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-wake-'));
// Apps run as their own users below it (ADR 0047): they must be able to enter it.
fs.chmodSync(root, 0o711);
const code = path.join(root, 'code');
fs.mkdirSync(code);
fs.writeFileSync(path.join(code, 'server.mjs'), WAKE_BENCH_APP);
fs.writeFileSync(
  path.join(code, 'Dockerfile'),
  'FROM node:20-alpine\nWORKDIR /app\nCOPY . .\nCMD ["node", "server.mjs"]\n',
);
const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=b', '-c', 'user.email=b@example.test', ...args], { cwd, stdio: 'ignore' });
git(code, 'init', '-q', '-b', 'main');
git(code, 'add', '-A');
git(code, 'commit', '-q', '-m', 'bench');

const [warmPort, dbPort, coldPort] = [await freePort(), await freePort(), await freePort()];
const config = loadConfig({
  SVC_PORT: '0',
  SVC_POSTGRES_MANAGED: 'false',
  SVC_KNOWLEDGE_PORT: '0',
  SVC_KNOWLEDGE_ADMIN_PORT: '0',
  SVC_DATA_DIR: path.join(root, 'data'),
  SVC_APPS_DIR: path.join(root, 'apps'),
  SVC_LOG_LEVEL: 'silent',
  SVC_WAKE_IDLE_TIMEOUT: '1h',
});
// Warm apps are checked every second, as a service usually is; the cold app every --cold-interval.
const APPS = [
  ['warm', warmPort, 1, 0, '1s'],
  ['db1ms', dbPort, 1, 1, '1s'],
  ['cold', coldPort, 0, 0, `${coldIntervalMs}ms`],
] as const;
for (const [name, port, min, workMs, interval] of APPS) {
  fs.mkdirSync(path.join(config.appsDir, name), { recursive: true });
  fs.writeFileSync(path.join(config.appsDir, name, 'infraspec.yaml'), wakeBenchSpec(name, port, min, workMs, interval));
}
const release = await new ReleaseBuilder({ dataDir: config.dataDir, logger: silentLogger() }).build({
  app: 'bench',
  repoUrl: code,
  ref: 'main',
});
const plane = await startControlPlane(config, silentLogger());
const registry = plane.reconcilers.registry;
const scheduler = await plane.reconcilers.targets.get();

/** Resolves when `check` holds, re-checked on registry and allocation changes. */
function until(check: () => Promise<boolean>): Promise<void> {
  return new Promise((resolve) => {
    let done = false;
    const probe = () =>
      void check().then((ok) => {
        if (ok && !done) {
          done = true;
          offRegistry();
          offScheduler();
          offApps();
          resolve();
        }
      });
    const offRegistry = registry.watch(probe);
    const offScheduler = scheduler.watch(probe);
    const offApps = plane.reconcilers.specController.onReconciled(probe);
    probe();
  });
}

try {
  await until(async () => APPS.every(([name]) => getApp(plane.db, name)?.spec != null));
  for (const [name] of APPS) {
    setAppRelease(plane.db, name, { commit: release.manifest.commit, dir: release.dir });
    plane.reconcilers.appController.enqueue(name);
  }
  for (const name of ['warm', 'db1ms'])
    await until(async () => (await registry.instances(`${name}-web`)).some((i) => instanceStatus(i) === 'passing'));
  await until(async () => plane.routing.gateway.resolve('cold.bench.test')?.released === true);

  // (a) warm proxy overhead. The load generator runs in its own process, as a real client would:
  // in this process it would share the gateway's event loop (the control plane runs here).
  const autocannonBin = path.resolve(import.meta.dirname, '../node_modules/autocannon/autocannon.js');
  const run = (url: string, host?: string): Promise<any> =>
    new Promise((resolve, reject) => {
      const args = [
        autocannonBin,
        '-c',
        String(connections),
        '-d',
        String(seconds),
        '-j',
        ...(host ? ['-H', `host=${host}`] : []),
        url,
      ];
      execFile(process.execPath, args, { maxBuffer: 16 * 1024 * 1024 }, (error: Error | null, stdout: string) =>
        error ? reject(error) : resolve(JSON.parse(stdout)),
      );
    });
  const cpuMicros = () => {
    const usage = process.cpuUsage();
    return usage.user + usage.system;
  };
  const childCpuMicros = (pid: number) => {
    // utime and stime (fields 14 and 15 of /proc/<pid>/stat) in clock ticks of 10 ms.
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  };
  for (const name of warmRuns > 0 ? (['warm', 'db1ms'] as const) : []) {
    // The app's own port is its allocation's (start before stop, ADR 0160): read it from the registry.
    const [instance] = (await registry.instances(`${name}-web`)).filter((i) => instanceStatus(i) === 'passing');
    if (!instance) throw new Error(`${name}: no passing instance`);
    const port = instance.port;
    const floor = await startTcpPipe(port);
    try {
      const direct = `http://127.0.0.1:${port}/`;
      const viaFloor = `http://127.0.0.1:${floor.port}/`;
      const hostname = `${name}.bench.test`;
      await run(direct); // warm-up
      await run(viaFloor);
      await run(plane.url + '/', hostname);
      const rows = { direct: [] as any[], floor: [] as any[], gateway: [] as any[] };
      const cpu = { floor: 0, gateway: 0 };
      for (let i = 0; i < 2; i += 1) {
        rows.direct.push(await run(direct));
        let before = childCpuMicros(floor.pid);
        rows.floor.push(await run(viaFloor));
        cpu.floor += childCpuMicros(floor.pid) - before;
        before = cpuMicros();
        mark(`gateway-${name}-start`);
        rows.gateway.push(await run(plane.url + '/', hostname));
        mark(`gateway-${name}-end`);
        cpu.gateway += cpuMicros() - before;
      }
      const summary = (results: any[]) => ({
        rps: results.reduce((n, r) => n + r.requests.average, 0) / results.length,
        total: results.reduce((n, r) => n + r.requests.total, 0),
        errors: results.reduce((n, r) => n + r.errors + r.non2xx, 0),
      });
      const [d, f, g] = [summary(rows.direct), summary(rows.floor), summary(rows.gateway)];

      // Latency at microsecond resolution (autocannon reports whole milliseconds): one keep-alive
      // connection each, requests alternated.
      const agents = [0, 1, 2].map(() => new http.Agent({ keepAlive: true, maxSockets: 1 }));
      const once = (agent: http.Agent, url: string, host?: string) =>
        new Promise<number>((resolve, reject) => {
          const started = process.hrtime.bigint();
          const req = http.request(url, { agent, headers: host ? { host } : {} }, (res) => {
            res.resume();
            res.on('end', () => resolve(Number(process.hrtime.bigint() - started) / 1e3));
          });
          req.on('error', reject);
          req.end();
        });
      const seq = { direct: [] as number[], floor: [] as number[], gateway: [] as number[] };
      const sequential = name === 'warm' ? 3000 : 1000;
      for (let i = 0; i < sequential; i += 1) {
        seq.direct.push(await once(agents[0]!, direct));
        seq.floor.push(await once(agents[1]!, viaFloor));
        seq.gateway.push(await once(agents[2]!, plane.url + '/', hostname));
      }
      for (const agent of agents) agent.destroy();
      const p50 = (xs: number[]) => percentile(xs, 50);
      const p99 = (xs: number[]) => percentile(xs, 99);
      console.log(
        `warm, app "${name}" (${name === 'warm' ? 'answers at once' : 'waits 1 ms per request'}), autocannon ${connections} connections, 2 x ${seconds} s each, alternated:`,
      );
      console.log(
        `  direct      : ${d.rps.toFixed(0)} req/s, errors ${d.errors}; sequential p50 ${p50(seq.direct).toFixed(0)} us, p99 ${p99(seq.direct).toFixed(0)} us`,
      );
      console.log(
        `  TCP pipe    : ${f.rps.toFixed(0)} req/s (${((f.rps / d.rps) * 100).toFixed(0)} % of direct), errors ${f.errors}, CPU ${(cpu.floor / f.total).toFixed(1)} us/request; sequential p50 ${p50(seq.floor).toFixed(0)} us (ratio ${(p50(seq.floor) / p50(seq.direct)).toFixed(2)}), p99 ${p99(seq.floor).toFixed(0)} us`,
      );
      console.log(
        `  gateway     : ${g.rps.toFixed(0)} req/s (${((g.rps / d.rps) * 100).toFixed(0)} % of direct), errors ${g.errors}, CPU ${(cpu.gateway / g.total).toFixed(1)} us/request; sequential p50 ${p50(seq.gateway).toFixed(0)} us (ratio ${(p50(seq.gateway) / p50(seq.direct)).toFixed(2)}), p99 ${p99(seq.gateway).toFixed(0)} us`,
      );
      console.log(
        `  goals: throughput >= 80 % of direct, p50 ratio <= 1.15; gateway adds p50 ${(p50(seq.gateway) - p50(seq.direct)).toFixed(0)} us per request, the pipe ${(p50(seq.floor) - p50(seq.direct)).toFixed(0)} us`,
      );
    } finally {
      floor.stop();
    }
  }

  // (b) cold wakes.
  mark('cold-start');
  const overheads: number[] = [];
  const totals: number[] = [];
  const boots: number[] = [];
  const beforeExec: number[] = [];
  const afterReady: number[] = [];
  const toFirstProbe: number[] = [];
  const probeAnswer: number[] = [];
  const toForward: number[] = [];
  const forwardToResponse: number[] = [];
  // CPU time of this process (the control plane and the bench's client) from the request to its response, ms.
  const cpuPerWake: number[] = [];
  for (let i = 0; i < wakes; i += 1) {
    // The drained allocation's `complete` event comes after its process is gone (and the driver's
    // lock and the static port are free): a real wake follows minutes of idleness, not a drain.
    const drained =
      i === 0
        ? Promise.resolve()
        : new Promise<void>((resolve) => {
            const off = scheduler.watch((change) => {
              if (change.allocation.app === 'cold' && change.allocation.status === 'complete') {
                off();
                resolve();
              }
            });
          });
    await plane.routing.idle.sweep(Date.now() + 2 * 3_600_000);
    await drained;
    // Until the drained allocation is gone: the static port is free only then.
    await until(
      async () =>
        (await registry.instances('cold-web')).length === 0 &&
        (await scheduler.listAllocations({ app: 'cold', includeTerminal: true })).every((a) =>
          ['complete', 'failed', 'lost'].includes(a.status),
        ),
    );
    // A real wake follows minutes of idleness: let the scale-down's own work finish first (the
    // driver serializes job changes, and a drain holds that lock until the process is gone; a no-op
    // scale of the warm app passes through the same lock).
    await scheduler.scale('warm', 'web', 1);
    await plane.reconcilers.whenIdle();
    await plane.routing.controller.whenIdle();
    if (process.env.BENCH_TRACE) traceMarks = [];
    const sentAt = Date.now();
    const sentAtPrecise = epochNow();
    const started = performance.now();
    mark('wake-sent');
    const cpuBefore = process.cpuUsage();
    const response = await get(plane.url + '/', 'cold.bench.test');
    const total = performance.now() - started;
    const cpu = process.cpuUsage(cpuBefore);
    mark('wake-answered');
    cpuPerWake.push((cpu.user + cpu.system) / 1000);
    const answeredAt = Date.now();
    if (response.status !== 200) throw new Error(`wake ${i}: HTTP ${response.status} ${response.body}`);
    const body = JSON.parse(response.body) as {
      bootMs: number;
      startedAt: number;
      readyAt: number;
      firstHealthAt: number;
      healthAnsweredAt: number;
      arrivedAt: number;
    };
    totals.push(total);
    if (traceMarks) {
      traces.push({
        sentAt: sentAtPrecise,
        marks: traceMarks,
        app: {
          T0: body.startedAt,
          listening: body.readyAt,
          firstHealth: body.firstHealthAt,
          healthAnswered: body.healthAnsweredAt,
          arrived: body.arrivedAt,
          answered: epochNow(),
        },
      });
      traceMarks = undefined;
    }
    boots.push(body.bootMs);
    overheads.push(total - body.bootMs);
    // Where the overhead lies (epoch milliseconds, one clock): before the app's shell runs (the
    // gateway, the scale-up, the spawn and its sandbox wrappers) and after it listens (the health
    // check that sees it, the registry, the forward).
    beforeExec.push(body.startedAt - sentAt);
    afterReady.push(answeredAt - body.readyAt);
    // After it listens: until the first health request arrives (the check's schedule), the app's
    // answer to it, from that answer to the forwarded request's arrival (registry, gateway, connect),
    // and from there to the response at the client (the app's first real request and the way back).
    toFirstProbe.push(body.firstHealthAt - body.readyAt);
    probeAnswer.push(body.healthAnsweredAt - body.firstHealthAt);
    toForward.push(body.arrivedAt - body.healthAnsweredAt);
    forwardToResponse.push(answeredAt - body.arrivedAt);
  }
  mark('cold-end');
  if (traces.length > 0) printWakeTrace(traces);
  console.log(`cold wake over ${wakes} wakes (health interval ${coldIntervalMs}ms):`);
  console.log(
    `  first request to response: p50 ${percentile(totals, 50).toFixed(1)} ms; app boot-to-ready (shell exec to listening) p50 ${percentile(boots, 50).toFixed(1)} ms`,
  );
  console.log(
    `  wake overhead (response minus boot-to-ready): p50 ${percentile(overheads, 50).toFixed(1)} ms, max ${Math.max(...overheads).toFixed(1)} ms (goal p50 < 20 ms); scale-ups ${plane.routing.gateway.stats.scaleUps}`,
  );
  console.log(
    `  of which: request to the app's shell (gateway, scale-up, spawn, sandbox wrappers) p50 ${percentile(beforeExec, 50).toFixed(0)} ms; app listening to response (health check, registry, forward) p50 ${percentile(afterReady, 50).toFixed(0)} ms`,
  );
  console.log(
    `  control plane CPU (this process, with the bench's client) from the request to the response: p50 ${percentile(cpuPerWake, 50).toFixed(1)} ms per wake`,
  );
  const p50 = (xs: number[]) => percentile(xs, 50).toFixed(0);
  console.log(
    `  after it listens, p50 (ms, whole-ms clocks): to the first health request ${p50(toFirstProbe)}; its answer ${p50(probeAnswer)}; to the forwarded request's arrival (registry, gateway, connect) ${p50(toForward)}; to the response at the client ${p50(forwardToResponse)}`,
  );
} finally {
  // Close first, so no controller re-submits a job while the app processes are stopped.
  await closePlaneAndStopApps(plane, config);
  // The app users this run created go with it (ADR 0191).
  await removeAppUsersCreatedHere();
  fs.rmSync(root, { recursive: true, force: true });
}
