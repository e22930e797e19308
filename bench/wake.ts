/**
 * bench/wake: the wake gateway's cost. Prints (does not assert):
 *  (a) warm proxy overhead: requests/s and p50/p99 latency through the gateway (host-based) and
 *      directly to the app, in the same run with autocannon (goal: p50 ratio <= 1.15,
 *      throughput >= 80 % of direct);
 *  (b) cold wake: time from the first request to the response minus the app's own boot-to-ready
 *      time (process start to listening, reported by the app), p50 over 20 wakes (goal < 50 ms).
 *
 * Run: node --import tsx bench/wake.ts [--seconds N] [--connections N] [--wakes N]
 */
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
// autocannon ships no types.
// eslint-disable-next-line @typescript-eslint/ban-ts-comment
// @ts-ignore
import { startControlPlane } from '../api/control/start-control-plane.js';
import { instanceStatus } from '../domain/registry/index.js';
import { loadConfig } from '../platform/config.js';
import { silentLogger } from '../platform/logger.js';
import { ReleaseBuilder } from '../platform/release-builder/index.js';
import { getApp, setAppRelease } from '../store/control/apps.js';
import { closePlaneAndStopApps } from '../test/helpers/stop-apps.js';

function arg(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 ? Number(process.argv[index + 1]) : fallback;
}
const seconds = arg('seconds', 5);
const connections = arg('connections', 10);
const wakes = arg('wakes', 20);

const APP = `import http from 'node:http';
const server = http.createServer((req, res) => {
  if (req.url === '/healthz') { res.writeHead(200); res.end('ok'); return; }
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ bootMs: readyAt - startedAt, pid: process.pid }));
});
// T0: epoch ms taken by the shell just before exec of node (see the cold app's command), so boot
// includes node's own start-up; performance.timeOrigin is the fallback.
const startedAt = Number(process.env.T0 || performance.timeOrigin);
let readyAt = 0;
server.listen(Number(process.env.PORT), '127.0.0.1', () => { readyAt = Date.now(); });
process.on('SIGTERM', () => { server.closeAllConnections(); server.close(() => process.exit(0)); });
`;

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function spec(name: string, port: number, min: number): string {
  return `name: ${name}\ndeploy: true\nprocesses:\n  web:\n    command: T0=$(date +%s%3N) exec node server.mjs\n    port: ${port}\n    health:\n      path: /healthz\n      interval: 10ms\n      timeout: 1s\n    scaling:\n      min: ${min}\n    resources:\n      memory: 128\nendpoints:\n  - url: ${name}.bench.test\n`;
}

function get(url: string, host?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { agent: false, headers: host ? { host } : {} }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

const percentile = (values: readonly number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
};

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-wake-'));
const code = path.join(root, 'code');
fs.mkdirSync(code);
fs.writeFileSync(path.join(code, 'server.mjs'), APP);
fs.writeFileSync(path.join(code, 'Dockerfile'), 'FROM node:20-alpine\nWORKDIR /app\nCOPY . .\nCMD ["node", "server.mjs"]\n');
const git = (cwd: string, ...args: string[]) => execFileSync('git', ['-c', 'user.name=b', '-c', 'user.email=b@example.test', ...args], { cwd, stdio: 'ignore' });
git(code, 'init', '-q', '-b', 'main');
git(code, 'add', '-A');
git(code, 'commit', '-q', '-m', 'bench');

const [warmPort, coldPort] = [await freePort(), await freePort()];
const config = loadConfig({ SVC_PORT: '0', SVC_KNOWLEDGE_PORT: '0', SVC_KNOWLEDGE_ADMIN_PORT: '0', SVC_DATA_DIR: path.join(root, 'data'), SVC_APPS_DIR: path.join(root, 'apps'), SVC_LOG_LEVEL: 'silent', SVC_WAKE_IDLE_TIMEOUT: '1h' });
for (const [name, port, min] of [['warm', warmPort, 1], ['cold', coldPort, 0]] as const) {
  fs.mkdirSync(path.join(config.appsDir, name), { recursive: true });
  fs.writeFileSync(path.join(config.appsDir, name, 'infraspec.yaml'), spec(name, port, min));
}
const release = await new ReleaseBuilder({ dataDir: config.dataDir, logger: silentLogger() }).build({ app: 'bench', repoUrl: code, ref: 'main' });
const plane = await startControlPlane(config, silentLogger());
const registry = plane.reconcilers.registry;
const scheduler = await plane.reconcilers.targets.get();

/** Resolves when `check` holds, re-checked on registry and allocation changes. */
function until(check: () => Promise<boolean>): Promise<void> {
  return new Promise((resolve) => {
    let done = false;
    const probe = () => void check().then((ok) => {
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
  await until(async () => getApp(plane.db, 'warm')?.spec != null && getApp(plane.db, 'cold')?.spec != null);
  for (const name of ['warm', 'cold']) {
    setAppRelease(plane.db, name, { commit: release.manifest.commit, dir: release.dir });
    plane.reconcilers.appController.enqueue(name);
  }
  await until(async () => (await registry.instances('warm-web')).some((i) => instanceStatus(i) === 'passing'));
  await until(async () => plane.routing.gateway.resolve('cold.bench.test')?.released === true);

  // (a) warm proxy overhead, direct and through the gateway alternately in the same run.
  const direct = `http://127.0.0.1:${warmPort}/`;
  // The load generator runs in its own process, as a real client would: in this process it would
  // share the gateway's event loop (the control plane runs here) and slow only the gateway side.
  const autocannonBin = path.resolve(import.meta.dirname, '../node_modules/autocannon/autocannon.js');
  const run = (url: string, host?: string): Promise<any> =>
    new Promise((resolve, reject) => {
      const args = [autocannonBin, '-c', String(connections), '-d', String(seconds), '-j', ...(host ? ['-H', `host=${host}`] : []), url];
      execFile(process.execPath, args, { maxBuffer: 16 * 1024 * 1024 }, (error: Error | null, stdout: string) => (error ? reject(error) : resolve(JSON.parse(stdout))));
    });
  await run(direct); // warm-up
  await run(plane.url + '/', 'warm.bench.test');
  const rounds: { direct: any; gateway: any }[] = [];
  for (let i = 0; i < 2; i += 1) rounds.push({ direct: await run(direct), gateway: await run(plane.url + '/', 'warm.bench.test') });
  const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const d = { rps: avg(rounds.map((r) => r.direct.requests.average)), p50: avg(rounds.map((r) => r.direct.latency.p50)), p99: avg(rounds.map((r) => r.direct.latency.p99)), errors: rounds.reduce((n, r) => n + r.direct.errors + r.direct.non2xx, 0) };
  const g = { rps: avg(rounds.map((r) => r.gateway.requests.average)), p50: avg(rounds.map((r) => r.gateway.latency.p50)), p99: avg(rounds.map((r) => r.gateway.latency.p99)), errors: rounds.reduce((n, r) => n + r.gateway.errors + r.gateway.non2xx, 0) };
  console.log(`warm, ${connections} connections, 2 x ${seconds}s each:`);
  console.log(`  direct : ${d.rps.toFixed(0)} req/s, p50 ${d.p50.toFixed(2)} ms, p99 ${d.p99.toFixed(2)} ms, errors ${d.errors}`);
  console.log(`  gateway: ${g.rps.toFixed(0)} req/s, p50 ${g.p50.toFixed(2)} ms, p99 ${g.p99.toFixed(2)} ms, errors ${g.errors}`);
  console.log(`  throughput ${((g.rps / d.rps) * 100).toFixed(0)} % of direct (goal >= 80 %); autocannon reports whole milliseconds, so the latency ratio comes from the sequential run below`);

  // Latency at microsecond resolution: one keep-alive connection each, requests alternated.
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const once = (url: string, host?: string) => new Promise<number>((resolve, reject) => {
    const started = process.hrtime.bigint();
    const req = http.request(url, { agent, headers: host ? { host } : {} }, (res) => {
      res.resume();
      res.on('end', () => resolve(Number(process.hrtime.bigint() - started) / 1e6));
    });
    req.on('error', reject);
    req.end();
  });
  const seqDirect: number[] = [];
  const seqGateway: number[] = [];
  for (let i = 0; i < 3000; i += 1) {
    seqDirect.push(await once(direct));
    seqGateway.push(await once(plane.url + '/', 'warm.bench.test'));
  }
  agent.destroy();
  const [dp50, dp99, gp50, gp99] = [percentile(seqDirect, 50), percentile(seqDirect, 99), percentile(seqGateway, 50), percentile(seqGateway, 99)];
  console.log(`sequential, 1 keep-alive connection, 3000 requests each, alternated:`);
  console.log(`  direct p50 ${(dp50 * 1000).toFixed(0)} us, p99 ${(dp99 * 1000).toFixed(0)} us; gateway p50 ${(gp50 * 1000).toFixed(0)} us, p99 ${(gp99 * 1000).toFixed(0)} us`);
  console.log(`  p50 ratio ${(gp50 / dp50).toFixed(2)} (goal <= 1.15); added p50 ${((gp50 - dp50) * 1000).toFixed(0)} us per request`);

  // (b) cold wakes.
  const overheads: number[] = [];
  const totals: number[] = [];
  const boots: number[] = [];
  for (let i = 0; i < wakes; i += 1) {
    // The drained allocation's `complete` event comes after its process is gone (and the driver's
    // lock and the static port are free): a real wake follows minutes of idleness, not a drain.
    const drained = i === 0 ? Promise.resolve() : new Promise<void>((resolve) => {
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
    await until(async () => (await registry.instances('cold-web')).length === 0 && (await scheduler.listAllocations({ app: 'cold', includeTerminal: true })).every((a) => ['complete', 'failed', 'lost'].includes(a.status)));
    // A real wake follows minutes of idleness: let the scale-down's own work finish first (the
    // driver serializes job changes, and a drain holds that lock until the process is gone; a no-op
    // scale of the warm app passes through the same lock).
    await scheduler.scale('warm', 'web', 1);
    await plane.reconcilers.whenIdle();
    await plane.routing.controller.whenIdle();
    const started = performance.now();
    const response = await get(plane.url + '/', 'cold.bench.test');
    const total = performance.now() - started;
    if (response.status !== 200) throw new Error(`wake ${i}: HTTP ${response.status} ${response.body}`);
    const { bootMs } = JSON.parse(response.body) as { bootMs: number };
    totals.push(total);
    boots.push(bootMs);
    overheads.push(total - bootMs);
  }
  console.log(`cold wake over ${wakes} wakes (health interval 10ms):`);
  console.log(`  first request to response: p50 ${percentile(totals, 50).toFixed(1)} ms; app boot-to-ready (shell exec to listening) p50 ${percentile(boots, 50).toFixed(1)} ms`);
  console.log(`  wake overhead (response minus boot-to-ready): p50 ${percentile(overheads, 50).toFixed(1)} ms, max ${Math.max(...overheads).toFixed(1)} ms (goal p50 < 50 ms); scale-ups ${plane.routing.gateway.stats.scaleUps}`);
} finally {
  // Close first, so no controller re-submits a job while the app processes are stopped.
  await closePlaneAndStopApps(plane, config);
  fs.rmSync(root, { recursive: true, force: true });
}
