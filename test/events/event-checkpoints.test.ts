// tier: full
/**
 * control.db's WAL checkpoints run in a worker thread once event ingest grows the WAL (ADR 0209),
 * not inside the group commit that crosses SQLite's 1,000 pages on the event loop: the WAL file is
 * reused, the commits keep only a backstop, and every acknowledged event is there after a restart.
 * Real HTTP, a real control.db.
 */
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { request } from '../helpers/servers.js';
import { testConfig } from '../helpers/test-config.js';
import { silentLogger } from '../../platform/logger.js';
import { BACKSTOP_PAGES, WORKER_FROM_BYTES } from '../../store/knowledge/wal-checkpointer.js';
import { startControlPlane } from '../../wiring/control-plane.js';

test('event ingest checkpoints control.db in a worker: the WAL is reused and every event survives a restart', async (t) => {
  const config = testConfig(t, { SVC_CAPACITY_CHECK_INTERVAL: 'off' });
  let plane = await startControlPlane(config, silentLogger());
  t.teardown(() => plane.close());
  const wal = path.join(config.dataDir, 'control.db-wal');
  const events = () => plane.eventServices.events;
  let sent = 0;
  // 32 concurrent posts share group commits, as ingest under load does.
  const burst = async (n: number) => {
    const answers = await Promise.all(
      Array.from({ length: n }, () => {
        const i = sent++;
        return request(`${plane.url}/api/events`, {
          method: 'POST',
          json: {
            type: 'bench.checkpoint',
            severity: i % 4 === 0 ? 'warning' : 'info',
            title: `checkpointed event ${i}`,
            body: 'x'.repeat(400),
            dedupeKey: `ck-${i}`,
          },
        });
      }),
    );
    t.true(
      answers.every((a) => a.status === 201),
      JSON.stringify(answers.find((a) => a.status !== 201)?.body),
    );
  };
  await burst(32);
  // A small WAL keeps SQLite's own checkpoint (the migrations at start may already have grown it).
  if (fs.statSync(wal).size < WORKER_FROM_BYTES) {
    t.false(events().checkpointStats()!.inWorker, 'a small WAL keeps SQLite’s own checkpoint');
    t.is(plane.db.pragma('wal_autocheckpoint', { simple: true }), 1000);
  }

  while (fs.statSync(wal).size < WORKER_FROM_BYTES) await burst(32);
  await burst(32); // the first commit past the threshold starts the worker and asks for a checkpoint
  await events().checkpointsIdle();
  let stats = events().checkpointStats()!;
  t.true(stats.inWorker, 'checkpoints run in the worker');
  t.true(stats.complete >= 1, JSON.stringify(stats));
  t.is(plane.db.pragma('wal_autocheckpoint', { simple: true }), BACKSTOP_PAGES, 'the commits keep only a backstop');

  // After a complete checkpoint the next commit restarts the WAL from its start: the file stops growing.
  const walBefore = fs.statSync(wal).size;
  for (let round = 0; round < 3; round++) {
    await events().checkpointsIdle();
    await burst(32);
  }
  await events().checkpointsIdle();
  stats = events().checkpointStats()!;
  t.true(stats.checkpoints >= 2, JSON.stringify(stats));
  t.true(
    fs.statSync(wal).size <= walBefore,
    `the WAL was reused (${fs.statSync(wal).size} bytes, ${walBefore} before)`,
  );
  t.true(stats.unsyncedRestarts >= 1, JSON.stringify(stats));
  t.is(plane.db.pragma('synchronous', { simple: true }), 2, 'synchronous is FULL again between groups');

  // Closing stops the worker first; a restart finds every event.
  await plane.close();
  plane = await startControlPlane(config, silentLogger());
  const listed = await request(`${plane.url}/api/events?limit=1`);
  t.is(listed.status, 200, JSON.stringify(listed.body));
  t.is(listed.body.total, sent);
});
