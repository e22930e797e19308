// tier: quick
import test from 'ava';
import { openDatabase } from '../../store/database.js';
import { migrate } from '../../store/migrate.js';
import { CONTROL_MIGRATIONS } from '../../store/control/migrations.js';
import { activeGroups } from '../../store/control/events.js';
import { silentLogger } from '../../platform/logger.js';
import { ManualClock } from '../../domain/events/clock.js';
import { EventService } from '../../controllers/events/event-service.js';
import { ActiveGroupsView, MAX_GROUPS_TO_REREAD } from '../../controllers/events/active-groups-view.js';

test('the active view marks nothing before its first read, caps the groups it re-reads one by one, and always reads as a full read does', async (t) => {
  const db = openDatabase(':memory:');
  t.teardown(() => db.close());
  migrate(db, CONTROL_MIGRATIONS);
  const clock = new ManualClock();
  const events = new EventService({ db, clock, source: 'src1', environment: 'test', logger: silentLogger() });
  t.teardown(() => events.close());
  const view = new ActiveGroupsView(db);
  // Each event its own group (its dedupe key is its correlation key), touched as the service touches it.
  const record = async (key: string, app: string) => {
    const result = await events.emit({ type: 'health.failed', severity: 'warning', title: key, app, dedupeKey: key });
    if (!result.recorded) throw new Error(`${key} not recorded`);
    const event = events.get(result.id);
    view.touch({
      source: event.source,
      app: event.app,
      environment: event.environment,
      correlationKey: event.correlationKey,
    });
    clock.advance(1);
  };
  const ids = (groups: readonly { correlationKey: string }[]) => groups.map((g) => g.correlationKey);

  for (let i = 0; i < 5; i++) await record(`early-${i}`, 'a');
  t.is(view.groupsToReread, 0, 'before the first read the next read is a full one: nothing is marked');
  t.deepEqual(ids(view.list(clock.now())), ids(activeGroups(db, clock.now())));
  t.is(view.list(clock.now()).length, 5);

  await record('one-more', 'b');
  t.is(view.groupsToReread, 1);
  t.deepEqual(ids(view.list(clock.now())), ids(activeGroups(db, clock.now())));
  t.is(view.groupsToReread, 0);

  let most = 0;
  for (let i = 0; i < MAX_GROUPS_TO_REREAD + 200; i++) {
    await record(`many-${i}`, `app-${i % 7}`);
    most = Math.max(most, view.groupsToReread);
  }
  t.true(most <= MAX_GROUPS_TO_REREAD, `${most} groups marked`);
  const read = view.list(clock.now());
  t.is(read.length, 6 + MAX_GROUPS_TO_REREAD + 200);
  t.deepEqual(ids(read), ids(activeGroups(db, clock.now())));
});
