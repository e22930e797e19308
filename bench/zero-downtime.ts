/**
 * bench/zero-downtime: requests dropped while the platform changes an app. The sample app
 * hello-web (fixtures/apps/hello-web, its own folder of an apps repository) is deployed, then
 * loaded through the wake gateway (Host hello.example.test) by 4 keep-alive and 4 new-connection
 * clients while the bench makes, one after the other: deploys of changed commits, committed spec
 * changes (GREETING), rollbacks and a canary deploy with automatic promotion. A request fails on
 * a non-2xx answer, a reset or no answer within 5 s.
 *
 * Prints (does not assert), per kind of change, the requests sent and failed (by outcome); p99
 * latency while changes happen beside the steady-state p99 (a quiet window before the changes);
 * the queue-to-success time of the deploys (p50, max); and the gap of a hostPort copy of the app,
 * which cannot overlap (failed requests straight to its host port during one deploy).
 *
 * Then one platform API restart through the host agent: a platform of real processes (`svc serve`
 * of a built tree of this checkout, the agent it launches) serves hello-web through its gateway
 * under the same load while `platform.upgrade` to a copy of that tree restarts the API (ADR 0159).
 * `--restart 0` leaves it out (it builds the tree first: about a minute).
 *
 * Run: node --import tsx bench/zero-downtime.ts [--deploys N] [--specs N] [--rollbacks N] [--steady S] [--restart 0|1]
 *   [--runtime auto|podman|native]
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { startControlPlane, type ControlPlane } from '../wiring/control-plane.js';
import { loadConfig } from '../platform/config.js';
import { silentLogger } from '../platform/logger.js';
import { getApp } from '../store/control/apps.js';
import { closePlaneAndStopApps } from '../test/helpers/stop-apps.js';
import { removeAppUsersCreatedHere } from './lib/app-users.js';
import { failures, latencyPercentile, startLoad, within, type LoadSample } from '../test/helpers/http-load.js';
import { arg, percentile } from './lib/bench-args.js';
import {
  builtTree,
  deployAndWait,
  queueLane,
  startLanePlatform,
  treeVariant,
  waitForLane,
  waitUntil,
} from '../test/platform-lane/lane-harness.js';

const deploys = arg('deploys', 10);
const specChanges = arg('specs', 10);
const rollbacks = arg('rollbacks', 2);
const steadySeconds = arg('steady', 3);
const platformRestarts = arg('restart', 1);
const runtimeAt = process.argv.indexOf('--runtime');
const runtime = runtimeAt >= 0 ? (process.argv[runtimeAt + 1] ?? '') : 'auto';
if (!['auto', 'podman', 'native'].includes(runtime)) throw new Error('--runtime must be auto, podman or native');

const repoRoot = path.resolve(import.meta.dirname, '..');
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-zd-'));
// Run as root, apps run as their own users: they must be able to enter (not list) this folder.
fs.chmodSync(root, 0o711);
const appsDir = path.join(root, 'apps');

function git(...args: string[]): void {
  execFileSync('git', ['-c', 'user.name=bench', '-c', 'user.email=bench@example.test', ...args], { cwd: appsDir });
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

// The sample app as a new user has it, and a copy of it with a hostPort.
fs.mkdirSync(appsDir, { recursive: true });
git('init', '-q', '-b', 'main');
const sample = path.join(repoRoot, 'fixtures/apps/hello-web');
fs.cpSync(sample, path.join(appsDir, 'hello-web'), { recursive: true });
const hostPort = await freePort();
fs.cpSync(sample, path.join(appsDir, 'hello-hp'), { recursive: true });
const hpSpec = path.join(appsDir, 'hello-hp', 'infraspec.yaml');
fs.writeFileSync(
  hpSpec,
  fs
    .readFileSync(hpSpec, 'utf8')
    .replace('name: hello-web', 'name: hello-hp')
    .replace('    port: 8080\n', `    port: 8080\n    hostPort: ${hostPort}\n`)
    .replace('hello.example.test', 'hp.example.test'),
);
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
  // `--runtime native` runs hello-web as host processes; the default is the platform's (containers
  // where podman answers, ADR 0219). The registry's base-image mirror is not needed here.
  SVC_CONTAINER_RUNTIME: runtime,
  SVC_REGISTRY_MIRROR: 'false',
});
const plane = await startControlPlane(config, silentLogger());
console.log(
  `hello-web runs ${runtime === 'native' ? 'as host processes' : 'in its image where podman answers'} (SVC_CONTAINER_RUNTIME=${runtime})`,
);

async function discovered(app: string): Promise<void> {
  while (!getApp(plane.db, app)?.spec)
    await new Promise<void>((resolve) => {
      const stop = plane.reconcilers.specController.onReconciled(() => (stop(), resolve()));
    });
}

/** Queues a deploy or rollback over HTTP, waits for it; returns its queue-to-success time in ms. */
async function operate(p: ControlPlane, app: string, action: 'deploy' | 'rollback'): Promise<number> {
  const response = await fetch(`${p.url}/api/apps/${app}/${action}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  });
  const body = (await response.json()) as { operation: { id: string } };
  if (response.status !== 202) throw new Error(`${action} ${app}: ${response.status} ${JSON.stringify(body)}`);
  const operation = await p.deploys.worker.waitFor(body.operation.id, 120_000);
  if (operation.status !== 'succeeded') throw new Error(`${action} ${app}: ${operation.status} ${operation.lastError}`);
  return Date.parse(operation.finishedAt ?? '') - Date.parse(operation.createdAt);
}

/** Waits until the app runs exactly one allocation not in `before`, running (a reconciled spec change). */
async function replaced(app: string, before: readonly string[]): Promise<void> {
  const scheduler = await plane.reconcilers.targets.get();
  for (;;) {
    const live = (await scheduler.listAllocations({ app })).filter((a) => a.desiredStatus === 'run');
    if (live.length === 1 && !before.includes(live[0]!.id) && live[0]!.status === 'running') return;
    await new Promise<void>((resolve) => {
      const stop = scheduler.watch(() => (stop(), resolve()));
    });
  }
}

async function liveIds(app: string): Promise<string[]> {
  const scheduler = await plane.reconcilers.targets.get();
  return (await scheduler.listAllocations({ app })).filter((a) => a.desiredStatus === 'run').map((a) => a.id);
}

/**
 * One platform API restart through the host agent under load, on a platform of real processes;
 * returns the samples of the restart's window and of a steady window before it.
 */
async function platformRestart(): Promise<{ during: LoadSample[]; steady: LoadSample[]; stepMs: number }> {
  const teardowns: (() => Promise<void> | void)[] = [];
  const t = { teardown: (fn: () => Promise<void> | void) => void teardowns.push(fn) };
  try {
    const tree = await builtTree();
    const lane = await startLanePlatform(t, tree);
    fs.cpSync(sample, path.join(lane.appsDir, 'hello-web'), { recursive: true });
    execFileSync('git', ['-c', 'user.name=bench', '-c', 'user.email=bench@example.test', 'add', '-A'], {
      cwd: lane.appsDir,
    });
    execFileSync('git', ['-c', 'user.name=bench', '-c', 'user.email=bench@example.test', 'commit', '-qm', 'hello'], {
      cwd: lane.appsDir,
    });
    await waitUntil(
      async () => (await deployAndWait(lane, 'hello-web').catch(() => undefined))?.status === 'succeeded',
      60_000,
      'hello-web to deploy on the platform of processes',
      500,
    );
    const load = startLoad({ url: lane.url, host: 'hello.example.test' });
    const steadyFrom = performance.now();
    await new Promise((resolve) => setTimeout(resolve, steadySeconds * 1000));
    const steadyTo = performance.now();
    const next = treeVariant(t as never, tree, '0.1.9-bench-restart');
    const id = await queueLane(lane, 'upgrade', { source: next });
    const view = await waitForLane(lane, id);
    if (view.operation.status !== 'succeeded') throw new Error(`platform upgrade ${view.operation.status}`);
    // The step's times, in the REST answer's spelling (snake_case) or the record's.
    const restart = (view.steps as Record<string, string | undefined>[]).find((s) => s.step === 'restart');
    const startedAt = restart?.started_at ?? restart?.startedAt;
    const endedAt = restart?.ended_at ?? restart?.endedAt;
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const samples = await load.stop();
    return {
      during: within(samples, steadyTo, performance.now()),
      steady: within(samples, steadyFrom, steadyTo),
      stepMs: startedAt && endedAt ? Date.parse(endedAt) - Date.parse(startedAt) : NaN,
    };
  } finally {
    for (const fn of teardowns.reverse()) await fn();
  }
}

const windows: { kind: string; fromMs: number; toMs: number }[] = [];
async function change(kind: string, fn: () => Promise<void>): Promise<void> {
  const fromMs = performance.now();
  await fn();
  // Requests started during the change, and the drain right after it, count for it.
  await new Promise((resolve) => setTimeout(resolve, 600));
  windows.push({ kind, fromMs, toMs: performance.now() });
}

try {
  await discovered('hello-web');
  await discovered('hello-hp');
  await operate(plane, 'hello-web', 'deploy');
  await operate(plane, 'hello-hp', 'deploy');

  const load = startLoad({ url: plane.url, host: 'hello.example.test' });
  const steadyFrom = performance.now();
  await new Promise((resolve) => setTimeout(resolve, steadySeconds * 1000));
  const steadyTo = performance.now();

  const deployTimes: number[] = [];
  const spec = path.join(appsDir, 'hello-web', 'infraspec.yaml');
  for (let i = 1; i <= deploys; i += 1) {
    await change('deploy', async () => {
      fs.writeFileSync(path.join(appsDir, 'hello-web', 'BUILD'), `build ${i}\n`);
      git('add', '-A');
      git('commit', '-q', '-m', `hello-web build ${i}`);
      deployTimes.push(await operate(plane, 'hello-web', 'deploy'));
    });
  }
  for (let i = 1; i <= specChanges; i += 1) {
    await change('spec change', async () => {
      const before = await liveIds('hello-web');
      fs.writeFileSync(
        spec,
        fs.readFileSync(spec, 'utf8').replace(/GREETING: .*/, `GREETING: Hello from svc, change ${i}`),
      );
      git('commit', '-qam', `hello-web greeting ${i}`);
      await replaced('hello-web', before);
    });
  }
  for (let i = 1; i <= rollbacks; i += 1) {
    await change('rollback', async () => {
      await operate(plane, 'hello-web', 'rollback');
    });
  }
  await change('canary promotion', async () => {
    fs.writeFileSync(
      spec,
      fs
        .readFileSync(spec, 'utf8')
        .replace('    resources:\n', '    canary:\n      count: 1\n      evaluateAfter: 1s\n    resources:\n'),
    );
    fs.writeFileSync(path.join(appsDir, 'hello-web', 'BUILD'), 'canary build\n');
    git('commit', '-qam', 'hello-web canary');
    await operate(plane, 'hello-web', 'deploy');
  });
  const samples = await load.stop();

  // hostPort: straight to the port (the gateway would hold requests until the new process passes).
  const hp = startLoad({ url: `http://127.0.0.1:${hostPort}/`, host: 'hp.example.test' });
  await new Promise((resolve) => setTimeout(resolve, 500));
  fs.writeFileSync(path.join(appsDir, 'hello-hp', 'BUILD'), 'build 2\n');
  git('add', '-A');
  git('commit', '-q', '-m', 'hello-hp build 2');
  await operate(plane, 'hello-hp', 'deploy');
  await new Promise((resolve) => setTimeout(resolve, 500));
  const hpSamples = await hp.stop();
  const hpFailed = hpSamples.filter((s) => !s.ok);
  const gapMs =
    hpFailed.length === 0 ? 0 : Math.max(...hpFailed.map((s) => s.endMs)) - Math.min(...hpFailed.map((s) => s.startMs));

  // The in-process plane is done with: the platform of processes runs alone.
  const restart = platformRestarts > 0 ? await platformRestart() : undefined;

  const [load1] = os.loadavg();
  console.log(`load average at the end: ${load1!.toFixed(2)} (${os.cpus().length} cores)`);
  console.log('kind              changes  requests  failed  by outcome');
  const inChange = new Set<LoadSample>();
  for (const kind of ['deploy', 'spec change', 'rollback', 'canary promotion']) {
    const mine = windows.filter((w) => w.kind === kind);
    const picked = mine.flatMap((w) => within(samples, w.fromMs, w.toMs));
    for (const s of picked) inChange.add(s);
    const failed = failures(picked);
    const count = Object.values(failed).reduce((a, b) => a + b, 0);
    console.log(
      `${kind.padEnd(17)} ${String(mine.length).padStart(7)}  ${String(picked.length).padStart(8)}  ${String(count).padStart(6)}  ${JSON.stringify(failed)}`,
    );
  }
  if (restart) {
    const failed = failures(restart.during);
    const count = Object.values(failed).reduce((a, b) => a + b, 0);
    console.log(
      `${'platform restart'.padEnd(17)} ${String(1).padStart(7)}  ${String(restart.during.length).padStart(8)}  ${String(count).padStart(6)}  ${JSON.stringify(failed)}`,
    );
  }
  const steady = within(samples, steadyFrom, steadyTo);
  console.log(
    `p99 latency: steady ${latencyPercentile(steady, 99).toFixed(1)} ms (${steady.length} requests), during changes ${latencyPercentile([...inChange], 99).toFixed(1)} ms (${inChange.size} requests); all failed: ${JSON.stringify(failures(samples))}`,
  );
  if (restart)
    console.log(
      `platform restart (processes): p99 steady ${latencyPercentile(restart.steady, 99).toFixed(1)} ms, during the upgrade ${latencyPercentile(restart.during, 99).toFixed(1)} ms, max ${latencyPercentile(restart.during, 100).toFixed(0)} ms (requests held in the backlog while no API runs); restart step ${restart.stepMs.toFixed(0)} ms`,
    );
  console.log(
    `hello-web deploy queue-to-success: p50 ${percentile(deployTimes, 50).toFixed(0)} ms, max ${Math.max(...deployTimes).toFixed(0)} ms (${deployTimes.length} deploys; goal p50 < 1500 ms)`,
  );
  console.log(
    `hostPort copy (cannot overlap): ${hpFailed.length} of ${hpSamples.length} direct requests failed over a gap of ${gapMs.toFixed(0)} ms (goal < 200 ms) ${JSON.stringify(failures(hpSamples))}`,
  );
} finally {
  await closePlaneAndStopApps(plane, config);
  // The app users this run created go with it (ADR 0191).
  await removeAppUsersCreatedHere();
  fs.rmSync(root, { recursive: true, force: true });
}
