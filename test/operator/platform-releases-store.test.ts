// tier: quick
import test from 'ava';
import { openControlStore } from '../../store/open-stores.js';
import {
  platformOperations,
  platformReleaseGroups,
  recentPlatformStarts,
  recordPlatformStart,
} from '../../store/control/platform-releases.js';
import { enqueueOperation } from '../../store/control/operations/operations.js';
import { tempDir } from '../helpers/temp-dir.js';

const start = (version: string, commit: string | null, startedAt: string) => ({
  version,
  label: `v${version}-platform`,
  commit,
  node: 'v20.0.0',
  profile: 'development',
  startedAt,
});

test('platform release records are appended per start, grouped by build and never changed', (t) => {
  const store = openControlStore(tempDir(t));
  t.teardown(() => store.db.close());
  recordPlatformStart(store.db, start('0.1.0', 'a'.repeat(40), '2025-01-01T00:00:00.000Z'));
  recordPlatformStart(store.db, start('0.1.0', 'a'.repeat(40), '2025-01-02T00:00:00.000Z'));
  recordPlatformStart(store.db, start('0.2.0', null, '2025-02-01T00:00:00.000Z'));
  t.deepEqual(platformReleaseGroups(store.db, 10), [
    {
      version: '0.2.0',
      label: 'v0.2.0-platform',
      commit: null,
      firstSeenAt: '2025-02-01T00:00:00.000Z',
      lastSeenAt: '2025-02-01T00:00:00.000Z',
      starts: 1,
    },
    {
      version: '0.1.0',
      label: 'v0.1.0-platform',
      commit: 'a'.repeat(40),
      firstSeenAt: '2025-01-01T00:00:00.000Z',
      lastSeenAt: '2025-01-02T00:00:00.000Z',
      starts: 2,
    },
  ]);
  t.deepEqual(
    recentPlatformStarts(store.db, 2).map((s) => s.startedAt),
    ['2025-02-01T00:00:00.000Z', '2025-01-02T00:00:00.000Z'],
  );
  t.throws(() => store.db.prepare("UPDATE platform_releases SET version = 'x'").run(), {
    any: true,
    message: /append-only/,
  });
  t.throws(() => store.db.prepare('DELETE FROM platform_releases').run(), { any: true, message: /append-only/ });
  t.is(recentPlatformStarts(store.db, 10).length, 3);
});

test('platformOperations lists only platform lane operations, newest first', (t) => {
  const store = openControlStore(tempDir(t));
  t.teardown(() => store.db.close());
  enqueueOperation(store.db, { id: 'op_platform_1', kind: 'platform.preflight', app: null });
  enqueueOperation(store.db, { id: 'op_app_1', kind: 'app.deploy', app: 'web' });
  enqueueOperation(store.db, { id: 'op_platform_2', kind: 'platform.upgrade', app: null });
  t.deepEqual(
    platformOperations(store.db, 10).map((o) => o.id),
    ['op_platform_2', 'op_platform_1'],
  );
  t.deepEqual(
    platformOperations(store.db, 1).map((o) => o.id),
    ['op_platform_2'],
  );
});
