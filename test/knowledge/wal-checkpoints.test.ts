// tier: quick
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { startKnowledgeStore } from '../../wiring/knowledge-store.js';
import { silentLogger } from '../../platform/logger.js';
import { testConfig } from '../helpers/test-config.js';
import { request } from './knowledge-harness.js';
import { BACKSTOP_PAGES, WORKER_FROM_BYTES } from '../../store/knowledge/wal-checkpointer.js';

const DIMS = 384;
const vector = (i: number) => Array.from({ length: DIMS }, (_, k) => Math.sin(i * 31 + k));

test('WAL checkpoints move to a worker once the WAL grows: the WAL is reused, every write is kept across a restart', async (t) => {
  const config = testConfig(t);
  let store = await startKnowledgeStore(config, silentLogger());
  t.teardown(() => store.close());
  const core = () => store.services.core;
  const wal = `${core().db.name}-wal`;
  const dbFile = core().db.name;
  let written = 0;
  const batch = async (n: number, withVectors = true) => {
    const writes = Array.from({ length: n }, (_, k) => ({
      content: `checkpointed fact ${written + k}`,
      source_id: 's',
      request_id: `r-${written + k}`,
      ...(withVectors ? { vector: vector(written + k) } : {}),
    }));
    written += n;
    const res = await request(`${store.url}/v1/namespaces/ck/write/batch`, { method: 'POST', json: { writes } });
    t.is(res.status, 200);
    t.true(res.body.results.every((r: { status: number }) => r.status === 200));
  };
  // Small stores never start a worker: SQLite's own checkpoint (1,000 pages) is in charge.
  await batch(20, false);
  t.true(fs.statSync(wal).size < WORKER_FROM_BYTES);
  t.false(core().commits.stats().checkpoints!.inWorker);
  t.is(core().db.pragma('wal_autocheckpoint', { simple: true }), 1000);

  // Grow the WAL past the threshold, one group commit after another (batches of 100 items).
  while (fs.statSync(wal).size < WORKER_FROM_BYTES) await batch(100);
  await batch(10); // the first commit past the threshold starts the worker and asks for a checkpoint
  await core().commits.checkpointsIdle();
  let stats = core().commits.stats().checkpoints!;
  t.true(stats.inWorker, 'checkpoints run in the worker');
  t.true(stats.complete >= 1, `a checkpoint copied the whole WAL: ${JSON.stringify(stats)}`);
  t.is(core().db.pragma('wal_autocheckpoint', { simple: true }), BACKSTOP_PAGES, 'the commits only keep a backstop');
  const copied = fs.statSync(dbFile).size;
  t.true(copied > 1024 * 1024, `the worker copied the WAL's pages into knowledge.db (${copied} bytes)`);

  // Once the worker copied every frame, the writer restarts the WAL from its start: the file does not
  // grow by what is written after (without checkpoints it would, frame after frame).
  const walBefore = fs.statSync(wal).size;
  for (let round = 0; round < 3; round++) {
    await core().commits.checkpointsIdle();
    await batch(100);
  }
  await core().commits.checkpointsIdle();
  stats = core().commits.stats().checkpoints!;
  t.true(stats.checkpoints >= 2, JSON.stringify(stats));
  t.true(
    fs.statSync(wal).size <= walBefore,
    `the WAL was reused (${fs.statSync(wal).size} bytes after, ${walBefore} before)`,
  );
  // The commit after a complete checkpoint restarts the WAL without SQLite's header fsync on the event
  // loop (its group's fdatasync flushes the header; docs/adr/0205), and gives the backstop back.
  t.true(stats.unsyncedRestarts >= 1, JSON.stringify(stats));
  t.is(core().db.pragma('wal_autocheckpoint', { simple: true }), BACKSTOP_PAGES, 'the backstop is back after it');
  t.is(core().db.pragma('synchronous', { simple: true }), 2, 'synchronous is FULL again between groups');

  // Closing stops the worker first; a restart finds every write, retrieval included.
  await store.close();
  store = await startKnowledgeStore(config, silentLogger());
  const stored = await request(`${store.url}/v1/stats`);
  t.is(stored.body.nodes, written);
  const replay = await request(`${store.url}/v1/namespaces/ck/write`, {
    method: 'POST',
    json: { content: `checkpointed fact ${written - 1}`, source_id: 's', request_id: `r-${written - 1}` },
  });
  t.true(replay.body.replayed);
  const found = await request(`${store.url}/v1/namespaces/ck/retrieve`, {
    method: 'POST',
    json: { vector: vector(written - 1), top_k: 1 },
  });
  t.is(found.body.results[0].content, `checkpointed fact ${written - 1}`);
  t.is(path.basename(dbFile), 'knowledge.db');
});
