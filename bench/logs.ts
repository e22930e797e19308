/**
 * App log capture benchmark (issue 28, docs/adr/0165), each figure beside its baseline:
 * - capture overhead: an app paced at 20,000 lines/s for 4 s run by the local driver with capture
 *   into logs.db, beside the same app writing to a plain file with nothing reading it (goal: < 10 %
 *   throughput loss);
 * - follow latency: the app's write to a follower of the log service (goal p99 < 100 ms);
 * - text search over 1,000,000 stored lines (goal p50 < 300 ms) beside `grep -c` over the same text
 *   in a plain file.
 * The corpus is synthetic (request lines with paths, statuses, ids): no real app log set is in ../shared/data.
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LogService } from '../controllers/logs/log-service.js';
import type { CapturedLine, LogLine } from '../domain/logs/index.js';
import { milliseconds } from '../domain/scheduler/index.js';
import { LocalRegistry } from '../platform/local-registry/index.js';
import { LocalScheduler } from '../platform/local-scheduler/index.js';
import { silentLogger } from '../platform/logger.js';
import { LogStore } from '../store/logs/log-store.js';

const RATE = 20_000;
const SECONDS = 4;
/** Paced writer: RATE lines/s in 1 ms ticks for SECONDS; prints its achieved rate on fd 3 (a file). */
const PACED = `
const fs = require('node:fs');
const rate = ${RATE}, seconds = ${SECONDS};
const start = Date.now(); let written = 0;
const out = process.env.OUT_FILE ? fs.openSync(process.env.OUT_FILE, 'a') : 1;
function tick() {
  const due = Math.min(rate * seconds, Math.floor(((Date.now() - start) / 1000) * rate));
  let chunk = '';
  while (written < due) { written++; chunk += Date.now() + ' GET /api/orders/' + written + ' 200 ' + (written % 97) + 'ms user=' + (written * 2654435761 >>> 0).toString(16) + '\\n'; }
  if (chunk) fs.writeSync(out, chunk);
  if (written < rate * seconds) setImmediate(tick);
  else { fs.writeFileSync(process.env.REPORT, String(written / ((Date.now() - start) / 1000))); process.exit(0); }
}
tick();
`;
/** Follow probe: a line with its write time every 10 ms, 300 lines. */
const PROBE = `
let n = 0;
const timer = setInterval(() => { console.log('probe ' + Date.now()); if (++n >= 300) { clearInterval(timer); setTimeout(() => process.exit(0), 200); } }, 10);
`;

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-logs-'));
const appDir = path.join(root, 'app');
fs.mkdirSync(appDir);
// Run as root, the driver runs apps as their own users: they must read the app and write reports.
fs.chmodSync(root, 0o755);
fs.chmodSync(appDir, 0o777);
fs.writeFileSync(path.join(appDir, 'paced.cjs'), PACED);
fs.writeFileSync(path.join(appDir, 'probe.cjs'), PROBE);
for (const file of ['paced.cjs', 'probe.cjs']) fs.chmodSync(path.join(appDir, file), 0o644);

async function plainFileRate(): Promise<number> {
  const report = path.join(root, 'plain-report');
  await new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(appDir, 'paced.cjs')], {
      env: { ...process.env, OUT_FILE: path.join(root, 'plain.log'), REPORT: report },
      stdio: 'ignore',
    });
    child.once('exit', () => resolve());
    child.once('error', reject);
  });
  return Number(fs.readFileSync(report, 'utf8'));
}

async function main(): Promise<void> {
  // The driver's children and timers do not hold the event loop (apps outlive the platform).
  const keepAlive = setInterval(() => undefined, 1000);
  const store = new LogStore({ file: path.join(root, 'logs.db'), maxBytesPerApp: 1 << 30, maxAgeMs: 86_400_000 });
  const logs = new LogService({ store, appExists: () => true, logger: silentLogger() });
  const driver = await LocalScheduler.open({
    dataDir: path.join(root, 'data'),
    registry: new LocalRegistry(),
    logs,
    monitorInterval: milliseconds(250),
  });
  const job = (id: string, file: string, env: Record<string, string> = {}) => ({
    id,
    app: id,
    type: 'batch' as const,
    taskGroups: [
      {
        name: 'main',
        count: 1,
        task: {
          name: 'main',
          command: [process.execPath, file],
          workdir: appDir,
          env,
          resources: { cpuMhz: 100, memoryMb: 512 },
        },
        ports: [],
        services: [],
        drain: { signal: 'SIGTERM' as NodeJS.Signals, timeout: milliseconds(2000) },
      },
    ],
  });

  // 1. Capture overhead.
  const baseline = await plainFileRate();
  const report = path.join(appDir, 'captured-report');
  const stored = new Promise<number>((resolve) => {
    let count = 0;
    const stop = logs.follow({ app: 'paced' }, 0, (lines) => {
      count += lines.length;
      if (count >= RATE * SECONDS) {
        stop();
        resolve(Date.now());
      }
    });
  });
  await driver.submitJob(job('paced', 'paced.cjs', { REPORT: report }));
  const capturedAt = await stored;
  const captured = Number(fs.readFileSync(report, 'utf8'));
  const lag = capturedAt - fs.statSync(report).mtimeMs;
  const loss = ((baseline - captured) / baseline) * 100;
  console.log(
    `capture overhead at ${RATE} lines/s for ${SECONDS}s: plain file ${baseline.toFixed(0)} lines/s, captured ${captured.toFixed(0)} lines/s: loss ${loss.toFixed(1)} % (goal < 10 %); last line stored ${lag.toFixed(0)} ms after the app finished`,
  );

  // 2. Follow latency.
  const latencies: number[] = [];
  await new Promise<void>((resolve) => {
    const stop = logs.follow({ app: 'probe' }, 0, (lines: readonly LogLine[]) => {
      const now = Date.now();
      for (const line of lines) latencies.push(now - Number(line.line.split(' ')[1]));
      if (latencies.length >= 300) {
        stop();
        resolve();
      }
    });
    void driver.submitJob(job('probe', 'probe.cjs'));
  });
  console.log(
    `follow latency write -> follower (300 lines): p50 ${percentile(latencies, 50)} ms, p99 ${percentile(latencies, 99)} ms, max ${Math.max(...latencies)} ms (goal p99 < 100 ms)`,
  );
  for (const j of await driver.listJobs()) await driver.stopJob(j.spec.id, { purge: true });
  await driver.close();

  // 3. Text search over 1,000,000 stored lines, beside grep -c over the same text.
  const paths = ['/api/orders', '/api/users', '/healthz', '/', '/api/cart', '/login'];
  const statuses = [200, 200, 200, 201, 304, 404, 500];
  const text: string[] = [];
  const t0 = Date.now();
  for (let batch = 0; batch < 100; batch++) {
    const lines: CapturedLine[] = [];
    for (let i = 0; i < 10_000; i++) {
      const n = batch * 10_000 + i;
      const line = `{"msg":"request","method":"GET","path":"${paths[n % 6]}","status":${statuses[n % 7]},"ms":${n % 211},"user":"u${(n * 2654435761) >>> 0}"${n % 5000 === 17 ? ',"error":"payment declined by issuer"' : ''}}`;
      lines.push({ at: Date.now(), app: 'big', process: 'web', allocation: 'a', release: 'r', stream: 'stdout', line });
      text.push(line);
    }
    store.append(lines, []);
  }
  const insertMs = Date.now() - t0;
  const t1 = Date.now();
  while (store.indexStep(10_000));
  const indexMs = Date.now() - t1;
  const plain = path.join(root, 'big.log');
  fs.writeFileSync(plain, text.join('\n') + '\n');
  const queries = ['payment declined', 'status":500', 'u12345', '/api/cart'];
  for (const grep of queries) {
    const times: number[] = [];
    let found = 0;
    for (let i = 0; i < 7; i++) {
      const start = process.hrtime.bigint();
      found = store.query({ app: 'big', grep, limit: 200 }).length;
      times.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
    const grepTimes: number[] = [];
    let grepCount = '';
    for (let i = 0; i < 5; i++) {
      const start = process.hrtime.bigint();
      try {
        grepCount = execFileSync('grep', ['-c', '-F', '-i', grep, plain], { encoding: 'utf8' }).trim();
      } catch {
        grepCount = '0';
      }
      grepTimes.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
    console.log(
      `search "${grep}" over 1,000,000 lines (newest 200): p50 ${percentile(times, 50).toFixed(1)} ms (${found} lines; goal p50 < 300 ms); grep -c over the plain file: p50 ${percentile(grepTimes, 50).toFixed(1)} ms (${grepCount} lines)`,
    );
  }
  console.log(
    `stored 1,000,000 lines in ${insertMs} ms, word-indexed them in ${indexMs} ms; logs.db ${(fs.statSync(path.join(root, 'logs.db')).size / 1e6).toFixed(0)} MB beside ${(fs.statSync(plain).size / 1e6).toFixed(0)} MB of text`,
  );
  console.log(
    `load average: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(', ')} (${os.cpus().length} cores)`,
  );
  logs.close();
  store.close();
  fs.rmSync(root, { recursive: true, force: true });
  clearInterval(keepAlive);
}

await main();
