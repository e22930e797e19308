// tier: quick
import test, { type ExecutionContext } from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { LaneDataBackup } from '../../controllers/platform/index.js';
import { openControlStore, openKnowledgeStore } from '../../store/open-stores.js';
import { enqueueOperation, getOperation } from '../../store/control/operations/operations.js';
import { latestMigration } from '../../store/database-backup.js';
import { tempDir } from '../helpers/temp-dir.js';

function fixture(t: ExecutionContext) {
  const dataDir = tempDir(t);
  const control = openControlStore(dataDir);
  t.teardown(() => control.db.close());
  openKnowledgeStore(dataDir).db.close();
  const backup = new LaneDataBackup({ db: control.db, dataDir, backupsDir: path.join(dataDir, 'platform', 'backups') });
  return { dataDir, db: control.db, backup };
}

test('The upgrade backup copies control.db and knowledge.db whole and consistent, each readable on its own', async (t) => {
  const { dataDir, db, backup } = fixture(t);
  const op = enqueueOperation(db, { kind: 'platform.upgrade', app: null });
  t.regex(
    await backup.take(op.id),
    /^backed up control\.db \([\d.]+ MiB, migration \d+\) and knowledge\.db \([\d.]+ MiB, migration \d+\) in \d+ ms$/,
  );
  const folder = backup.folder(op.id);
  t.is(latestMigration(path.join(folder, 'control.db')), latestMigration(path.join(dataDir, 'control.db')));
  t.is(latestMigration(path.join(folder, 'knowledge.db')), latestMigration(path.join(dataDir, 'knowledge.db')));
  const copy = new Database(path.join(folder, 'control.db'), { readonly: true });
  t.teardown(() => copy.close());
  t.is(
    (copy.prepare('SELECT kind FROM operations WHERE id = ?').get(op.id) as { kind: string }).kind,
    'platform.upgrade',
  );
  t.is(fs.statSync(folder).mode & 0o777, 0o700);
});

test('A resumed attempt keeps the first backup of its upgrade, and a later upgrade replaces the copies of earlier ones', async (t) => {
  const { db, backup } = fixture(t);
  const first = enqueueOperation(db, { kind: 'platform.upgrade', app: null });
  await backup.take(first.id);
  const taken = JSON.parse(fs.readFileSync(path.join(backup.folder(first.id), 'backup.json'), 'utf8')) as {
    takenAt: string;
  };
  // Written after the copy (by the new release, say): a second attempt must not copy it in.
  const later = enqueueOperation(db, { kind: 'app.deploy', app: 'after-the-copy' });
  t.is(await backup.take(first.id), `the backup taken at ${taken.takenAt} is kept`);
  const copy = new Database(path.join(backup.folder(first.id), 'control.db'), { readonly: true });
  t.is(copy.prepare('SELECT id FROM operations WHERE id = ?').get(later.id), undefined);
  copy.close();
  t.truthy(getOperation(db, later.id));
  const second = enqueueOperation(db, { kind: 'platform.upgrade', app: null });
  await backup.take(second.id);
  t.false(fs.existsSync(backup.folder(first.id)), 'only the latest upgrade keeps its copy');
  t.true(fs.existsSync(path.join(backup.folder(second.id), 'backup.json')));
});

test('A backup interrupted before its index was written is taken again', async (t) => {
  const { db, backup } = fixture(t);
  const op = enqueueOperation(db, { kind: 'platform.upgrade', app: null });
  fs.mkdirSync(backup.folder(op.id), { recursive: true });
  fs.writeFileSync(path.join(backup.folder(op.id), 'control.db.partial'), 'half a copy');
  t.regex(await backup.take(op.id), /^backed up control\.db/);
  t.false(fs.existsSync(path.join(backup.folder(op.id), 'control.db.partial')));
});
