// tier: quick
import test from 'ava';
import path from 'node:path';
import { openControlStore } from '../../store/open-stores.js';
import { enqueueOperation } from '../../store/control/operations/operations.js';
import { FleetAudit } from '../../controllers/fleet/fleet-audit.js';
import { holdWriteLock } from '../helpers/other-writer.js';
import { tempDir } from '../helpers/temp-dir.js';

test('a fleet audit entry is appended while another process commits to control.db between its read and its write: it waits for the lock and the chain holds', async (t) => {
  const dataDir = path.join(tempDir(t), 'data');
  const { db } = openControlStore(dataDir);
  t.teardown(() => db.close());
  const audit = new FleetAudit({ db, signingKey: Buffer.alloc(32, 7), retentionMs: 86_400_000 });
  audit.record('operator', 'fleet.plan.created', 'plan-1');
  const op = enqueueOperation(db, { kind: 'app.deploy', app: 'alpha' });
  // The other process (the host agent, in production) holds the write lock and commits in 300 ms.
  // A deferred transaction would read the chain's last hash before that commit, then fail to write.
  const other = await holdWriteLock(path.join(dataDir, 'control.db'), 'UPDATE operations SET stage = ? WHERE id = ?', [
    'from the other process',
    op.id,
  ]);
  audit.record('operator', 'fleet.plan.dispatched', 'plan-1', { attemptId: 'att-1' });
  t.is(await other.exited, 0);
  const entries = audit.list({ limit: 10, offset: 0 });
  t.deepEqual(
    entries.map((e) => e.action),
    ['fleet.plan.dispatched', 'fleet.plan.created'],
  );
  t.is(entries[0]!.prevSha256, entries[1]!.entrySha256);
  t.true(audit.verify(entries));
  t.is(
    (db.prepare('SELECT stage FROM operations WHERE id = ?').get(op.id) as { stage: string }).stage,
    'from the other process',
  );
});
