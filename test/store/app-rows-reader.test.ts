import test from 'ava';
import { openControlStore } from '../../store/index.js';
import { AppRowsReader, listApps, removeApp, setAppRelease, upsertAppSpec } from '../../store/control/apps.js';
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
