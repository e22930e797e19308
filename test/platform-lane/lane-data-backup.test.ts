import test, { type ExecutionContext } from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { LaneDataBackup } from '../../controllers/platform/index.js';
import { openControlStore, openKnowledgeStore } from '../../store/open-stores.js';
import { openDatabase } from '../../store/database.js';
import { migrate } from '../../store/migrate.js';
import { CONTROL_MIGRATIONS } from '../../store/control/migrations.js';
import { KNOWLEDGE_MIGRATIONS } from '../../store/knowledge/migrations.js';
import { claimOperations, enqueueOperation, getOperation, recordStage } from '../../store/control/operations.js';
import { endLaneStep, getPlatformUpgrade, listLaneSteps, savePlatformUpgrade, startLaneStep } from '../../store/control/platform-lane.js';
import { latestMigration } from '../../store/database-backup.js';
import { tempDir } from '../helpers/temp-dir.js';

/** What a newer release does at start: one more migration, then writes of its own. */
function migrateAsNewerRelease(file: string, base: typeof CONTROL_MIGRATIONS, table: string): void {
  const db = openDatabase(file);
  try {
    migrate(db, [...base, { version: base.length + 1, name: `newer-${table}`, sql: `CREATE TABLE ${table} (x INTEGER); INSERT INTO ${table} VALUES (1);` }]);
  } finally {
    db.close();
  }
}

function fixture(t: ExecutionContext) {
  const dataDir = tempDir(t);
  const control = openControlStore(dataDir);
  t.teardown(() => control.db.close());
  openKnowledgeStore(dataDir).db.close();
  const backup = new LaneDataBackup({ db: control.db, dataDir, backupsDir: path.join(dataDir, 'platform', 'backups') });
  const op = enqueueOperation(control.db, { kind: 'platform.upgrade', app: null });
  claimOperations(control.db, { owner: 'agent-1', leaseMs: 60_000, kinds: ['platform.upgrade'], limit: 1 });
  savePlatformUpgrade(control.db, op.id, { phase: 'promoted', fromRelease: 'old', toRelease: 'new', drainMode: 'fail' });
  return { dataDir, db: control.db, backup, op };
}

test('A restore after a newer release migrated both databases brings back the backed-up schemas and keeps the rows the lane wrote after the backup', async (t) => {
  const { dataDir, db, backup, op } = fixture(t);
  const controlBefore = latestMigration(path.join(dataDir, 'control.db'));
  const knowledgeBefore = latestMigration(path.join(dataDir, 'knowledge.db'));
  t.regex(await backup.take(op.id), /^backed up control\.db \([\d.]+ MiB, migration \d+\) and knowledge\.db \([\d.]+ MiB, migration \d+\) in \d+ ms$/);

  // The new release starts, migrates, writes; meanwhile the lane records its own progress.
  migrateAsNewerRelease(path.join(dataDir, 'control.db'), CONTROL_MIGRATIONS, 'newer_control');
  migrateAsNewerRelease(path.join(dataDir, 'knowledge.db'), KNOWLEDGE_MIGRATIONS, 'newer_knowledge');
  const unrelated = enqueueOperation(db, { kind: 'app.deploy', app: 'written-by-the-failed-release' });
  const postflight = startLaneStep(db, op.id, 1, 'postflight');
  endLaneStep(db, postflight, 'failed', 'the API did not answer');
  savePlatformUpgrade(db, op.id, { phase: 'rolling_back', message: 'postflight failed' });
  recordStage(db, op.id, 'agent-1', 'rollback', true);
  const rollback = startLaneStep(db, op.id, 1, 'rollback');

  const note = await backup.restoreIfMigrated(op.id);
  t.regex(note, new RegExp(`^control\\.db restored from the backup of \\S+ \\(migration ${controlBefore + 1} -> ${controlBefore};.*; knowledge\\.db restored from the backup of \\S+ \\(migration ${knowledgeBefore + 1} -> ${knowledgeBefore};`));
  t.is(latestMigration(path.join(dataDir, 'control.db')), controlBefore);
  t.is(latestMigration(path.join(dataDir, 'knowledge.db')), knowledgeBefore);
  // The agent's handle, open across the restore, reads the restored database.
  t.is((db.prepare("SELECT COUNT(*) AS n FROM sqlite_master WHERE name = 'newer_control'").get() as { n: number }).n, 0);
  t.is(getOperation(db, unrelated.id), undefined, 'what the failed release wrote is discarded');
  // The lane's rows survived: the upgrade record, both steps (the running one can still end), the operation's stage.
  t.is(getPlatformUpgrade(db, op.id)?.phase, 'rolling_back');
  t.deepEqual(listLaneSteps(db, op.id).map((s) => `${s.step} ${s.status}`), ['postflight failed', 'rollback running']);
  endLaneStep(db, rollback, 'succeeded', 'back');
  t.deepEqual(listLaneSteps(db, op.id).map((s) => `${s.step} ${s.status}`), ['postflight failed', 'rollback succeeded']);
  t.is(getOperation(db, op.id)?.stage, 'rollback');
  const knowledge = openKnowledgeStore(dataDir).db;
  t.teardown(() => knowledge.close());
  t.is((knowledge.prepare("SELECT COUNT(*) AS n FROM sqlite_master WHERE name = 'newer_knowledge'").get() as { n: number }).n, 0);
});

test('A release that migrated nothing restores nothing, and a resumed attempt keeps the first backup', async (t) => {
  const { dataDir, db, backup, op } = fixture(t);
  await backup.take(op.id);
  const taken = JSON.parse(fs.readFileSync(path.join(backup.folder(op.id), 'backup.json'), 'utf8')) as { takenAt: string };
  const later = enqueueOperation(db, { kind: 'app.deploy', app: 'kept' });
  t.is(await backup.take(op.id), `the backup taken at ${taken.takenAt} is kept`);
  t.is(await backup.restoreIfMigrated(op.id), 'no database was migrated by the failed release');
  t.truthy(getOperation(db, later.id), 'rows written after the backup stay when nothing is restored');
  backup.discard(op.id);
  t.false(fs.existsSync(backup.folder(op.id)));
  t.is(await backup.restoreIfMigrated(op.id), 'no database backup was taken for this upgrade');
  t.true(fs.existsSync(path.join(dataDir, 'control.db')));
});

test('A backup interrupted before its index was written is taken again', async (t) => {
  const { backup, op } = fixture(t);
  fs.mkdirSync(backup.folder(op.id), { recursive: true });
  fs.writeFileSync(path.join(backup.folder(op.id), 'control.db.partial'), 'half a copy');
  t.regex(await backup.take(op.id), /^backed up control\.db/);
  t.false(fs.existsSync(path.join(backup.folder(op.id), 'control.db.partial')));
});
