// tier: quick
import path from 'node:path';
import test from 'ava';
import { openDatabase } from '../../store/database.js';
import { appliedMigrations, migrate, type Migration } from '../../store/migrate.js';
import { CONTROL_MIGRATIONS, KNOWLEDGE_MIGRATIONS, openControlStore, openKnowledgeStore } from '../../store/index.js';
import { tempDir } from '../helpers/temp-dir.js';

test('every control and knowledge migration applies to a fresh database', (t) => {
  const dir = tempDir(t);
  const control = openControlStore(dir);
  const knowledge = openKnowledgeStore(dir);
  t.teardown(() => {
    control.db.close();
    knowledge.db.close();
  });
  t.is(control.migrations.applied.length, CONTROL_MIGRATIONS.length);
  t.is(knowledge.migrations.applied.length, KNOWLEDGE_MIGRATIONS.length);
  t.deepEqual(
    appliedMigrations(control.db).map((m) => m.version),
    CONTROL_MIGRATIONS.map((m) => m.version),
  );
  t.deepEqual(
    appliedMigrations(knowledge.db).map((m) => m.name),
    KNOWLEDGE_MIGRATIONS.map((m) => m.name),
  );
  t.regex(knowledge.vecVersion, /^v\d+\.\d+\.\d+/);
});

test('openDatabase uses WAL and the synchronous level asked for', (t) => {
  const dir = tempDir(t);
  const full = openDatabase(path.join(dir, 'a.db'));
  const normal = openDatabase(path.join(dir, 'b.db'), { synchronous: 'NORMAL' });
  t.teardown(() => {
    full.close();
    normal.close();
  });
  t.is(full.pragma('journal_mode', { simple: true }), 'wal');
  t.is(full.pragma('synchronous', { simple: true }), 2);
  t.is(normal.pragma('synchronous', { simple: true }), 1);
  t.is(full.pragma('foreign_keys', { simple: true }), 1);
});

test('migrate applies only new migrations on a second run', (t) => {
  const db = openDatabase(path.join(tempDir(t), 'm.db'));
  t.teardown(() => db.close());
  const first: Migration[] = [{ version: 1, name: 'one', sql: 'CREATE TABLE a (x INTEGER)' }];
  t.is(migrate(db, first).applied.length, 1);
  const second = [...first, { version: 2, name: 'two', sql: 'CREATE TABLE b (y INTEGER)' }];
  const result = migrate(db, second);
  t.deepEqual(
    result.applied.map((m) => m.name),
    ['two'],
  );
  t.is(result.latest, 2);
  t.is(migrate(db, second).applied.length, 0);
});

test('migrate refuses a migration edited after it was applied', (t) => {
  const db = openDatabase(path.join(tempDir(t), 'm.db'));
  t.teardown(() => db.close());
  migrate(db, [{ version: 1, name: 'one', sql: 'CREATE TABLE a (x INTEGER)' }]);
  t.throws(() => migrate(db, [{ version: 1, name: 'one', sql: 'CREATE TABLE a (x TEXT)' }]), {
    message: 'migration 1 (one) changed after it was applied: migrations are append-only',
  });
});

test('migrate refuses gaps, and runs on a database a newer release migrated further, reporting what is ahead', (t) => {
  const db = openDatabase(path.join(tempDir(t), 'm.db'));
  t.teardown(() => db.close());
  t.throws(() => migrate(db, [{ version: 2, name: 'two', sql: 'SELECT 1' }]), {
    message: /expected 1: versions are contiguous/,
  });
  migrate(db, [
    { version: 1, name: 'one', sql: 'SELECT 1' },
    { version: 2, name: 'two', sql: 'SELECT 1' },
  ]);
  // A platform rollback does not undo schema changes (spec "Versioning" 3): the older release runs on the newer schema.
  const older = migrate(db, [{ version: 1, name: 'one', sql: 'SELECT 1' }]);
  t.deepEqual(older.applied, []);
  t.deepEqual(
    older.ahead.map((m) => `${m.version}-${m.name}`),
    ['2-two'],
  );
  // An edited migration is still refused.
  t.throws(() => migrate(db, [{ version: 1, name: 'one', sql: 'SELECT 2' }]), {
    message: /changed after it was applied/,
  });
});

test('a failing migration leaves no trace of itself', (t) => {
  const db = openDatabase(path.join(tempDir(t), 'm.db'));
  t.teardown(() => db.close());
  t.throws(() => migrate(db, [{ version: 1, name: 'bad', sql: 'CREATE TABLE a (x INTEGER); THIS IS NOT SQL' }]), {
    any: true,
    message: /syntax error/,
  });
  t.deepEqual(appliedMigrations(db), []);
  t.is((db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'a'").get() as { n: number }).n, 0);
});
