/**
 * bench/reconcile: 500 generated apps (each one worker process running a tiny built-in program)
 * reconciled by the real controllers against the local scheduler. Prints the latency from a
 * spec file edit to the scheduler update (p50, p99) and the time of one full resync pass.
 *
 * Run: node --import tsx bench/reconcile.ts [--apps N] [--edits N] [--prefix NAME]
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startControlPlane } from '../wiring/control-plane.js';
import { loadConfig } from '../platform/config.js';
import { silentLogger } from '../platform/logger.js';
import { ReleaseBuilder } from '../platform/release-builder/index.js';
import { listApps, setAppRelease } from '../store/control/apps.js';
import type { AllocationChange } from '../domain/scheduler/index.js';
import { arg, percentile } from './lib/bench-args.js';
import { closePlaneAndStopApps } from '../test/helpers/stop-apps.js';
import { prepareAppUsers } from './lib/app-users.js';

const appCount = arg('apps', 500);
const edits = arg('edits', 200);
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-reconcile-'));
// Apps run as their own users below it (ADR 0047): they must be able to enter it.
fs.chmodSync(root, 0o711);
const code = path.join(root, 'code');
fs.mkdirSync(code);
// The tiny built-in program: a shell that sleeps (a few hundred KB of RSS each).
fs.writeFileSync(
  path.join(code, 'Dockerfile'),
  'FROM debian:bookworm-slim\nWORKDIR /app\nCMD ["sh", "-c", "exec sleep 100000"]\n',
);
const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=b', '-c', 'user.email=b@example.test', ...args], { cwd, stdio: 'ignore' });
git(code, 'init', '-q', '-b', 'main');
git(code, 'add', '-A');
git(code, 'commit', '-q', '-m', 'bench');

const specText = (name: string, min: number) =>
  `name: ${name}\ndeploy: true\nprocesses:\n  worker:\n    scaling:\n      min: ${min}\n    resources:\n      memory: 32\n`;
const config = loadConfig({
  SVC_PORT: '0',
  SVC_POSTGRES_MANAGED: 'false',
  SVC_KNOWLEDGE_PORT: '0',
  SVC_KNOWLEDGE_ADMIN_PORT: '0',
  SVC_DATA_DIR: path.join(root, 'data'),
  SVC_APPS_DIR: path.join(root, 'apps'),
  SVC_LOG_LEVEL: 'silent',
});
// `--prefix`: another bench on this host (bench/backup) makes users of the same default names.
const prefixAt = process.argv.indexOf('--prefix');
const prefix = prefixAt >= 0 ? process.argv[prefixAt + 1]! : 'app';
const names = Array.from({ length: appCount }, (_, i) => `${prefix}-${String(i).padStart(4, '0')}`);
for (const name of names) {
  fs.mkdirSync(path.join(config.appsDir, name), { recursive: true });
  fs.writeFileSync(path.join(config.appsDir, name, 'infraspec.yaml'), specText(name, 1));
}

const release = await new ReleaseBuilder({ dataDir: config.dataDir, logger: silentLogger() }).build({
  app: 'bench',
  repoUrl: code,
  ref: 'main',
});
// First-time creation of the app users, timed on its own: "start to all running" assumes they
// exist, as they do on a running host (ADR 0190). The users this run created are removed at its end.
const users = await prepareAppUsers(names);
console.log(
  `app users: ${users.created.length} of ${appCount} created first (one useradd at a time) in ${users.seconds.toFixed(1)} s`,
);
const startedAt = performance.now();
const mark = (what: string) =>
  process.env.BENCH_MARKS && console.log(`mark ${what} ${process.hrtime.bigint() / 1000n}`);
mark('start');
const plane = await startControlPlane(config, silentLogger());
const scheduler = await plane.reconcilers.targets.get();
try {
  await plane.reconcilers.whenIdle();
  // The releases a deploy would record, in one transaction (one fsync, not 500).
  plane.db.transaction(() => {
    for (const app of listApps(plane.db))
      setAppRelease(plane.db, app.name, { commit: release.manifest.commit, dir: release.dir });
  })();
  for (const name of names) plane.reconcilers.appController.enqueue(name);
  await plane.reconcilers.whenIdle();
  const running = (await scheduler.listAllocations()).filter((a) => a.status === 'running').length;
  mark('converged');
  console.log(
    `apps: ${appCount}; allocations running after the first reconcile: ${running}; start to converged: ${((performance.now() - startedAt) / 1000).toFixed(1)} s`,
  );

  // Edit one spec at a time (scaling.min 1 <-> 2) and time the first scheduler change for that app.
  const latencies: number[] = [];
  const mins = new Map(names.map((n) => [n, 1]));
  for (let i = 0; i < edits; i += 1) {
    const name = names[(i * 7919) % names.length]!;
    const min = mins.get(name) === 1 ? 2 : 1;
    mins.set(name, min);
    const changed = new Promise<number>((resolve) => {
      const unsubscribe = scheduler.watch((change: AllocationChange) => {
        if (change.allocation.app === name) {
          unsubscribe();
          resolve(performance.now());
        }
      });
    });
    const t0 = performance.now();
    fs.writeFileSync(path.join(config.appsDir, name, 'infraspec.yaml'), specText(name, min));
    latencies.push((await changed) - t0);
    await plane.reconcilers.whenIdle();
  }
  mark('edits');
  latencies.sort((a, b) => a - b);
  console.log(
    `spec edit to scheduler update over ${edits} edits: p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms (includes the spec watcher's quiet period: 5 ms, up to 20 ms for a file written in steps)`,
  );

  // One full resync pass: every key of both controllers re-read and compared; nothing changes.
  const resyncStart = performance.now();
  await plane.reconcilers.specController.resync();
  await plane.reconcilers.whenIdle();
  await plane.reconcilers.appController.resync();
  await plane.reconcilers.whenIdle();
  mark('resync');
  console.log(`full resync pass over ${appCount} apps: ${((performance.now() - resyncStart) / 1000).toFixed(2)} s`);
} finally {
  // Close first, so no controller re-submits a job while the app processes are stopped.
  await closePlaneAndStopApps(plane, config);
  fs.rmSync(root, { recursive: true, force: true });
  const left = await users.remove();
  console.log(
    `app users this run created: ${users.created.length}, removed: ${users.created.length - left.length}${left.length > 0 ? `; left: ${left.join(', ')}` : ''}`,
  );
}
