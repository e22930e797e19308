/**
 * Platform backup figures (issue 29): a backup of knowledge.db (BENCH_BACKUP_KNOWLEDGE_MB, default
 * 1024) plus a control.db of BENCH_BACKUP_CONTROL_ROWS operations (default 100,000), taken while 8
 * clients write (worker threads, each with its own connection), beside the same writers without a
 * backup, and beside a plain `VACUUM INTO` of the same files (and the online copies alone, which run in
 * a worker thread: ADR 0161); then the restore time. The event loop of this process (where the API
 * would serve) is watched with `monitorEventLoopDelay` during the idle run and the backup. Prints the
 * load average: the figures mean little without it.
 *
 * The backup writes at SVC_BACKUP_IO_MBPS (default 32; 0: no limit), synced every 8 MiB (docs/adr/0167).
 * BENCH_BACKUP_DIR puts the staged copies and the archive elsewhere (e.g. a tmpfs, /dev/shm, as a
 * diagnostic: with no disk writes of the backup's own, what is left of the writers' slowdown is not the
 * disk). The largest amount of dirty data the kernel held (/proc/meminfo `Dirty`) is printed for the
 * idle run and the backup. The filled stores are synced before the idle run, so neither run pays for
 * the writeback of the fill.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { execFileSync } from 'node:child_process';
import Database from 'better-sqlite3';
import { PlatformBackupService } from '../controllers/backup/platform-backup-service.js';
import { restorePlatform } from '../controllers/backup/restore-platform.js';
import { ioPace } from '../platform/backup/archive-process.js';
import { buildInfo } from '../platform/build-info.js';
import { backupDatabase } from '../store/database-backup.js';
import { openControlStore, openKnowledgeStore } from '../store/open-stores.js';
import { enqueueOperation } from '../store/control/operations/operations.js';

const KNOWLEDGE_MB = Number(process.env.BENCH_BACKUP_KNOWLEDGE_MB ?? 1024);
const CONTROL_ROWS = Number(process.env.BENCH_BACKUP_CONTROL_ROWS ?? 100_000);
const WRITERS = 8;

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-backup-'));
const dataDir = path.join(root, 'data');
const control = openControlStore(dataDir);
const insert = control.db.transaction((n: number) => {
  for (let i = 0; i < n; i += 1) enqueueOperation(control.db, { kind: 'app.deploy', app: `app-${i % 100}` });
});
for (let done = 0; done < CONTROL_ROWS; done += 10_000) insert(Math.min(10_000, CONTROL_ROWS - done));
const knowledge = openKnowledgeStore(dataDir);
knowledge.db.exec('CREATE TABLE IF NOT EXISTS bench_payload (id INTEGER PRIMARY KEY, body BLOB NOT NULL)');
const blob = Buffer.alloc(64 * 1024, 7);
const fill = knowledge.db.transaction((n: number) => {
  const stmt = knowledge.db.prepare('INSERT INTO bench_payload (body) VALUES (?)');
  for (let i = 0; i < n; i += 1) stmt.run(blob);
});
for (let mb = 0; mb < KNOWLEDGE_MB; mb += 64) fill(1024);
knowledge.db.close();
// The fill's dirty pages are written now, not during the runs measured below.
execFileSync('sync');
const IO_MBPS = Number(process.env.SVC_BACKUP_IO_MBPS ?? 32);
const BACKUPS_DIR = process.env.BENCH_BACKUP_DIR
  ? fs.mkdtempSync(path.join(process.env.BENCH_BACKUP_DIR, 'svc-bench-backups-'))
  : path.join(root, 'backups');

/** The kernel's dirty page cache now, in MiB. */
function dirtyMiB(): number {
  const kb = /^Dirty:\s+(\d+)/m.exec(fs.readFileSync('/proc/meminfo', 'utf8'))?.[1];
  return Number(kb ?? 0) / 1024;
}

const WRITER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.sqlite);
const db = new Database(workerData.file);
db.pragma('journal_mode = WAL'); db.pragma('synchronous = FULL'); db.pragma('busy_timeout = 10000');
db.exec('CREATE TABLE IF NOT EXISTS bench_writes (id INTEGER PRIMARY KEY, at TEXT)');
const stmt = db.prepare('INSERT INTO bench_writes (at) VALUES (?)');
let stop = false; parentPort.on('message', () => { stop = true; });
const latencies = [];
(async () => {
  while (!stop) {
    const t0 = performance.now(); stmt.run(new Date().toISOString()); latencies.push(performance.now() - t0);
    await new Promise((r) => setTimeout(r, 2));
  }
  parentPort.postMessage(latencies); db.close();
})();`;

async function withWriters<T>(
  work: () => Promise<T>,
): Promise<{ result: T; p99: number; writes: number; loopP99: number; loopMax: number; maxDirtyMiB: number }> {
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  let maxDirtyMiB = 0;
  const sampler = setInterval(() => (maxDirtyMiB = Math.max(maxDirtyMiB, dirtyMiB())), 100);
  const workers = Array.from({ length: WRITERS }, (_, i) => {
    const file = path.join(dataDir, i % 2 === 0 ? 'control.db' : 'knowledge.db');
    return new Worker(WRITER, { eval: true, workerData: { file, sqlite: require.resolve('better-sqlite3') } });
  });
  const result = await work();
  loop.disable();
  clearInterval(sampler);
  const all = (
    await Promise.all(
      workers.map(
        (w) =>
          new Promise<number[]>((resolve) => {
            w.once('message', resolve);
            w.postMessage('stop');
          }),
      ),
    )
  ).flat();
  await Promise.all(workers.map((w) => w.terminate()));
  all.sort((a, b) => a - b);
  return {
    result,
    p99: all[Math.floor(all.length * 0.99)] ?? 0,
    writes: all.length,
    loopP99: loop.percentile(99) / 1e6,
    loopMax: loop.max / 1e6,
    maxDirtyMiB: Math.round(maxDirtyMiB),
  };
}
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);

const service = new PlatformBackupService({
  sources: {
    controlDb: control.db,
    dataDir,
    appsDir: path.join(root, 'apps'),
    settings: () => ({}),
    secretSettings: new Set(),
    build: buildInfo(),
  },
  backupsDir: BACKUPS_DIR,
  key: undefined,
  pace: ioPace(IO_MBPS),
});
const ms = (t0: number) => Math.round(performance.now() - t0);
const idle = await withWriters(() => new Promise((r) => setTimeout(r, 5000)));
let t0 = performance.now();
const during = await withWriters(() => service.take({ noSecrets: true }));
const backupMs = ms(t0);
const vacuumDir = path.join(root, 'vacuum');
fs.mkdirSync(vacuumDir);
t0 = performance.now();
for (const name of ['control.db', 'knowledge.db']) {
  const db = new Database(path.join(dataDir, name), { readonly: true });
  db.exec(`VACUUM INTO '${path.join(vacuumDir, name)}'`);
  db.close();
}
const vacuumMs = ms(t0);
t0 = performance.now();
const copies = [];
for (const name of ['control.db', 'knowledge.db'])
  copies.push(await backupDatabase(path.join(dataDir, name), path.join(root, 'online', name)));
const onlineCopyMs = ms(t0);
t0 = performance.now();
const restored = await restorePlatform({
  archive: service.archivePath(during.result),
  key: undefined,
  dataDir: path.join(root, 'restored', 'data'),
  appsDir: path.join(root, 'restored', 'apps'),
  yes: false,
  platformRunning: () => false,
});
const restoreMs = ms(t0);
// The bench's root is private (mkdtemp): as root, the restore made a hosted folder outside it.
if (restored.hostedDir) fs.rmSync(restored.hostedDir, { recursive: true, force: true });
console.log(
  JSON.stringify(
    {
      knowledgeDbMB: Math.round(fs.statSync(path.join(dataDir, 'knowledge.db')).size / 2 ** 20),
      controlRows: CONTROL_ROWS,
      status: during.result.status,
      archiveMB: Math.round((during.result.bytes ?? 0) / 2 ** 20),
      backupWithVerifyMs: backupMs,
      plainVacuumIntoMs: vacuumMs,
      onlineCopiesAloneMs: onlineCopyMs,
      onlineCopiesBy: copies.map((c) => c.copiedBy),
      restoreMs,
      writers: WRITERS,
      backupIoMbps: IO_MBPS,
      backupsDir: process.env.BENCH_BACKUP_DIR ?? '(beside the data folder)',
      p99WriteMsWithoutBackup: Number(idle.p99.toFixed(2)),
      p99WriteMsDuringBackup: Number(during.p99.toFixed(2)),
      p99Ratio: Number((during.p99 / idle.p99).toFixed(2)),
      eventLoopDelayMsWithoutBackup: { p99: Number(idle.loopP99.toFixed(1)), max: Number(idle.loopMax.toFixed(1)) },
      eventLoopDelayMsDuringBackup: { p99: Number(during.loopP99.toFixed(1)), max: Number(during.loopMax.toFixed(1)) },
      maxDirtyMiB: { withoutBackup: idle.maxDirtyMiB, duringBackup: during.maxDirtyMiB },
      loadAverage: os.loadavg().map((l) => Number(l.toFixed(2))),
    },
    null,
    2,
  ),
);
control.db.close();
fs.rmSync(root, { recursive: true, force: true });
if (process.env.BENCH_BACKUP_DIR) fs.rmSync(BACKUPS_DIR, { recursive: true, force: true });
