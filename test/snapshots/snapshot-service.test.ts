// tier: full
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { SnapshotService } from '../../controllers/snapshots/snapshot-service.js';
import { UnprocessableError, ValidationError } from '../../domain/errors.js';
import type { EventInput } from '../../domain/events/index.js';
import { validateInfraspec } from '../../domain/spec/index.js';
import { S3Snapshots } from '../../platform/object-storage/s3-snapshots.js';
import { PostgresTools } from '../../platform/postgres/postgres-tools.js';
import { SnapshotFolder } from '../../platform/snapshots/snapshot-folder.js';
import { openControlStore } from '../../store/open-stores.js';
import { upsertAppSpec } from '../../store/control/apps.js';
import { startPostgres, type PostgresCluster } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp-dir.js';
import { startS3Server } from '../helpers/s3-server.js';

let cluster: PostgresCluster;
test.before(async () => {
  cluster = await startPostgres();
});
test.after.always(() => cluster?.stop());

const SPEC = `name: ledger-api
deploy: true
infrastructure:
  postgres:
    database: ledger
snapshots:
  keep: 2
  preRestore: true
  exportBucket: backups
processes:
  web:
    port: 8080
`;

test('SnapshotService takes, restores with a safety snapshot, prunes, migrates, exports and imports', async (t) => {
  const root = tempDir(t);
  cluster.psql('CREATE DATABASE ledger');
  cluster.psql('CREATE TABLE entries (amount integer); INSERT INTO entries VALUES (10)', 'ledger');
  const store = openControlStore(path.join(root, 'data'));
  t.teardown(() => store.db.close());
  const validation = validateInfraspec(SPEC);
  t.true(validation.valid);
  upsertAppSpec(store.db, {
    name: 'ledger-api',
    file: 'ledger-api/infraspec.yaml',
    spec: validation.spec,
    findings: [],
    generation: 'g1',
  });
  upsertAppSpec(store.db, {
    name: 'plain',
    file: 'plain/infraspec.yaml',
    spec: validateInfraspec('name: plain\nprocesses:\n  w:\n    command: x\n').spec,
    findings: [],
    generation: 'g2',
  });

  const { port } = await startS3Server(t, ['backups'], path.join(root, 's3'));
  const s3 = new S3Snapshots({ endpoint: `http://127.0.0.1:${port}`, accessKey: 'S3RVER', secretKey: 'S3RVER' });
  t.teardown(() => s3.destroy());
  const events: EventInput[] = [];
  let clock = Date.parse('2026-01-01T00:00:00Z');
  const service = new SnapshotService({
    db: store.db,
    folder: new SnapshotFolder(path.join(root, 'snapshots')),
    postgres: new PostgresTools({ host: cluster.host, port: cluster.port, user: cluster.user, binDir: cluster.binDir }),
    s3,
    events: { emit: async (e) => (events.push(e), { recorded: true, id: `evt_${events.length}` }) },
    now: () => new Date((clock += 1000)),
  });

  const first = await service.take('ledger-api', 'manual', 'abcdef1234567');
  t.regex(first.filename, /^ledger_manual_abcdef123456_20260101T000001\.dump$/);
  cluster.psql('UPDATE entries SET amount = 99', 'ledger');

  const receipt = await service.restore('ledger-api', first.filename);
  t.is(receipt.restoredSnapshot, first.filename);
  t.regex(receipt.safetySnapshot ?? '', /^ledger_prerestore_none_/);
  t.is(receipt.database, 'ledger');
  t.is(cluster.psql('SELECT amount FROM entries', 'ledger').trim(), '10');
  t.deepEqual(
    events.map((e) => [e.type, e.metadata?.correlationKey]),
    [['snapshot.restored', 'ledger-api:snapshots']],
  );

  await service.take('ledger-api', 'manual');
  t.is(service.inventory('ledger-api').snapshots.length, 3);
  const preview = service.retentionPreview('ledger-api');
  t.deepEqual(
    preview.entries.map((e) => e.action),
    ['keep', 'keep', 'would-prune'],
  );
  t.is(service.inventory('ledger-api').snapshots.length, 3, 'preview deletes nothing');
  const applied = await service.applyRetention('ledger-api');
  t.deepEqual(applied.deleted, [first.filename]);
  t.is(service.inventory('ledger-api').snapshots.length, 2);

  const migrations = path.join(root, 'migrations');
  fs.mkdirSync(migrations);
  fs.writeFileSync(path.join(migrations, '001_add.sql'), 'ALTER TABLE entries ADD COLUMN note text;');
  const migrated = await service.migrate('ledger-api', migrations);
  t.deepEqual(migrated.applied, ['001_add.sql']);
  t.regex(migrated.preMigrationSnapshot, /^ledger_premigrate_/);

  const exported = await service.exportLatest('ledger-api');
  t.is(exported.filename, service.inventory('ledger-api').snapshots[0]!.filename);
  t.deepEqual(
    (await service.listRemote('ledger-api')).map((r) => r.key),
    [exported.key],
  );
  fs.rmSync(path.join(root, 'snapshots', exported.filename));
  const imported = await service.importRemote('ledger-api', exported.key);
  t.is(imported.filename, exported.filename);
  t.true(
    events.some((e) => e.type === 'snapshot.exported') &&
      events.some((e) => e.type === 'snapshot.imported') &&
      events.some((e) => e.type === 'snapshot.retention.applied'),
  );

  const readiness = service.readiness();
  t.deepEqual(
    readiness.apps.map((a) => a.app),
    ['ledger-api'],
    'only apps declaring a database are app-owned',
  );
  t.is(readiness.apps[0]!.export.configured, true);
  t.throws(() => service.inventory('plain'), {
    instanceOf: UnprocessableError,
    message: /declares no infrastructure.postgres.database/,
  });
  await t.throwsAsync(() => service.restore('ledger-api', '../../etc/passwd'), { instanceOf: ValidationError });
});

test('two snapshots of one kind and commit within the same second both keep their dump, the second named a second later', async (t) => {
  const root = tempDir(t);
  cluster.psql('CREATE DATABASE journal');
  const store = openControlStore(path.join(root, 'data'));
  t.teardown(() => store.db.close());
  upsertAppSpec(store.db, {
    name: 'journal',
    file: 'journal/infraspec.yaml',
    spec: validateInfraspec(SPEC.replace('ledger-api', 'journal').replace('database: ledger', 'database: journal'))
      .spec,
    findings: [],
    generation: 'g1',
  });
  const frozen = Date.parse('2026-01-01T00:00:00Z');
  const service = new SnapshotService({
    db: store.db,
    folder: new SnapshotFolder(path.join(root, 'snapshots')),
    postgres: new PostgresTools({ host: cluster.host, port: cluster.port, user: cluster.user, binDir: cluster.binDir }),
    events: { emit: async () => ({ recorded: true, id: 'evt_1' }) },
    now: () => new Date(frozen),
  });
  const first = await service.take('journal', 'premigrate', 'abcdef1234567');
  const second = await service.take('journal', 'premigrate', 'abcdef1234567');
  t.is(first.filename, 'journal_premigrate_abcdef123456_20260101T000000.dump');
  t.is(second.filename, 'journal_premigrate_abcdef123456_20260101T000001.dump');
  t.is(service.inventory('journal').snapshots.length, 2);
});
