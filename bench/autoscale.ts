/**
 * bench/autoscale: a load ramp on a CPU-bound sample app (each request spins the CPU for
 * `--burn` ms; the app of test/scaling/autoscale-app.ts), through the wake gateway.
 *
 * Two copies of the app run side by side, loaded one after the other with the same ramp (1, 2, 4,
 * then 8 keep-alive clients, `--step` seconds each):
 * - `burn-auto`: `scaling.min 1`, `max --max`, `auto: cpu` with target `--target` (% of a core);
 * - `burn-fixed`: a fixed count of `--max` allocations (what `max` would cost without autoscaling).
 *
 * Prints, for the autoscaled app: the time from the ramp's start to the first scale-out and to
 * `max` allocations passing, the time from the end of the load to the count back at `min`, and the
 * p99 latency during the ramp; for the fixed app, the p99 latency of the same ramp. The autoscaler
 * runs every `--interval` ms with a `--window` s stabilization window (the defaults of a
 * platform are 15 s and 5 min; the bench shortens them so the run takes about a minute).
 *
 * Run: node --import tsx bench/autoscale.ts [--step S] [--burn MS] [--max N] [--target PCT] [--interval MS] [--window S]
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startControlPlane, type ControlPlane } from '../wiring/control-plane.js';
import { instanceStatus } from '../domain/registry/index.js';
import { loadConfig } from '../platform/config.js';
import { silentLogger } from '../platform/logger.js';
import { getApp } from '../store/control/apps.js';
import { closePlaneAndStopApps } from '../test/helpers/stop-apps.js';
import { failures, latencyPercentile, startLoad, type LoadSample } from '../test/helpers/http-load.js';
import { AUTOSCALE_APP_SERVER, autoscaledSpec } from '../test/scaling/autoscale-app.js';
import { arg } from './lib/bench-args.js';

const stepSeconds = arg('step', 4);
const burnMs = arg('burn', 20);
const max = arg('max', 4);
const target = arg('target', 50);
const intervalMs = arg('interval', 1000);
const windowSeconds = arg('window', 10);
const RAMP = [1, 2, 4, 8];

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-autoscale-'));
// Run as root, apps run as their own users: they must be able to enter (not list) this folder.
fs.chmodSync(root, 0o711);
const appsDir = path.join(root, 'apps');

function git(...args: string[]): void {
  execFileSync('git', ['-c', 'user.name=bench', '-c', 'user.email=bench@example.test', ...args], { cwd: appsDir });
}

const apps = [
  { name: 'burn-auto', hostname: 'burn-auto.example.test', fixed: false },
  { name: 'burn-fixed', hostname: 'burn-fixed.example.test', fixed: true },
];
fs.mkdirSync(appsDir, { recursive: true });
git('init', '-q', '-b', 'main');
for (const app of apps) {
  const dir = path.join(appsDir, app.name);
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, 'server.mjs'), AUTOSCALE_APP_SERVER);
  fs.writeFileSync(
    path.join(dir, 'Dockerfile'),
    'FROM node:20-bookworm-slim\nWORKDIR /app\nCOPY . .\nCMD ["node", "server.mjs"]\n',
  );
  fs.writeFileSync(
    path.join(dir, 'infraspec.yaml'),
    autoscaledSpec({
      name: app.name,
      hostname: app.hostname,
      metric: 'cpu',
      target,
      min: app.fixed ? max : 1,
      max,
      fixed: app.fixed,
    }),
  );
}
git('add', '-A');
git('commit', '-q', '-m', 'sample apps');

const config = loadConfig({
  SVC_PORT: '0',
  SVC_POSTGRES_MANAGED: 'false',
  SVC_KNOWLEDGE_PORT: '0',
  SVC_KNOWLEDGE_ADMIN_PORT: '0',
  SVC_DATA_DIR: path.join(root, 'data'),
  SVC_APPS_DIR: appsDir,
  SVC_LOG_LEVEL: 'silent',
  SVC_AUTOSCALE_INTERVAL: `${intervalMs}ms`,
  SVC_AUTOSCALE_WINDOW: `${windowSeconds}s`,
});
const plane = await startControlPlane(config, silentLogger());

async function discovered(app: string): Promise<void> {
  while (!getApp(plane.db, app)?.spec)
    await new Promise<void>((resolve) => {
      const stop = plane.reconcilers.specController.onReconciled(() => (stop(), resolve()));
    });
}

async function deploy(p: ControlPlane, app: string): Promise<void> {
  const response = await fetch(`${p.url}/api/apps/${app}/deploy`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  });
  const body = (await response.json()) as { operation: { id: string } };
  if (response.status !== 202) throw new Error(`deploy ${app}: ${response.status} ${JSON.stringify(body)}`);
  const operation = await p.deploys.worker.waitFor(body.operation.id, 120_000);
  if (operation.status !== 'succeeded') throw new Error(`deploy ${app}: ${operation.status} ${operation.lastError}`);
}

/** Desired count and passing instances of `<app>/web` now. */
async function counts(app: string): Promise<{ desired: number; passing: number }> {
  const scheduler = await plane.reconcilers.targets.get();
  const job = (await scheduler.listJobs({ app })).find((j) => j.status === 'running');
  const instances = await plane.reconcilers.registry.instances(`${app}-web`);
  return {
    desired: job?.spec.taskGroups.find((g) => g.name === 'web')?.count ?? 0,
    passing: instances.filter((i) => instanceStatus(i) === 'passing').length,
  };
}

/** Resolves when `check` holds on the app's counts (re-read on every scheduler or registry change); the time it held, in ms since `fromMs`. */
async function when(
  app: string,
  check: (c: { desired: number; passing: number }) => boolean,
  fromMs: number,
  timeoutMs: number,
): Promise<number | undefined> {
  const scheduler = await plane.reconcilers.targets.get();
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    if (check(await counts(app))) return performance.now() - fromMs;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, Math.max(0, deadline - performance.now()));
      const stops = [scheduler.watch(done), plane.reconcilers.registry.watch(done)];
      function done(): void {
        clearTimeout(timer);
        for (const stop of stops) stop();
        resolve();
      }
    });
  }
  return undefined;
}

/** The ramp on one app: returns its samples; `onStart` sees the ramp's start time. */
async function ramp(hostname: string, path: string, onStart: (ms: number) => void): Promise<LoadSample[]> {
  const samples: LoadSample[] = [];
  const started = performance.now();
  onStart(started);
  for (const clients of RAMP) {
    const load = startLoad({
      url: `${plane.url}${path}`,
      host: hostname,
      keepAliveClients: clients,
      newConnectionClients: 0,
      timeoutMs: 30_000,
    });
    await new Promise((resolve) => setTimeout(resolve, stepSeconds * 1000));
    samples.push(...(await load.stop()));
  }
  return samples;
}

const fmt = (ms: number | undefined): string => (ms === undefined ? 'never' : `${(ms / 1000).toFixed(1)} s`);

try {
  for (const app of apps) await discovered(app.name);
  for (const app of apps) await deploy(plane, app.name);
  await when('burn-fixed', (c) => c.passing === max, performance.now(), 60_000);
  const burn = `/burn?ms=${burnMs}`;

  // Autoscaled: ramp, watching for the first scale-out and for max passing while it runs.
  const rampMs = RAMP.length * stepSeconds * 1000;
  let outFirst: Promise<number | undefined> = Promise.resolve(undefined);
  let outMax: Promise<number | undefined> = Promise.resolve(undefined);
  const autoSamples = await ramp('burn-auto.example.test', burn, (start) => {
    outFirst = when('burn-auto', (c) => c.desired > 1, start, rampMs);
    outMax = when('burn-auto', (c) => c.passing >= max, start, rampMs);
  });
  const loadEnd = performance.now();
  const [firstOut, atMax] = [await outFirst, await outMax];
  const peak = plane.autoscaler.lastChange('burn-auto', 'web');
  // Scale-in is timed from the end of the load (the watch above ended with the ramp).
  const backToMin =
    (await counts('burn-auto')).desired > 1
      ? await when('burn-auto', (c) => c.desired === 1, loadEnd, windowSeconds * 1000 * 4 + 30_000)
      : undefined;

  // Fixed at max: the same ramp.
  const fixedSamples = await ramp('burn-fixed.example.test', burn, () => undefined);

  const [load1] = os.loadavg();
  console.log(`load average at the end: ${load1!.toFixed(2)} (${os.cpus().length} cores)`);
  console.log(
    `ramp: ${RAMP.join(', ')} keep-alive clients, ${stepSeconds} s each; each request burns ${burnMs} ms of CPU; autoscaler every ${intervalMs} ms, window ${windowSeconds} s, cpu target ${target} %`,
  );
  console.log(
    'app                  requests  failed  p50 ms  p99 ms  scale-out (first / max)  scale-in after the load',
  );
  const row = (name: string, samples: LoadSample[], out: string, back: string): void => {
    const failed = Object.values(failures(samples)).reduce((a, b) => a + b, 0);
    console.log(
      `${name.padEnd(20)} ${String(samples.length).padStart(8)}  ${String(failed).padStart(6)}  ${latencyPercentile(samples, 50).toFixed(1).padStart(6)}  ${latencyPercentile(samples, 99).toFixed(1).padStart(6)}  ${out.padEnd(23)}  ${back}`,
    );
  };
  row(
    `burn-auto (1..${max})`,
    autoSamples,
    `${fmt(firstOut)} / ${fmt(atMax)}`,
    firstOut === undefined ? '- (never scaled out)' : `${fmt(backToMin)} to 1`,
  );
  row(`burn-fixed (${max})`, fixedSamples, '-', '-');
  if (peak)
    console.log(
      `last decision of burn-auto during the ramp: ${peak.from} -> ${peak.to} (${peak.source}): ${peak.reason}`,
    );
} finally {
  await closePlaneAndStopApps(plane, config);
  fs.rmSync(root, { recursive: true, force: true });
}
