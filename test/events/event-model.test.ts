// tier: quick
/**
 * Model-based test of the event surface: random sequences of emit, acknowledge, snooze, open,
 * incident actions (including resolve) and clock advances, checked after every step against a
 * small reference model of the spec's rules.
 */
import test from 'ava';
import fc from 'fast-check';
import { openDatabase } from '../../store/database.js';
import { migrate } from '../../store/migrate.js';
import { CONTROL_MIGRATIONS } from '../../store/control/migrations.js';
import { silentLogger } from '../../platform/logger.js';
import { ManualClock } from '../../domain/events/clock.js';
import { EventService } from '../../controllers/events/event-service.js';
import { NotFoundError } from '../../domain/errors.js';
import type { Severity } from '../../domain/events/event-port.js';
import fs from 'node:fs';
import path from 'node:path';
import { tempDir } from '../helpers/temp-dir.js';

const HOUR = 3_600_000;
const CAPACITY_KEY = 'svc-host:h1:minimum-capacity';

interface ModelEvent {
  id: string;
  source: string;
  app: string;
  environment: string;
  type: string;
  severity: Severity;
  key: string;
  state: 'open' | 'acknowledged' | 'snoozed';
  snoozedUntil: number;
}

interface Model {
  now: number;
  events: ModelEvent[];
  dedupe: Map<string, number>;
}

interface Real {
  events: EventService;
  clock: ManualClock;
}

const effective = (e: ModelEvent, now: number) => (e.state === 'snoozed' && e.snoozedUntil <= now ? 'open' : e.state);
const isCapacity = (key: string) => key === CAPACITY_KEY;

/** The model's recovery rule: an info event with an explicit key acknowledges its scope's open alerts. */
function modelRecover(model: Model, e: ModelEvent, explicit: boolean): void {
  if (e.severity !== 'info' || !explicit) return;
  if (isCapacity(e.key) && e.type !== 'service.capacity.recovered') return;
  for (const other of model.events) {
    if (other === e || other.severity === 'info' || other.state === 'acknowledged') continue;
    if (other.source === e.source && other.app === e.app && other.environment === e.environment && other.key === e.key)
      other.state = 'acknowledged';
  }
}

function check(model: Model, real: Real): void {
  for (const e of model.events) {
    const got = real.events.get(e.id);
    if (got.state !== effective(e, model.now))
      throw new Error(
        `event ${e.id} (${e.type} ${e.severity} ${e.key}) reads ${got.state}, model says ${effective(e, model.now)}`,
      );
  }
  const groups = new Map<string, ModelEvent[]>();
  for (const e of model.events) {
    const g = JSON.stringify([e.source, e.app, e.environment, e.key]);
    groups.set(g, [...(groups.get(g) ?? []), e]);
  }
  const expected = new Map<string, { rep: string; count: number }>();
  for (const [g, list] of groups) {
    const open = list.filter((e) => e.severity !== 'info' && effective(e, model.now) === 'open');
    if (open.length > 0) expected.set(g, { rep: open[open.length - 1]!.id, count: list.length });
  }
  const active = real.events.active();
  const actual = new Map(
    active.map((a) => [
      JSON.stringify([a.source, a.app, a.environment, a.correlationKey]),
      { rep: a.representative.id, count: a.eventCount },
    ]),
  );
  const a = JSON.stringify([...actual.entries()].sort());
  const b = JSON.stringify([...expected.entries()].sort());
  if (a !== b) throw new Error(`active groups differ:\n real  ${a}\n model ${b}`);
}

const KINDS = [
  { type: 'svc.warn', severity: 'warning' },
  { type: 'svc.crit', severity: 'critical' },
  { type: 'svc.recovered', severity: 'info' },
  { type: 'service.capacity.below_minimum', severity: 'warning' },
  { type: 'service.capacity.recovered', severity: 'info' },
] as const;

class EmitCommand implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly kind: number,
    readonly app: string,
    readonly key: string | undefined,
    readonly dedupe: string | undefined,
    readonly source: string,
  ) {}
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    const kind = KINDS[this.kind]!;
    const result = await real.events.emit({
      type: kind.type,
      severity: kind.severity,
      app: this.app,
      source: this.source,
      title: 't',
      dedupeKey: this.dedupe,
      metadata: this.key ? { correlationKey: this.key } : {},
    });
    const seen = this.dedupe === undefined ? undefined : model.dedupe.get(this.dedupe);
    const duplicate = seen !== undefined && model.now - seen < HOUR;
    if (duplicate !== !result.recorded)
      throw new Error(`emit ${this.dedupe}: recorded=${result.recorded}, model duplicate=${duplicate}`);
    if (result.recorded) {
      if (this.dedupe !== undefined) model.dedupe.set(this.dedupe, model.now);
      const e: ModelEvent = {
        id: result.id,
        source: this.source,
        app: this.app,
        environment: 'test',
        type: kind.type,
        severity: kind.severity,
        key: this.key ?? this.dedupe ?? result.id,
        state: 'open',
        snoozedUntil: 0,
      };
      model.events.push(e);
      modelRecover(model, e, this.key !== undefined);
    }
    check(model, real);
  }
  toString = () =>
    `emit(${KINDS[this.kind]!.type}, ${this.source}/${this.app}, key=${this.key}, dedupe=${this.dedupe})`;
}

class EventActionCommand implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly action: 'ack' | 'snooze' | 'open',
    readonly index: number,
    readonly durationMs: number,
  ) {}
  check = (model: Readonly<Model>) => model.events.length > 0;
  async run(model: Model, real: Real): Promise<void> {
    const e = model.events[this.index % model.events.length]!;
    if (this.action === 'ack') {
      const got = real.events.acknowledge(e.id, { by: 'op', note: 'n' });
      if (got.acknowledgement?.by !== 'op') throw new Error('acknowledgement not recorded');
      e.state = 'acknowledged';
    } else if (this.action === 'snooze') {
      real.events.snooze(e.id, { duration: this.durationMs });
      e.state = 'snoozed';
      e.snoozedUntil = model.now + this.durationMs;
    } else {
      real.events.reopen(e.id);
      e.state = 'open';
    }
    check(model, real);
  }
  toString = () => `${this.action}(#${this.index}, ${this.durationMs})`;
}

class IncidentCommand implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly action: 'acknowledge' | 'snooze' | 'open' | 'resolve',
    readonly keyIndex: number,
    readonly scoped: boolean,
    readonly durationMs: number,
  ) {}
  check = (model: Readonly<Model>) => model.events.length > 0;
  async run(model: Model, real: Real): Promise<void> {
    const pick = model.events[this.keyIndex % model.events.length]!;
    const inScope = (e: ModelEvent) =>
      e.key === pick.key &&
      (!this.scoped || (e.source === pick.source && e.app === pick.app && e.environment === pick.environment));
    const timeline = model.events.filter(inScope);
    const result = await real.events.incidentAction({
      action: this.action,
      correlationKey: pick.key,
      by: 'op',
      ...(this.scoped ? { source: pick.source, app: pick.app, environment: pick.environment } : {}),
      ...(this.action === 'snooze' ? { duration: this.durationMs } : {}),
    });
    const unacked = timeline.filter((e) => e.severity !== 'info' && e.state !== 'acknowledged');
    if (this.action === 'acknowledge' || this.action === 'resolve') for (const e of unacked) e.state = 'acknowledged';
    if (this.action === 'snooze') {
      for (const e of unacked) {
        e.state = 'snoozed';
        e.snoozedUntil = model.now + this.durationMs;
      }
    }
    if (this.action === 'open') for (const e of timeline) e.state = 'open';
    if (this.action === 'resolve') {
      const scopes = new Map<string, ModelEvent>();
      for (const e of timeline) scopes.set(JSON.stringify([e.source, e.app, e.environment]), e);
      if (result.resolutionEvents.length !== scopes.size)
        throw new Error(
          `resolve emitted ${result.resolutionEvents.length} incident.resolved, model expects ${scopes.size}`,
        );
      const ids = [...result.resolutionEvents];
      for (const scope of scopes.values()) {
        const got = real.events.get(ids.shift()!);
        if (got.type !== 'incident.resolved' || got.severity !== 'info')
          throw new Error('resolve must emit incident.resolved (info)');
        model.events.push({
          id: got.id,
          source: got.source,
          app: got.app,
          environment: got.environment,
          type: got.type,
          severity: 'info',
          key: scope.key,
          state: 'open',
          snoozedUntil: 0,
        });
      }
    }
    check(model, real);
  }
  toString = () => `incident(${this.action}, #${this.keyIndex}, scoped=${this.scoped}, ${this.durationMs})`;
}

class MissingIncidentCommand implements fc.AsyncCommand<Model, Real> {
  check = () => true;
  async run(_model: Model, real: Real): Promise<void> {
    await real.events.incidentAction({ action: 'resolve', correlationKey: 'no-such-key' }).then(
      () => {
        throw new Error('an unknown key must be not found');
      },
      (error: unknown) => {
        if (!(error instanceof NotFoundError)) throw error;
      },
    );
  }
  toString = () => 'resolve(unknown key)';
}

class AdvanceCommand implements fc.AsyncCommand<Model, Real> {
  constructor(readonly ms: number) {}
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    model.now += this.ms;
    real.clock.advance(this.ms);
    check(model, real);
  }
  toString = () => `advance(${this.ms})`;
}

const durations = fc.constantFrom(60_000, 10 * 60_000, 2 * HOUR);
const commands = [
  fc
    .tuple(
      fc.nat(KINDS.length - 1),
      fc.constantFrom('a', 'b'),
      fc.constantFrom(undefined, 'k1', 'k2', CAPACITY_KEY),
      fc.constantFrom(undefined, undefined, 'd1', 'd2', 'd3'),
      fc.constantFrom('src1', 'src1', 'src2'),
    )
    .map(([k, app, key, dedupe, source]) => new EmitCommand(k, app, key, dedupe, source)),
  fc
    .tuple(fc.constantFrom('ack' as const, 'snooze' as const, 'open' as const), fc.nat(50), durations)
    .map(([a, i, d]) => new EventActionCommand(a, i, d)),
  fc
    .tuple(
      fc.constantFrom('acknowledge' as const, 'snooze' as const, 'open' as const, 'resolve' as const),
      fc.nat(50),
      fc.boolean(),
      durations,
    )
    .map(([a, i, s, d]) => new IncidentCommand(a, i, s, d)),
  fc.constant(new MissingIncidentCommand()),
  fc.constantFrom(30_000, 5 * 60_000, 59 * 60_000, 61 * 60_000).map((ms) => new AdvanceCommand(ms)),
];

test('the event surface follows the reference model of dedupe, states, recovery and incident actions', async (t) => {
  await fc.assert(
    fc.asyncProperty(fc.commands(commands, { maxCommands: 40, size: 'max' }), async (cmds) => {
      // synchronous NORMAL: the model checks rules, not durability (the crash test does that)
      const db = openDatabase(':memory:');
      migrate(db, CONTROL_MIGRATIONS);
      const store = { db };
      const clock = new ManualClock();
      const events = new EventService({
        db: store.db,
        clock,
        source: 'src1',
        environment: 'test',
        logger: silentLogger(),
      });
      try {
        await fc.asyncModelRun(
          () => ({ model: { now: clock.now(), events: [], dedupe: new Map() }, real: { events, clock } }),
          cmds,
        );
      } finally {
        await events.close();
        store.db.close();
      }
    }),
    { numRuns: 200 },
  );
  t.pass();
});

test('the dedupe window survives a restart from the events themselves, and the old dedupe table is no longer written', async (t) => {
  const db = openDatabase(':memory:');
  migrate(db, CONTROL_MIGRATIONS);
  const clock = new ManualClock();
  const options = { db, clock, source: 'src1', environment: 'test', logger: silentLogger() };
  const first = new EventService(options);
  const emit = (svc: EventService, key: string) =>
    svc.emit({ type: 'event.test', severity: 'warning', title: key, dedupeKey: key });
  t.true((await emit(first, 'old')).recorded);
  clock.advance(2 * 60_000);
  t.true((await emit(first, 'recent')).recorded);
  t.true((await emit(first, 'recent-again')).recorded);
  t.false((await emit(first, 'recent-again')).recorded);
  await first.close();
  t.is((db.prepare('SELECT COUNT(*) AS n FROM event_dedupe').get() as { n: number }).n, 0);
  clock.advance(HOUR - 60_000); // 'old' is 61 minutes old, 'recent' 59
  const second = new EventService(options);
  t.deepEqual(await emit(second, 'recent'), { recorded: false, reason: 'duplicate' });
  t.true((await emit(second, 'old')).recorded);
  t.true((await emit(second, 'fresh')).recorded);
  await second.close();
  db.close();
});

test('the dedupe keys held in memory stay within their cap: older keys are deduped from control.db, and a restart warms only the newest', async (t) => {
  const db = openDatabase(':memory:');
  migrate(db, CONTROL_MIGRATIONS);
  const clock = new ManualClock();
  const options = { db, clock, source: 'src1', environment: 'test', logger: silentLogger(), dedupeKeysInMemory: 3 };
  const rows = (key: string) =>
    (db.prepare('SELECT COUNT(*) AS n FROM events WHERE dedupe_key = ?').get(key) as { n: number }).n;
  const emit = (svc: EventService, key: string) =>
    svc.emit({ type: 'event.test', severity: 'warning', title: key, dedupeKey: key });
  const first = new EventService(options);
  for (let i = 0; i < 10; i++) {
    t.true((await emit(first, `k${i}`)).recorded);
    clock.advance(1000);
  }
  t.true(first.dedupeKeysHeld() <= 3, `${first.dedupeKeysHeld()} keys held`);
  // k0 left the memory but not the window: the commit finds it in control.db.
  t.deepEqual(await emit(first, 'k0'), { recorded: false, reason: 'duplicate' });
  t.deepEqual(await emit(first, 'k9'), { recorded: false, reason: 'duplicate' });
  const twice = await Promise.all([emit(first, 'k4'), emit(first, 'k4')]);
  t.deepEqual(twice, [
    { recorded: false, reason: 'duplicate' },
    { recorded: false, reason: 'duplicate' },
  ]);
  for (const key of ['k0', 'k4', 'k9']) t.is(rows(key), 1, key);
  t.true(first.dedupeKeysHeld() <= 3, `${first.dedupeKeysHeld()} keys held`);
  await first.close();

  // A restart warms the newest keys only, and still dedupes the older ones from control.db.
  const second = new EventService(options);
  t.is(second.dedupeKeysHeld(), 3);
  t.deepEqual(await emit(second, 'k1'), { recorded: false, reason: 'duplicate' });
  // Past the hour every key may be recorded again.
  clock.advance(HOUR);
  t.true((await emit(second, 'k1')).recorded);
  t.is(rows('k1'), 2);
  t.true(second.dedupeKeysHeld() <= 3, `${second.dedupeKeysHeld()} keys held`);
  await second.close();
  db.close();
});

test('an emit whose flush to disk fails is refused retryably, and a duplicate that waited for it is answered, not held', async (t) => {
  const file = path.join(tempDir(t), 'control.db');
  const db = openDatabase(file);
  t.teardown(() => db.close());
  migrate(db, CONTROL_MIGRATIONS);
  const clock = new ManualClock();
  const events = new EventService({ db, clock, source: 'src1', environment: 'test', logger: silentLogger() });
  t.teardown(() => events.close());
  const emit = (key: string) => events.emit({ type: 'event.test', severity: 'warning', title: key, dedupeKey: key });
  t.true((await emit('before')).recorded);
  // The WAL file gone from under the database: SQLite still writes to its open descriptor, the
  // group's fdatasync cannot open the file and fails, as a failing disk would.
  fs.rmSync(`${file}-wal`);
  const [first, waiting] = await Promise.allSettled([emit('k'), emit('k')]);
  for (const outcome of [first, waiting]) {
    t.is(outcome.status, 'rejected');
    t.is(((outcome as PromiseRejectedResult).reason as { code?: string }).code, 'sync_failed');
  }
  // Written but not flushed: the row is there, so a retry is answered as a duplicate by the commit.
  t.is((db.prepare("SELECT COUNT(*) AS n FROM events WHERE dedupe_key = 'k'").get() as { n: number }).n, 1);
  await t.throwsAsync(emit('k'), { message: /not flushed to disk/ });
  t.is((db.prepare("SELECT COUNT(*) AS n FROM events WHERE dedupe_key = 'k'").get() as { n: number }).n, 1);
});
