// tier: quick
import test from 'ava';
import { planRecovery } from '../../domain/operations/index.js';
import { planSteps, stepsFor } from '../../domain/pipeline/index.js';
import { OperationHandlers, OperationWorker, RetryableOperationError } from '../../controllers/operations/index.js';
import { silentLogger } from '../../platform/logger.js';
import { openDatabase, type Db } from '../../store/database.js';
import { migrate } from '../../store/migrate.js';
import { CONTROL_MIGRATIONS } from '../../store/control/migrations.js';
import {
  cancelQueuedOperation,
  claimNextOperation,
  enqueueOperation,
  getOperation,
  listAttempts,
  recordStage,
  recoverOperations,
} from '../../store/control/operations/operations.js';

function freshDb(t: { teardown(fn: () => void): void }): Db {
  const db = openDatabase(':memory:');
  migrate(db, CONTROL_MIGRATIONS);
  t.teardown(() => db.close());
  return db;
}

const claimOpts = {
  owner: 'w1',
  leaseMs: 10_000,
  kinds: ['app.deploy', 'app.rollback', 'app.snapshot-restore'] as const,
};

test('a claim passes over an app that already runs an operation without consuming an attempt, and keeps each app FIFO', (t) => {
  const db = freshDb(t);
  const a1 = enqueueOperation(db, { kind: 'app.deploy', app: 'a' });
  const a2 = enqueueOperation(db, { kind: 'app.rollback', app: 'a' });
  const b1 = enqueueOperation(db, { kind: 'app.deploy', app: 'b' });
  t.is(claimNextOperation(db, { ...claimOpts, kinds: [...claimOpts.kinds] }).claimed?.id, a1.id);
  t.is(claimNextOperation(db, { ...claimOpts, kinds: [...claimOpts.kinds] }).claimed?.id, b1.id);
  t.is(claimNextOperation(db, { ...claimOpts, kinds: [...claimOpts.kinds] }).claimed, undefined);
  t.is(getOperation(db, a2.id)!.attempts, 0);
  t.is(getOperation(db, a2.id)!.status, 'queued');
  // The database itself refuses a second running operation of one app.
  t.throws(() => db.prepare("UPDATE operations SET status = 'running' WHERE id = ?").run(a2.id), {
    any: true,
    message: /UNIQUE constraint failed/,
  });
});

test('an operation runs only after the one it waits on succeeded, and fails when that one failed', (t) => {
  const db = freshDb(t);
  const first = enqueueOperation(db, { kind: 'app.deploy', app: 'a' });
  const second = enqueueOperation(db, { kind: 'app.deploy', app: 'b', dependsOn: first.id });
  const claimed = claimNextOperation(db, { ...claimOpts, kinds: [...claimOpts.kinds] });
  t.is(claimed.claimed?.id, first.id);
  t.is(claimNextOperation(db, { ...claimOpts, kinds: [...claimOpts.kinds] }).claimed, undefined, 'b waits');
  db.prepare("UPDATE operations SET status = 'failed', lock_owner = NULL WHERE id = ?").run(first.id);
  const next = claimNextOperation(db, { ...claimOpts, kinds: [...claimOpts.kinds] });
  t.is(next.claimed, undefined);
  t.is(next.dependencyFailures[0]?.operation.id, second.id);
  t.regex(getOperation(db, second.id)!.lastError!, /waited on operation op_\w+ \(a\), which failed/);
});

test('recovery requeues an operation interrupted before a mutable stage and fails one interrupted after; a restore is never replayed', (t) => {
  const db = freshDb(t);
  const early = enqueueOperation(db, { kind: 'app.deploy', app: 'a' });
  const late = enqueueOperation(db, { kind: 'app.deploy', app: 'b' });
  const restore = enqueueOperation(db, { kind: 'app.snapshot-restore', app: 'c' });
  for (let i = 0; i < 3; i += 1) claimNextOperation(db, { ...claimOpts, kinds: [...claimOpts.kinds], owner: 'dead' });
  t.true(recordStage(db, early.id, 'dead', 'build', false));
  t.true(recordStage(db, late.id, 'dead', 'submit', true));
  t.true(recordStage(db, restore.id, 'dead', 'restore', true));
  t.false(recordStage(db, late.id, 'someone-else', 'healthy', true), 'only the lock owner records stages');
  // The sweeper only touches expired leases.
  t.deepEqual(recoverOperations(db, { owner: 'w1', mode: 'expired' }), []);
  const recovered = recoverOperations(db, { owner: 'w1', mode: 'startup' });
  t.is(recovered.length, 3);
  t.like(getOperation(db, early.id), { status: 'queued', attempts: 1, lockOwner: null });
  t.like(getOperation(db, late.id), {
    status: 'failed',
    lastError: 'interrupted in stage submit after a mutable stage began',
  });
  t.like(getOperation(db, restore.id), {
    status: 'failed',
    lastError: 'interrupted in stage restore after a mutable stage began; not replayed, needs operator review',
  });
  t.deepEqual(
    listAttempts(db, early.id).map((a) => a.outcome),
    ['interrupted-requeued'],
  );
});

test('an expired lease is recovered by the sweep', (t) => {
  const db = freshDb(t);
  const past = new Date(Date.now() - 1000);
  const op = enqueueOperation(db, { kind: 'app.deploy', app: 'a' }, past);
  claimNextOperation(db, { ...claimOpts, kinds: [...claimOpts.kinds], leaseMs: 1 }, past);
  const recovered = recoverOperations(db, { owner: 'w1', mode: 'expired' });
  t.deepEqual(
    recovered.map((r) => r.operation.id),
    [op.id],
  );
  t.is(getOperation(db, op.id)!.status, 'queued');
});

test('the recovery rule, as a table', (t) => {
  const rows: [Parameters<typeof planRecovery>[0], 'requeue' | 'fail'][] = [
    [{ kind: 'app.deploy', mutated: false, stage: null, attempts: 1, maxAttempts: 3 }, 'requeue'],
    [{ kind: 'app.deploy', mutated: false, stage: 'test', attempts: 3, maxAttempts: 3 }, 'fail'],
    [{ kind: 'app.deploy', mutated: true, stage: 'healthy', attempts: 1, maxAttempts: 3 }, 'fail'],
    [{ kind: 'app.migrate', mutated: true, stage: 'migrate', attempts: 1, maxAttempts: 3 }, 'fail'],
    [{ kind: 'app.migrate', mutated: false, stage: 'prepare', attempts: 1, maxAttempts: 3 }, 'requeue'],
    [{ kind: 'app.preflight', mutated: false, stage: 'build', attempts: 1, maxAttempts: 3 }, 'requeue'],
    [{ kind: 'app.snapshot-prune', mutated: true, stage: 'prune', attempts: 1, maxAttempts: 3 }, 'requeue'],
    [{ kind: 'app.snapshot-prune', mutated: true, stage: 'prune', attempts: 3, maxAttempts: 3 }, 'fail'],
  ];
  for (const [input, action] of rows) t.is(planRecovery(input).action, action, JSON.stringify(input));
});

test('step plans follow the spec order and record why steps are skipped', (t) => {
  const none = { snapshots: false, migrations: false, routing: false };
  t.deepEqual(stepsFor('preflight'), ['validate', 'clone', 'inspect', 'build', 'test', 'cleanup']);
  t.deepEqual(stepsFor('rollback'), ['submit', 'healthy', 'forge']);
  const plan = planSteps('deploy', {
    hasPostgres: true,
    hasMigrations: true,
    hasTestCommand: false,
    endpointCount: 1,
    capabilities: none,
  });
  t.deepEqual(
    plan.map((s) => s.step),
    ['clone', 'build', 'test', 'snapshot', 'migrate', 'submit', 'healthy', 'forge', 'cleanup'],
  );
  t.deepEqual(
    plan.filter((s) => !s.run).map((s) => [s.step, 'reason' in s ? s.reason : '']),
    [
      ['test', 'build.test is not set'],
      ['snapshot', 'the snapshots capability is not available in this build'],
      ['migrate', 'the migrations capability is not available in this build'],
      ['forge', 'no routing controller is available to update the tunnel ingress'],
    ],
  );
  const plain = planSteps('deploy', {
    hasPostgres: false,
    hasMigrations: false,
    hasTestCommand: true,
    endpointCount: 0,
    capabilities: { snapshots: true, migrations: true, routing: true },
  });
  t.is(
    plain.find((s) => s.step === 'snapshot' && !s.run && s.reason === 'the app declares no postgres infrastructure')
      ?.step,
    'snapshot',
  );
  t.true(plain.find((s) => s.step === 'test')!.run);
});

test('the worker runs handlers by kind, retries retryable failures, never runs two operations of one app at once, and cancels queued ones', async (t) => {
  const db = freshDb(t);
  const running = new Map<string, number>();
  let overlap = 0;
  let flaky = 0;
  const handlers = new OperationHandlers()
    .register('app.deploy', {
      run: async ({ operation }) => {
        const app = operation.app!;
        running.set(app, (running.get(app) ?? 0) + 1);
        if (running.get(app)! > 1) overlap += 1;
        await new Promise((r) => setTimeout(r, Math.random() * 5));
        running.set(app, running.get(app)! - 1);
        return { ok: true };
      },
    })
    .register('app.snapshot', {
      run: async () => {
        flaky += 1;
        if (flaky < 3) throw new RetryableOperationError('transient', 1);
        return { snapshot: 'done' };
      },
    });
  const worker = new OperationWorker({ db, handlers, logger: silentLogger(), concurrency: 4, pollMs: 5 });
  worker.start();
  t.teardown(() => worker.stop());
  const ids = Array.from(
    { length: 40 },
    (_, i) => enqueueOperation(db, { kind: 'app.deploy', app: `app-${i % 4}` }).id,
  );
  const snapshot = enqueueOperation(db, { kind: 'app.snapshot', app: 'snap' });
  const unknownKind = enqueueOperation(db, { kind: 'platform.smoke', app: null });
  const cancelMe = enqueueOperation(db, { kind: 'app.deploy', app: 'app-0', dependsOn: snapshot.id });
  t.deepEqual(cancelQueuedOperation(db, cancelMe.id, 'not needed'), { cancelled: true });
  worker.wake();
  const finished = await Promise.all(ids.map((id) => worker.waitFor(id, 10_000)));
  t.true(finished.every((op) => op.status === 'succeeded'));
  t.is(overlap, 0);
  const snap = await worker.waitFor(snapshot.id, 10_000);
  t.like(snap, { status: 'succeeded', attempts: 3, result: { snapshot: 'done' } });
  t.is(
    getOperation(db, unknownKind.id)!.status,
    'queued',
    'kinds without a handler stay queued for the agent that has one',
  );
  t.is(getOperation(db, cancelMe.id)!.status, 'cancelled');
  // Attempt intervals of one app never overlap.
  const attempts = listAttempts(db).filter((a) => a.app === 'app-1');
  for (let i = 1; i < attempts.length; i += 1) t.true(attempts[i]!.startedAt >= attempts[i - 1]!.endedAt!);
});

test('a worker whose event loop stalled past the lease keeps its own operation: the sweep renews it first', async (t) => {
  const db = freshDb(t);
  const leaseMs = 200;
  const handlers = new OperationHandlers().register('app.deploy', {
    run: async ({ operation }) => {
      if (operation.app !== 'a') return { ok: true };
      // A synchronous stretch (a large copy on a loaded host) longer than the lease, after which the
      // sweeper fires before the heartbeat.
      const until = Date.now() + leaseMs * 3;
      while (Date.now() < until) {
        // Busy: no timer of this process runs meanwhile.
      }
      t.deepEqual(worker.sweep(), []);
      return { ok: true };
    },
  });
  // Referenced by the handler, which runs once the worker started.
  const worker = new OperationWorker({ db, handlers, logger: silentLogger(), leaseMs, pollMs: 5 });
  worker.start();
  t.teardown(() => worker.stop());
  const op = enqueueOperation(db, { kind: 'app.deploy', app: 'a' });
  worker.wake();
  t.like(await worker.waitFor(op.id, 10_000), { status: 'succeeded', attempts: 1 });
  // Another worker's expired lease is still recovered.
  await worker.stop();
  const other = enqueueOperation(db, { kind: 'app.deploy', app: 'b' });
  claimNextOperation(db, { ...claimOpts, kinds: [...claimOpts.kinds], owner: 'gone', leaseMs: 1 });
  t.is(getOperation(db, other.id)!.status, 'running');
  await new Promise((resolve) => setTimeout(resolve, 20));
  t.deepEqual(
    worker.sweep().map((r) => r.operation.id),
    [other.id],
  );
});

test('the drain gate refuses while operations are active in fail mode, waits for running ones in wait mode, and passes in force mode', async (t) => {
  const db = freshDb(t);
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const handlers = new OperationHandlers().register('app.deploy', { run: () => gate });
  const make = (drainMode: 'fail' | 'wait' | 'force') =>
    new OperationWorker({ db, handlers, logger: silentLogger(), drainMode, pollMs: 5 });
  const worker = make('wait');
  worker.start();
  t.teardown(() => worker.stop());
  const op = enqueueOperation(db, { kind: 'app.deploy', app: 'a' });
  worker.wake();
  t.is(getOperation(db, op.id)!.status, 'running');
  await t.throwsAsync(make('fail').drainGate(), {
    message: /1 running and 0 queued operation\(s\): SVC_DRAIN_MODE=fail refuses to drain/,
  });
  t.like(await make('force').drainGate(), { mode: 'force', waitedMs: 0 });
  const waiting = worker.drainGate();
  enqueueOperation(db, { kind: 'app.deploy', app: 'b' });
  worker.wake();
  t.true(worker.drainState().draining);
  release();
  t.is((await waiting).mode, 'wait');
  t.is(getOperation(db, op.id)!.status, 'succeeded');
  t.is(listOperationsQueued(db), 1, 'no new claim while draining');
});

function listOperationsQueued(db: Db): number {
  return (db.prepare("SELECT COUNT(*) AS n FROM operations WHERE status = 'queued'").get() as { n: number }).n;
}
