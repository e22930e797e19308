// tier: quick
import test from 'ava';
import path from 'node:path';
import { openControlStore } from '../../store/open-stores.js';
import { holdWriteLock } from '../helpers/other-writer.js';
import {
  claimOperations,
  enqueueOperation,
  recordStage,
  recoverOperations,
} from '../../store/control/operations/operations.js';
import {
  activeAppOperations,
  closeInterruptedLaneSteps,
  copyForCandidate,
  getPlatformUpgrade,
  listLaneSteps,
  savePlatformUpgrade,
  startLaneStep,
} from '../../store/control/platform-lane.js';
import { HOLD_STAGES } from '../../domain/platform/index.js';
import { planRecovery } from '../../domain/operations/index.js';
import { openDatabase } from '../../store/database.js';
import { tempDir } from '../helpers/temp-dir.js';

const APP_KINDS = ['app.deploy'] as const;
const PLATFORM_KINDS = ['platform.upgrade', 'platform.preflight', 'platform.smoke'] as const;

test('claimOperations holds app operations while an upgrade runs in a hold stage, and releases them after', (t) => {
  const { db } = openControlStore(tempDir(t));
  const upgrade = enqueueOperation(db, { kind: 'platform.upgrade', app: null });
  const deploy = enqueueOperation(db, { kind: 'app.deploy', app: 'a' });
  t.deepEqual(
    claimOperations(db, { owner: 'agent', leaseMs: 10_000, kinds: [...PLATFORM_KINDS], limit: 2 }).claimed.map(
      (o) => o.id,
    ),
    [upgrade.id],
    'the agent claims only platform kinds',
  );
  recordStage(db, upgrade.id, 'agent', 'candidate', false);
  const api = { owner: 'api', leaseMs: 10_000, kinds: [...APP_KINDS], limit: 2, holdStages: HOLD_STAGES };
  t.deepEqual(activeAppOperations(db), { running: 0, queued: 1 });
  recordStage(db, upgrade.id, 'agent', 'drain', false);
  t.deepEqual(claimOperations(db, api).claimed, [], 'held from the drain gate on');
  recordStage(db, upgrade.id, 'agent', 'restart', true);
  t.deepEqual(claimOperations(db, api).claimed, []);
  db.prepare("UPDATE operations SET status = 'succeeded' WHERE id = ?").run(upgrade.id);
  t.deepEqual(
    claimOperations(db, api).claimed.map((o) => o.id),
    [deploy.id],
    'runs once the upgrade ended',
  );
});

test("recoverOperations with kinds leaves the other side's running operations alone", (t) => {
  const { db } = openControlStore(tempDir(t));
  const upgrade = enqueueOperation(db, { kind: 'platform.upgrade', app: null });
  const deploy = enqueueOperation(db, { kind: 'app.deploy', app: 'a' });
  claimOperations(db, { owner: 'agent-1', leaseMs: 10_000, kinds: [...PLATFORM_KINDS], limit: 1 });
  claimOperations(db, { owner: 'api-1', leaseMs: 10_000, kinds: [...APP_KINDS], limit: 1 });
  // A restarted API recovers its own kinds only: the agent's upgrade keeps running.
  t.deepEqual(
    recoverOperations(db, { owner: 'api-2', mode: 'startup', kinds: [...APP_KINDS] }).map((r) => r.operation.id),
    [deploy.id],
  );
  recordStage(db, upgrade.id, 'agent-1', 'restart', true);
  const recovered = recoverOperations(db, { owner: 'agent-2', mode: 'startup', kinds: [...PLATFORM_KINDS] });
  t.deepEqual(
    recovered.map((r) => [r.operation.id, r.decision.action]),
    [[upgrade.id, 'requeue']],
    'a platform operation resumes even after a mutable stage',
  );
});

test('planRecovery resumes platform lane operations whatever stage they reached, while attempts remain', (t) => {
  t.is(
    planRecovery({ kind: 'platform.upgrade', mutated: true, stage: 'restart', attempts: 2, maxAttempts: 5 }).action,
    'requeue',
  );
  t.is(
    planRecovery({ kind: 'platform.upgrade', mutated: true, stage: 'restart', attempts: 5, maxAttempts: 5 }).action,
    'fail',
  );
  t.is(
    planRecovery({ kind: 'app.deploy', mutated: true, stage: 'submit', attempts: 1, maxAttempts: 3 }).action,
    'fail',
  );
});

test('savePlatformUpgrade keeps earlier fields, and interrupted steps are closed as failed', (t) => {
  const { db } = openControlStore(tempDir(t));
  const op = enqueueOperation(db, { kind: 'platform.upgrade', app: null });
  savePlatformUpgrade(db, op.id, { phase: 'preparing', drainMode: 'wait', fromRelease: 'a' });
  savePlatformUpgrade(db, op.id, { phase: 'promoted', toRelease: 'b' });
  t.like(getPlatformUpgrade(db, op.id), { phase: 'promoted', drainMode: 'wait', fromRelease: 'a', toRelease: 'b' });
  startLaneStep(db, op.id, 1, 'stage', 'succeeded');
  startLaneStep(db, op.id, 1, 'restart');
  t.is(closeInterruptedLaneSteps(db, op.id), 1);
  t.deepEqual(
    listLaneSteps(db, op.id).map((s) => `${s.step} ${s.status} ${s.message ?? ''}`),
    ['stage succeeded ', 'restart failed interrupted: the agent stopped'],
  );
});

test('copyForCandidate writes a consistent copy without undelivered outbox rows or notification channels', async (t) => {
  const dir = tempDir(t);
  const { db } = openControlStore(dir);
  enqueueOperation(db, { kind: 'app.deploy', app: 'a' });
  // Rows the test writes directly: what a candidate must never act on.
  db.prepare(
    "INSERT INTO notification_channels (id, provider, name, url, created_at) VALUES ('ch_1', 'webhook', 'ops', 'https://hooks.example.test/x', '2026-01-01T00:00:00Z')",
  ).run();
  db.prepare("INSERT INTO event_outbox (event_id, target, next_attempt_ms) VALUES ('ev_1', 'sink', 0)").run();
  const file = path.join(dir, 'candidate', 'control.db');
  await copyForCandidate(db, file);
  const copy = openDatabase(file);
  t.teardown(() => copy.close());
  t.is((copy.prepare('SELECT COUNT(*) AS n FROM operations').get() as { n: number }).n, 1);
  t.is((copy.prepare('SELECT COUNT(*) AS n FROM event_outbox').get() as { n: number }).n, 0);
  t.is((copy.prepare('SELECT COUNT(*) AS n FROM notification_channels').get() as { n: number }).n, 0);
});

test('a lane row is saved while another process commits to control.db between its read and its write: the save waits for the lock instead of failing', async (t) => {
  // control.db has writers in two processes (the API and the host agent). A deferred transaction that
  // reads, then writes after the other process committed, fails at once with SQLITE_BUSY ("database is
  // locked"), busy_timeout or not; an immediate one waits for the lock.
  const dataDir = path.join(tempDir(t), 'data');
  const { db } = openControlStore(dataDir);
  t.teardown(() => db.close());
  const op = enqueueOperation(db, { kind: 'platform.upgrade', app: null });
  savePlatformUpgrade(db, op.id, { phase: 'preparing' });
  const other = await holdWriteLock(
    path.join(dataDir, 'control.db'),
    'UPDATE platform_upgrades SET message = ? WHERE operation_id = ?',
    ['from the other process', op.id],
  );
  // The other process holds the write lock and commits in 300 ms: the save's read sees the row before
  // that commit, and its write comes after it.
  const saved = savePlatformUpgrade(db, op.id, { phase: 'promoted' });
  t.is(await other.exited, 0);
  t.is(saved.phase, 'promoted');
  t.is(getPlatformUpgrade(db, op.id)?.phase, 'promoted');
  t.is(getPlatformUpgrade(db, op.id)?.message, 'from the other process');
});
