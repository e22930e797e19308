/**
 * Knowledge store backup figures (issue 29, ADR 0174): a store of BENCH_KB_NODES nodes (default
 * 100,000, 8-dimension vectors) in namespace `bulk` plus 1,000 in `small`, loaded through the write
 * service. For a namespace backup of each, a store backup and their restores, it reports the time,
 * the longest event-loop stall (monitorEventLoopDelay) and the p99 latency of writes made meanwhile
 * by one in-process client, beside the same writes without a backup; and a plain `VACUUM INTO` of the
 * file as the baseline of a whole-file copy. Prints the load average: the figures mean little without it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { openKnowledgeStore } from '../store/open-stores.js';
import { createKnowledgeServices } from '../knowledge/index.js';
import { BackupService } from '../knowledge/maintenance/backup-service.js';

const NODES = Number(process.env.BENCH_KB_NODES ?? 100_000);
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-kbackup-'));
const store = openKnowledgeStore(path.join(root, 'data'));
const services = createKnowledgeServices(store.db);
const backups = new BackupService(services.core, {
  dir: path.join(root, 'backups'),
  storeFile: store.file,
  afterRestore: () => {
    services.core.reloadDerived();
    services.review.forget();
  },
});

const vector = (i: number) => Array.from({ length: 8 }, (_, k) => Math.sin(i * (k + 1)));
async function load(ns: string, n: number): Promise<void> {
  for (let done = 0; done < n; done += 1000) {
    const batch = Array.from({ length: Math.min(1000, n - done) }, (_, j) => ({
      content: `${ns} fact ${done + j}: the ledger closes at ${(done + j) % 24}:00 in region ${(done + j) % 7}`,
      source_id: `source-${(done + j) % 13}`,
      vector: vector(done + j),
    }));
    await services.writes.writeBatch('default', ns, batch);
  }
}

const loadStart = performance.now();
await load('bulk', NODES);
await load('small', 1000);
console.log(
  `loaded ${NODES + 1000} nodes in ${((performance.now() - loadStart) / 1000).toFixed(1)} s; knowledge.db ${(fs.statSync(store.file).size / 2 ** 20).toFixed(0)} MiB`,
);

const p = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;

/** Runs `work` while one client writes in a loop; answers the time, the longest stall and the writes' p99. */
async function measure<T>(label: string, work: () => Promise<T>): Promise<T> {
  const delay = monitorEventLoopDelay({ resolution: 5 });
  const latencies: number[] = [];
  let stop = false;
  let i = 0;
  const writer = (async () => {
    while (!stop) {
      const t0 = performance.now();
      await services.writes.write('default', 'writers', {
        content: `concurrent ${i++}`,
        source_id: 'bench',
        vector: vector(i),
      });
      latencies.push(performance.now() - t0);
    }
  })();
  delay.enable();
  const t0 = performance.now();
  const result = await work();
  const ms = performance.now() - t0;
  delay.disable();
  stop = true;
  await writer;
  latencies.sort((a, b) => a - b);
  console.log(
    `${label.padEnd(34)} ${ms.toFixed(0).padStart(7)} ms   longest stall ${(delay.max / 1e6).toFixed(0).padStart(5)} ms   writes ${String(latencies.length).padStart(5)}, p99 ${p(latencies, 0.99).toFixed(1)} ms`,
  );
  return result;
}

await measure('writes alone (1 s)', () => new Promise((r) => setTimeout(r, 1000)));
const small = await measure('namespace backup: small (1,000)', () =>
  backups.create('default', { scope: 'namespace', namespace: 'small' }),
);
const bulk = await measure(`namespace backup: bulk (${NODES})`, () =>
  backups.create('default', { scope: 'namespace', namespace: 'bulk' }),
);
const whole = await measure('store backup', () => backups.create('default', { scope: 'store' }));
{
  const t0 = performance.now();
  const db = new Database(store.file, { readonly: true });
  db.exec(`VACUUM INTO '${path.join(root, 'vacuum-into.db')}'`);
  db.close();
  console.log(
    `${'VACUUM INTO of the same file (baseline)'.padEnd(34)} ${(performance.now() - t0).toFixed(0).padStart(7)} ms   (one synchronous step on its own connection)`,
  );
}
await measure('restore namespace small', () => backups.restore('default', small.id, { scope: 'namespace' }));
await measure('restore namespace bulk', () => backups.restore('default', bulk.id, { scope: 'namespace' }));
await measure('restore store', () => backups.restore('default', whole.id, { scope: 'store' }));
console.log(
  `backup files: small ${(small.bytes / 2 ** 20).toFixed(1)} MiB, bulk ${(bulk.bytes / 2 ** 20).toFixed(0)} MiB, store ${(whole.bytes / 2 ** 20).toFixed(0)} MiB`,
);
console.log(
  `load average ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')} on ${os.cpus().length} cores`,
);
await services.core.commits.close();
store.db.close();
fs.rmSync(root, { recursive: true, force: true });
