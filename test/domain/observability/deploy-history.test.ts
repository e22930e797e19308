// tier: quick
import test from 'ava';
import {
  DEPLOY_CURSOR_WINDOW_MS,
  DeployHistory,
  durationMs,
  type DeployHistorySeed,
} from '../../../domain/observability/index.js';

const T0 = Date.parse('2026-03-01T12:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();

function seed(overrides: Partial<DeployHistorySeed> = {}): DeployHistorySeed {
  return { totals: [], lastStarts: [], recentFinished: [], recentStarted: [], at: T0, ...overrides };
}

test('DeployHistory starts from the seeded totals and does not count a seeded recent deploy twice', (t) => {
  const recent = {
    id: 'dep_1',
    app: 'shop',
    status: 'succeeded',
    startedAt: iso(T0 - 5000),
    finishedAt: iso(T0 - 1000),
  };
  const history = new DeployHistory(
    seed({ totals: [{ app: 'shop', status: 'succeeded', count: 3, timed: 3, ms: 12_000 }], recentFinished: [recent] }),
  );
  history.addFinished([recent]);
  t.deepEqual(history.totals(), [{ app: 'shop', status: 'succeeded', count: 3, timed: 3, ms: 12_000 }]);
  history.addFinished([
    { id: 'dep_2', app: 'shop', status: 'succeeded', startedAt: iso(T0), finishedAt: iso(T0 + 2500) },
  ]);
  t.deepEqual(history.totals(), [{ app: 'shop', status: 'succeeded', count: 4, timed: 4, ms: 14_500 }]);
});

test('DeployHistory counts a deploy that never started without a duration, by its final status', (t) => {
  const history = new DeployHistory(seed());
  history.addFinished([{ id: 'dep_c', app: 'shop', status: 'cancelled', startedAt: null, finishedAt: iso(T0 + 10) }]);
  t.deepEqual(history.totals(), [{ app: 'shop', status: 'cancelled', count: 1, timed: 0, ms: 0 }]);
});

test('DeployHistory reads back a window behind the newest time it saw, so a late row with an older time is still counted once', (t) => {
  const history = new DeployHistory(seed());
  history.addFinished([{ id: 'a', app: 'x', status: 'failed', startedAt: iso(T0), finishedAt: iso(T0 + 60_000) }]);
  t.is(history.finishedSince(), iso(T0 + 60_000 - DEPLOY_CURSOR_WINDOW_MS));
  // Written after "a" but stamped earlier (another worker's clock): inside the window.
  const late = { id: 'b', app: 'x', status: 'failed', startedAt: iso(T0), finishedAt: iso(T0 + 30_000) };
  history.addFinished([late]);
  history.addFinished([late]);
  t.is(history.totals()[0]?.count, 2);
});

test('DeployHistory keeps the latest start per app and ignores an older one', (t) => {
  const history = new DeployHistory(seed({ lastStarts: [{ app: 'shop', startedAt: iso(T0) }] }));
  history.addStarted([
    { id: 's1', app: 'shop', startedAt: iso(T0 - 60_000) },
    { id: 's2', app: 'api', startedAt: iso(T0 + 1000) },
  ]);
  t.deepEqual(history.lastStarts(), [
    { app: 'api', seconds: (T0 + 1000) / 1000 },
    { app: 'shop', seconds: T0 / 1000 },
  ]);
});

test('durationMs is whole milliseconds, never negative, and undefined without a start', (t) => {
  t.is(durationMs(iso(T0), iso(T0 + 1209)), 1209);
  t.is(durationMs(iso(T0 + 5), iso(T0)), 0);
  t.is(durationMs(null, iso(T0)), undefined);
});
