/**
 * bench/operations: (1) durable operations enqueued, claimed and completed per second by the real
 * worker on a real control.db (synchronous FULL) with no-op handlers; (2) the platform's own
 * overhead in a deploy of a trivial app through the whole pipeline: the operation's wall time from
 * enqueue to completion minus its healthy step (the app's boot and first passing check).
 *
 * Run: node --import tsx bench/operations.ts [--operations N] [--apps N] [--deploys N]
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startControlPlane } from '../wiring/control-plane.js';
import { OperationHandlers, OperationWorker } from '../controllers/operations/index.js';
import { loadConfig } from '../platform/config.js';
import { silentLogger } from '../platform/logger.js';
import { openControlStore } from '../store/open-stores.js';
import { enqueueOperation } from '../store/control/operations/operations.js';
import { listSteps } from '../store/control/deployments.js';
import { closePlaneAndStopApps } from '../test/helpers/stop-apps.js';
import { removeAppUsersCreatedHere } from './lib/app-users.js';

function arg(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 ? Number(process.argv[index + 1]) : fallback;
}

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-operations-'));
// Apps run as their own users below it (ADR 0047): they must be able to enter it.
fs.chmodSync(root, 0o711);

async function throughput(count: number, apps: number): Promise<void> {
  const store = openControlStore(path.join(root, 'queue'));
  const handlers = new OperationHandlers().register('app.deploy', { run: async () => undefined });
  const worker = new OperationWorker({ db: store.db, handlers, logger: silentLogger(), concurrency: 16, pollMs: 1000 });
  const enqueueStart = performance.now();
  const ids: string[] = [];
  for (let i = 0; i < count; i += 1)
    ids.push(enqueueOperation(store.db, { kind: 'app.deploy', app: `app-${i % apps}` }).id);
  const enqueueSeconds = (performance.now() - enqueueStart) / 1000;
  const runStart = performance.now();
  let done = 0;
  const finished = new Promise<void>((resolve) =>
    worker.onFinished((op) => op.status === 'succeeded' && (done += 1) === count && resolve()),
  );
  worker.start();
  await finished;
  const runSeconds = (performance.now() - runStart) / 1000;
  await worker.stop();
  store.db.close();
  console.log(
    `enqueue: ${count} operations in ${enqueueSeconds.toFixed(2)} s = ${Math.round(count / enqueueSeconds)}/s`,
  );
  console.log(
    `claim + no-op run + complete: ${count} operations over ${apps} apps in ${runSeconds.toFixed(2)} s = ${Math.round(count / runSeconds)}/s (goal >= 2000/s)`,
  );
  console.log(`end to end (enqueue, claim, complete): ${Math.round(count / (enqueueSeconds + runSeconds))}/s`);
}

async function deployOverhead(deploys: number): Promise<void> {
  const appsDir = path.join(root, 'apps');
  fs.mkdirSync(path.join(appsDir, 'trivial'), { recursive: true });
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=b', '-c', 'user.email=b@example.test', ...args], {
      cwd: appsDir,
      stdio: 'ignore',
    });
  git('init', '-q', '-b', 'main');
  fs.writeFileSync(
    path.join(appsDir, 'trivial', 'infraspec.yaml'),
    'name: trivial\ndeploy: true\nprocesses:\n  web:\n    port: 8080\n    health:\n      path: /\n      interval: 50ms\n      timeout: 1s\n    resources:\n      memory: 64\n',
  );
  fs.writeFileSync(
    path.join(appsDir, 'trivial', 'Dockerfile'),
    'FROM node:20-alpine\nWORKDIR /app\nCOPY . .\nCMD ["node", "server.mjs"]\n',
  );
  const config = loadConfig({
    SVC_PORT: '0',
    SVC_POSTGRES_MANAGED: 'false',
    SVC_DATA_DIR: path.join(root, 'data'),
    SVC_APPS_DIR: appsDir,
    SVC_LOG_LEVEL: 'silent',
  });
  const plane = await startControlPlane(config, silentLogger());
  const rows: { total: number; healthy: number; steps: string }[] = [];
  try {
    for (let i = 0; i < deploys; i += 1) {
      // A new commit each time: a fresh clone, build and roll.
      fs.writeFileSync(
        path.join(appsDir, 'trivial', 'server.mjs'),
        `// ${i}\nimport http from 'node:http';\nhttp.createServer((q, r) => r.end('ok')).listen(Number(process.env.PORT), '127.0.0.1');\n`,
      );
      git('add', '-A');
      git('commit', '-q', '-m', `r${i}`);
      await plane.reconcilers.whenIdle();
      const started = performance.now();
      const queued = plane.deploys.deploys.deploy('trivial');
      const op = await plane.deploys.worker.waitFor(queued.operation.id, 60_000);
      const total = performance.now() - started;
      if (op.status !== 'succeeded') throw new Error(`deploy ${i} ${op.status}: ${op.lastError}`);
      const steps = listSteps(plane.db, queued.deploymentId);
      const ms = (s: { startedAt: string; endedAt: string | null }) =>
        Date.parse(s.endedAt ?? s.startedAt) - Date.parse(s.startedAt);
      const healthy = steps.filter((s) => s.step === 'healthy').reduce((sum, s) => sum + ms(s), 0);
      rows.push({ total, healthy, steps: steps.map((s) => `${s.step} ${ms(s)}ms`).join(', ') });
    }
  } finally {
    // Close first, so no controller re-submits a job while the app processes are stopped.
    await closePlaneAndStopApps(plane, config);
    // The app users this run created go with it (ADR 0191).
    await removeAppUsersCreatedHere();
  }
  const overheads = rows.map((r) => r.total - r.healthy).sort((a, b) => a - b);
  const median = (values: number[]) => values[Math.floor(values.length / 2)]!;
  console.log(
    `deploy of a trivial app (${deploys} deploys, each a new commit): median total ${Math.round(median(rows.map((r) => r.total).sort((a, b) => a - b)))} ms, median healthy step (app boot + first passing check) ${Math.round(median(rows.map((r) => r.healthy).sort((a, b) => a - b)))} ms`,
  );
  console.log(
    `platform overhead excluding the app's boot: median ${Math.round(median(overheads))} ms, max ${Math.round(overheads.at(-1)!)} ms (goal < 1000 ms)`,
  );
  console.log(`last deploy steps: ${rows.at(-1)?.steps}`);
}

await throughput(arg('operations', 5000), arg('apps', 200));
await deployOverhead(arg('deploys', 5));
fs.rmSync(root, { recursive: true, force: true });
