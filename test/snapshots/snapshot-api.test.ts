// tier: full
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { startPostgres, type PostgresCluster } from '../helpers/postgres.js';
import { request, startTestControlPlane } from '../helpers/servers.js';
import { testConfig } from '../helpers/test-config.js';
import { waitForReconciled } from '../helpers/wait-for.js';
import { openApiAnswers } from '../helpers/openapi-answers.js';

let cluster: PostgresCluster;
test.before(async () => {
  cluster = await startPostgres();
});
test.after.always(() => cluster?.stop());

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.test', ...args], { cwd, stdio: 'ignore' });

test('the versioned snapshot routes queue durable operations behind an Idempotency-Key and restore through them', async (t) => {
  cluster.psql('CREATE DATABASE ledger');
  cluster.psql('CREATE TABLE entries (amount integer); INSERT INTO entries VALUES (42)', 'ledger');
  const config = testConfig(t, {
    SVC_POSTGRES_HOST: cluster.host,
    SVC_POSTGRES_PORT: String(cluster.port),
    SVC_POSTGRES_USER: cluster.user,
    SVC_POSTGRES_BIN_DIR: cluster.binDir,
  });
  const snapshotsDir = path.join(path.dirname(config.dataDir), 'snapshots');
  const app = path.join(config.appsDir, 'ledger-api');
  fs.mkdirSync(path.join(app, 'migrations'), { recursive: true });
  fs.writeFileSync(
    path.join(app, 'infraspec.yaml'),
    'name: ledger-api\ninfrastructure:\n  postgres:\n    database: ledger\nmigrations: migrations\nsnapshots:\n  keep: 1\nprocesses:\n  web:\n    port: 8080\n',
  );
  fs.writeFileSync(path.join(app, 'migrations', '001_note.sql'), 'ALTER TABLE entries ADD COLUMN note text;');
  fs.mkdirSync(path.join(config.appsDir, 'plain'));
  fs.writeFileSync(
    path.join(config.appsDir, 'plain', 'infraspec.yaml'),
    'name: plain\nprocesses:\n  web:\n    port: 8080\n',
  );
  git(config.appsDir, 'init', '-q', '-b', 'main');
  git(config.appsDir, 'add', '-A');
  git(config.appsDir, 'commit', '-q', '-m', 'apps');
  const plane = await startTestControlPlane(t, { ...config, snapshotsDir });
  await waitForReconciled(
    [plane.reconcilers.specController],
    async () => (await request(`${plane.url}/api/apps/ledger-api`)).status === 200,
    { what: 'ledger-api discovered' },
  );
  const post = (url: string, key: string | undefined, json: unknown = {}) =>
    request(`${plane.url}${url}`, { method: 'POST', json, headers: key ? { 'idempotency-key': key } : {} });

  // Each answer below also matches the answer schema of the served OpenAPI document (ADR 0230).
  const answers = openApiAnswers(t, (await request(`${plane.url}/api/openapi.json`)).body);

  const missingKey = await post('/api/v1/apps/ledger-api/snapshots', undefined);
  t.is(missingKey.status, 400);
  t.is(missingKey.body.error.code, 'idempotency_key_required');

  const queued = await post('/api/v1/apps/ledger-api/snapshots', 'snap-1');
  t.is(queued.status, 202);
  t.is(queued.body.operation.kind, 'app.snapshot');
  answers.check('POST', '/api/v1/apps/{id}/snapshots', queued);
  const replay = await post('/api/v1/apps/ledger-api/snapshots', 'snap-1');
  t.is(replay.body.operation.id, queued.body.operation.id, 'same key, same request: the original answer');
  const done = await plane.deploys.worker.waitFor(queued.body.operation.id);
  t.is(done.status, 'succeeded');
  const inventory = await request(`${plane.url}/api/v1/apps/ledger-api/snapshots`);
  t.is(inventory.body.snapshots.length, 1);
  answers.check('GET', '/api/v1/apps/{id}/snapshots', inventory);
  const filename: string = inventory.body.snapshots[0].filename;
  t.regex(filename, /^ledger_manual_/);
  t.is(fs.statSync(path.join(snapshotsDir, filename)).mode & 0o777, 0o600);

  cluster.psql('UPDATE entries SET amount = 0', 'ledger');
  t.is(
    (await post(`/api/v1/apps/ledger-api/snapshots/${filename}/restore`, 'restore-0', {})).status,
    400,
    'confirm is required',
  );
  const restore = await post(`/api/v1/apps/ledger-api/snapshots/${filename}/restore`, 'restore-1', {
    confirm: true,
    preRestore: true,
  });
  t.is(restore.status, 202);
  answers.check('POST', '/api/v1/apps/{id}/snapshots/{filename}/restore', restore);
  const reused = await post(`/api/v1/apps/ledger-api/snapshots/${filename}/restore`, 'restore-1', { confirm: true });
  t.is(reused.status, 422, 'the key was used for a different request');
  t.is(reused.body.error.code, 'idempotency_key_reused');
  const restored = await plane.deploys.worker.waitFor(restore.body.operation.id);
  t.is(restored.status, 'succeeded', JSON.stringify(restored));
  const operation = await request(`${plane.url}/api/v1/operations/${restore.body.operation.id}`);
  answers.check('GET', '/api/v1/operations/{id}', operation);
  const receipt = operation.body;
  t.is(receipt.result.restoredSnapshot, filename);
  t.regex(receipt.result.safetySnapshot, /^ledger_prerestore_/);
  t.is(receipt.result.database, 'ledger');
  t.is(cluster.psql('SELECT amount FROM entries', 'ledger').trim(), '42');
  const events = await request(`${plane.url}/api/events?type=snapshot.restored`);
  t.is(
    events.body.events?.[0]?.metadata?.correlationKey ?? events.body[0]?.metadata?.correlationKey,
    'ledger-api:snapshots',
  );

  const traversal = await post('/api/v1/apps/ledger-api/snapshots/..%2F..%2Fetc%2Fpasswd/restore', 'restore-3', {
    confirm: true,
  });
  t.true(traversal.status === 400 || traversal.status === 404, `status ${traversal.status}`);

  const preview = await request(`${plane.url}/api/v1/apps/ledger-api/snapshots/retention`);
  t.deepEqual(
    preview.body.entries.map((e: { action: string }) => e.action),
    ['keep', 'would-prune'],
  );
  answers.check('GET', '/api/v1/apps/{id}/snapshots/retention', preview);
  t.is((await post('/api/v1/apps/ledger-api/snapshots/retention', 'prune-0', {})).status, 400, 'confirm is required');
  const pruned = await post('/api/v1/apps/ledger-api/snapshots/retention', 'prune-1', { confirm: true });
  t.is(pruned.status, 202);
  t.is(pruned.body.operation.kind, 'app.snapshot-prune');
  t.is(pruned.body.operation.app, 'ledger-api');
  answers.check('POST', '/api/v1/apps/{id}/snapshots/retention', pruned);
  const prunedAgain = await post('/api/v1/apps/ledger-api/snapshots/retention', 'prune-1', { confirm: true });
  t.is(prunedAgain.body.operation.id, pruned.body.operation.id, 'a retry with the same key queues no second prune');
  const pruneDone = await plane.deploys.worker.waitFor(pruned.body.operation.id);
  t.is(pruneDone.status, 'succeeded', JSON.stringify(pruneDone));
  const pruneReceipt = (await request(`${plane.url}/api/v1/operations/${pruned.body.operation.id}`)).body;
  t.is(pruneReceipt.result.deleted.length, 1);
  t.deepEqual(pruneReceipt.result.deleted, [preview.body.entries[1].filename]);
  t.is(pruneReceipt.result.keep, 1);
  t.deepEqual(
    (await request(`${plane.url}/api/v1/apps/ledger-api/snapshots`)).body.snapshots.map(
      (s: { filename: string }) => s.filename,
    ),
    [preview.body.entries[0].filename],
    'the inventory holds only what retention kept',
  );
  const noDbPrune = await post('/api/v1/apps/plain/snapshots/retention', 'plain-prune', { confirm: true });
  t.is(noDbPrune.status, 422, 'an app without a database has nothing to prune: refused before anything is queued');
  t.is(noDbPrune.body.error.code, 'no_postgres');

  const migrate = await post('/api/v1/apps/ledger-api/migrations', 'migrate-1', { ref: 'main', confirm: true });
  t.is(migrate.status, 202);
  answers.check('POST', '/api/v1/apps/{id}/migrations', migrate);
  const retried = await post('/api/v1/apps/ledger-api/migrations', 'migrate-1', { ref: 'main', confirm: true });
  t.is(retried.body.operation.id, migrate.body.operation.id, 'a retry with the same key queues nothing new');
  const migrated = await plane.deploys.worker.waitFor(migrate.body.operation.id);
  t.is(migrated.status, 'succeeded', JSON.stringify(migrated));
  t.is(
    cluster
      .psql(
        "SELECT count(*) FROM information_schema.columns WHERE table_name = 'entries' AND column_name = 'note'",
        'ledger',
      )
      .trim(),
    '1',
  );
  const again = await post('/api/v1/apps/ledger-api/migrations', 'migrate-1', { ref: 'main', confirm: true });
  t.is(again.body.operation.id, migrate.body.operation.id);
  t.is(cluster.psql('SELECT count(*) FROM svc_schema_migrations', 'ledger').trim(), '1', 'the migration ran once');
  const active = await request(`${plane.url}/api/operations/active`);
  answers.check('GET', '/api/operations/active', active);
  const migrationOps = active.body;
  t.false(JSON.stringify(migrationOps).includes('app.migrate'), 'no second migration queued');

  const noDb = await post('/api/v1/apps/plain/snapshots', 'plain-1');
  t.is(noDb.status, 422);
  t.is(noDb.body.error.code, 'no_postgres');
  const legacy = await request(`${plane.url}/api/apps/ledger-api/snapshots/restore`, {
    method: 'POST',
    json: { snapshot: '20000101T000000', confirm: true },
  });
  t.is(legacy.status, 400);
  t.is(legacy.body.error.code, 'snapshot_not_found');
  const readiness = await request(`${plane.url}/api/operator/snapshot-readiness`);
  t.deepEqual(
    readiness.body.apps.map((a: { app: string }) => a.app),
    ['ledger-api'],
  );
  t.is(answers.checked, 8);
});
