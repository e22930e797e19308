/**
 * bench/metrics-scrape: a control plane with 500 generated apps (each a web process with a port
 * and health check, a worker, and on every third app two buckets), 5 recorded deploys per app
 * (succeeded, failed, rolled back) and some events; prints p50/p99 of `GET /metrics` over HTTP
 * beside two baselines measured in the same process: `GET /api/health` on the same server (the
 * HTTP and middleware floor) and a bare prom-client registry holding the same number of series,
 * serialized without our collectors. The apps are discovered but not running (no release), so
 * every service reads `none`; running processes add registry lookups, not series.
 *
 * Run: node --import tsx bench/metrics-scrape.ts [--apps N] [--deploys N] [--scrapes N]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import http from 'node:http';
import { Gauge, Registry } from 'prom-client';
import { startControlPlane } from '../wiring/control-plane.js';
import { loadConfig } from '../platform/config.js';
import { silentLogger } from '../platform/logger.js';
import { createDeployment, newDeploymentIds, updateDeployment } from '../store/control/deployments.js';
import { listApps } from '../store/control/apps.js';
import { arg, percentile } from './lib/bench-args.js';

const appCount = arg('apps', 500);
const deploysPerApp = arg('deploys', 5);
const scrapes = arg('scrapes', 300);
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-metrics-'));
const config = loadConfig({
  SVC_PORT: '0',
  SVC_POSTGRES_MANAGED: 'false',
  SVC_KNOWLEDGE_PORT: '0',
  SVC_KNOWLEDGE_ADMIN_PORT: '0',
  SVC_DATA_DIR: path.join(root, 'data'),
  SVC_APPS_DIR: path.join(root, 'apps'),
  SVC_LOG_LEVEL: 'silent',
  SVC_CAPACITY_CHECK_INTERVAL: 'off',
});

const specText = (name: string, i: number) =>
  [
    `name: ${name}`,
    'deploy: true',
    'processes:',
    '  web:',
    '    port: 8080',
    '    health: { path: /healthz }',
    '    metrics: { enabled: true }',
    '    resources: { memory: 64 }',
    '  worker:',
    '    command: node worker.mjs',
    '    resources: { memory: 32 }',
    ...(i % 3 === 0
      ? [
          'infrastructure:',
          '  objectStorage:',
          '    provider: minio',
          '    buckets:',
          `      - name: ${name}-uploads`,
          `      - name: ${name}-exports`,
        ]
      : []),
    '',
  ].join('\n');
const names = Array.from({ length: appCount }, (_, i) => `app-${String(i).padStart(4, '0')}`);
fs.mkdirSync(config.appsDir, { recursive: true });
names.forEach((name, i) => {
  fs.mkdirSync(path.join(config.appsDir, name));
  fs.writeFileSync(path.join(config.appsDir, name, 'infraspec.yaml'), specText(name, i));
});
execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: config.appsDir });

/** One GET on a fresh connection (no keep-alive reuse races with a busy event loop); body length and status. */
function get(url: string): Promise<{ status: number; length: number }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent: false }, (res) => {
        let length = 0;
        res.on('data', (chunk: Buffer) => (length += chunk.length));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, length }));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

/** Wall-clock p50 and p99 of `count` GETs of `url` after 20 warm-up requests, and the CPU time this process spent per GET (client and server), milliseconds. */
async function timeGets(
  url: string,
  count: number,
): Promise<{ p50: number; p99: number; cpuP50: number; cpuP99: number; bytes: number }> {
  let bytes = 0;
  for (let i = 0; i < 20; i++) await get(url);
  const times: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < count; i++) {
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    const response = await get(url);
    const used = process.cpuUsage(c0);
    times.push(performance.now() - t0);
    cpu.push((used.user + used.system) / 1000);
    if (response.status !== 200) throw new Error(`${url} answered ${response.status}`);
    bytes = response.length;
  }
  return {
    p50: percentile(times, 50),
    p99: percentile(times, 99),
    cpuP50: percentile(cpu, 50),
    cpuP99: percentile(cpu, 99),
    bytes,
  };
}

/** Records `deploysPerApp` finished deploys per app through the real store, before the plane that serves them starts (they are history). */
async function recordHistory(): Promise<void> {
  const plane = await startControlPlane(config, silentLogger());
  try {
    await plane.reconcilers.whenIdle();
    const statuses = ['succeeded', 'succeeded', 'failed', 'succeeded', 'rolled_back'] as const;
    const base = Date.now() - 24 * 3600_000;
    plane.db.transaction(() => {
      names.forEach((app, a) => {
        for (let d = 0; d < deploysPerApp; d++) {
          const at = base + (a * deploysPerApp + d) * 1000;
          const ids = newDeploymentIds();
          createDeployment(
            plane.db,
            { ...ids, operationId: null, app, kind: 'deploy', ref: 'main', trigger: 'api', regions: ['local'] },
            new Date(at),
          );
          updateDeployment(plane.db, ids.id, { status: 'running', started: true }, new Date(at + 100));
          updateDeployment(
            plane.db,
            ids.id,
            { status: statuses[d % statuses.length]!, finished: true },
            new Date(at + 100 + 5000 + (d % 7) * 1000),
          );
        }
      });
    })();
  } finally {
    await plane.close();
  }
}

await recordHistory();
const plane = await startControlPlane(config, silentLogger());
try {
  await plane.reconcilers.whenIdle();
  const discovered = listApps(plane.db).filter((a) => a.spec !== null).length;
  for (let i = 0; i < 200; i++)
    await plane.events.emit({
      type: i % 2 ? 'deploy.succeeded' : 'service.health.warning',
      severity: i % 2 ? 'info' : 'warning',
      app: names[i % names.length]!,
      title: 'bench',
      dedupeKey: `bench-${i}`,
    });
  for (let i = 0; i < 300; i++) await get(`${plane.url}/api/apps/${i % 3 === 0 ? 'nope' : names[i % names.length]}`);

  const metrics = await timeGets(`${plane.url}/metrics`, scrapes);
  const text = (await plane.metrics.text()).body;
  const series = text.split('\n').filter((line) => line !== '' && !line.startsWith('#')).length;
  const health = await timeGets(`${plane.url}/api/health`, scrapes);

  // Baseline: the same number of series in a bare registry (20 gauges), serialized in process.
  const bare = new Registry();
  const perGauge = Math.ceil(series / 20);
  for (let g = 0; g < 20; g++) {
    const gauge = new Gauge({
      name: `bench_gauge_${g}`,
      help: 'bench',
      labelNames: ['app', 'process', 'status'],
      registers: [bare],
    });
    for (let s = 0; s < perGauge; s++)
      gauge.set({ app: names[s % names.length]!, process: `p${Math.floor(s / names.length)}`, status: 'passing' }, s);
  }
  const bareTimes: number[] = [];
  const bareCpu: number[] = [];
  for (let i = 0; i < scrapes; i++) {
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    await bare.metrics();
    const used = process.cpuUsage(c0);
    bareTimes.push(performance.now() - t0);
    bareCpu.push((used.user + used.system) / 1000);
  }

  const load = os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  console.log(
    `apps: ${discovered} discovered (${appCount} generated, ${appCount * 2} services), deployments: ${appCount * deploysPerApp}, events: 200; exposition: ${series} series, ${(metrics.bytes / 1024).toFixed(0)} KiB`,
  );
  console.log(
    `GET /metrics over HTTP, ${scrapes} scrapes: p50 ${metrics.p50.toFixed(1)} ms, p99 ${metrics.p99.toFixed(1)} ms (target p99 < 50 ms); CPU per scrape p50 ${metrics.cpuP50.toFixed(1)} ms, p99 ${metrics.cpuP99.toFixed(1)} ms`,
  );
  console.log(
    `baseline GET /api/health on the same server: p50 ${health.p50.toFixed(1)} ms, p99 ${health.p99.toFixed(1)} ms; CPU p50 ${health.cpuP50.toFixed(1)} ms`,
  );
  console.log(
    `baseline bare prom-client registry, ${perGauge * 20} series serialized in process: p50 ${percentile(bareTimes, 50).toFixed(1)} ms, p99 ${percentile(bareTimes, 99).toFixed(1)} ms; CPU p50 ${percentile(bareCpu, 50).toFixed(1)} ms, p99 ${percentile(bareCpu, 99).toFixed(1)} ms`,
  );
  console.log(`machine: ${os.cpus().length} cores, load average ${load} (1, 5, 15 min)`);
} finally {
  await plane.close();
  fs.rmSync(root, { recursive: true, force: true });
}
