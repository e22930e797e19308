// tier: quick
import path from 'node:path';
import test from 'ava';
import { openControlStore } from '../../store/index.js';
import { openDatabase } from '../../store/database.js';
import { writeRederivable } from '../../store/rederivable-writes.js';
import {
  AppRowsReader,
  getApp,
  listApps,
  removeApp,
  setAppRelease,
  setAppStatus,
  upsertAppSpec,
} from '../../store/control/apps.js';
import { tempDir } from '../helpers/temp-dir.js';

test('AppRowsReader lists what listApps lists, re-parsing only rows whose stored text changed, also within the same millisecond', (t) => {
  const { db } = openControlStore(tempDir(t));
  t.teardown(() => db.close());
  const at = new Date('2026-03-01T00:00:00.000Z');
  upsertAppSpec(db, { name: 'a', file: 'a/infraspec.yaml', findings: [], generation: null }, at);
  upsertAppSpec(db, { name: 'b', file: 'b/infraspec.yaml', findings: [], generation: null }, at);
  const reader = new AppRowsReader(db);
  const first = reader.list();
  t.deepEqual(first, listApps(db));
  const second = reader.list();
  t.is(second[0], first[0], 'an unchanged row is the same object');
  // Changed at the very same timestamp: still seen.
  setAppRelease(db, 'b', { commit: 'c0ffee', dir: '/releases/b' }, at);
  const third = reader.list();
  t.is(third[0], first[0]);
  t.not(third[1], first[1]);
  t.deepEqual(third[1]?.release, { commit: 'c0ffee', dir: '/releases/b' });
  t.deepEqual(third, listApps(db));
  removeApp(db, 'a');
  t.deepEqual(
    reader.list().map((r) => r.name),
    ['b'],
  );
});

test('AppRowsReader sees rows another connection wrote, and a write rolled back is read again as it is', (t) => {
  const dir = tempDir(t);
  const { db } = openControlStore(dir);
  t.teardown(() => db.close());
  const at = new Date('2026-03-01T00:00:00.000Z');
  upsertAppSpec(db, { name: 'a', file: 'a/infraspec.yaml', findings: [], generation: null }, at);
  const reader = new AppRowsReader(db);
  t.deepEqual(
    reader.list().map((r) => r.name),
    ['a'],
  );

  // Another connection (a second process, a restore) writes: this module was not told, SQLite says so.
  const other = openDatabase(path.join(dir, 'control.db'));
  upsertAppSpec(other, { name: 'b', file: 'b/infraspec.yaml', findings: [], generation: null }, at);
  setAppRelease(other, 'a', { commit: 'feed', dir: '/releases/a' }, at);
  other.close();
  const afterOther = reader.list();
  t.deepEqual(afterOther, listApps(db));
  t.deepEqual(afterOther[0]?.release, { commit: 'feed', dir: '/releases/a' });

  // Read inside a transaction that is then rolled back: the row is read again afterwards.
  t.throws(() =>
    db.transaction(() => {
      setAppRelease(db, 'b', { commit: 'gone', dir: '/releases/b' }, at);
      t.is(reader.list()[1]?.release?.commit, 'gone');
      throw new Error('roll back');
    })(),
  );
  t.is(reader.list()[1]?.release, null);
  t.deepEqual(reader.list(), listApps(db));
});

test('a rederivable write commits in one transaction and leaves the connection synchronous FULL', (t) => {
  const dir = tempDir(t);
  const { db } = openControlStore(dir);
  t.teardown(() => db.close());
  const level = () => db.pragma('synchronous', { simple: true });
  t.is(level(), 2);
  const at = new Date('2026-03-01T00:00:00.000Z');
  writeRederivable(db, () => {
    t.true(db.inTransaction);
    upsertAppSpec(db, { name: 'a', file: 'a/infraspec.yaml', findings: [], generation: null }, at);
    setAppStatus(db, 'a', { conditions: [], observedGeneration: 'g1' }, at);
  });
  t.is(level(), 2);
  // A throwing write leaves nothing and restores the level too.
  t.throws(() =>
    writeRederivable(db, () => {
      setAppStatus(db, 'a', { conditions: [], observedGeneration: 'g2' }, at);
      throw new Error('no');
    }),
  );
  t.is(level(), 2);
  db.close();
  const reopened = openDatabase(path.join(dir, 'control.db'));
  t.teardown(() => reopened.close());
  t.is(getApp(reopened, 'a')?.observedGeneration, 'g1');
});
