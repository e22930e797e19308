// tier: quick
import test from 'ava';
import { waitForAllocations, type Allocation, type JobStatus, type Scheduler } from '../../domain/scheduler/index.js';
import { LocalRegistry } from '../../platform/local-registry/index.js';
import { silentLogger } from '../../platform/logger.js';
import { ManualClock } from '../../domain/events/clock.js';
import { AllocationWatcher } from '../../controllers/events/allocation-watcher.js';
import { CronWatcher } from '../../controllers/events/cron-watcher.js';
import { CapacityWatcher } from '../../controllers/events/capacity-watcher.js';
import { HealthWatcher } from '../../controllers/events/health-watcher.js';
import type { Substrate } from '../../controllers/events/substrate-queries.js';
import { HOG_JS, openDriver, serviceGroup, serviceJob } from '../platform/local-scheduler/fixtures.js';
import { eventServices } from './event-harness.js';

const MIN = 60_000;

test('the allocation watcher reports a real OOM kill and restart with task, group, allocation, count and message', async (t) => {
  const { surface, metrics } = await eventServices(t);
  const { driver, appDir } = await openDriver(t, { 'hog.mjs': HOG_JS });
  const substrate: Substrate = { schedulers: async () => [driver], registry: new LocalRegistry() };
  const watcher = new AllocationWatcher({
    events: surface.events,
    substrate,
    clock: new ManualClock(),
    logger: silentLogger(),
    metrics,
    intervalMs: 50,
  });
  await watcher.start();
  t.teardown(() => watcher.close());
  const unsubscribe = driver.watch((change) => void watcher.observe(change.allocation));
  t.teardown(unsubscribe);
  await driver.submitJob(
    serviceJob(
      'demo-hog',
      serviceGroup({
        name: 'hog',
        command: [process.execPath, 'hog.mjs'],
        workdir: appDir,
        memoryMb: 64,
        check: false,
      }),
    ),
  );
  const [alloc] = await waitForAllocations(
    driver,
    (a) => a.length === 1 && a[0]!.task.oomKilled && a[0]!.task.restarts >= 1,
    { filter: { jobId: 'demo-hog' }, timeoutMs: 15_000 },
  );
  await watcher.scan();
  await surface.events.flushed();
  const oom = surface.events.list({ type: 'scheduler.task.oom_killed', limit: 10, offset: 0 }).events;
  const restarts = surface.events.list({ type: 'scheduler.task.restarted', limit: 10, offset: 0 }).events;
  t.true(oom.length >= 1);
  t.true(restarts.length >= 1);
  t.like(oom.at(-1)!, { severity: 'critical', app: 'demo' });
  t.like(oom.at(-1)!.metadata, {
    correlationKey: 'demo:hog:hog:restarts',
    allocationId: alloc!.id,
    taskGroup: 'hog',
    task: 'hog',
  });
  t.regex(String(oom.at(-1)!.metadata.lastMessage), /memory|limit|restart/i);
  t.is(typeof restarts.at(-1)!.metadata.restartCount, 'number');
  const text = (await metrics.text()).body;
  t.regex(text, /svc_task_oom_kills_total\{app="demo",process="hog",task="hog"\} [1-9]/);
  t.regex(text, /svc_task_restarts_total\{app="demo",process="hog",task="hog"\} [1-9]/);
});

function allocation(
  overrides: Partial<Allocation> & { restarts?: number; oom?: boolean; startedAt?: string },
): Allocation {
  const base: Allocation = {
    id: 'alloc-1',
    jobId: 'shop-report',
    app: 'shop',
    taskGroup: 'report',
    jobVersion: 1,
    kind: 'group',
    index: 0,
    canary: false,
    status: 'running',
    desiredStatus: 'run',
    region: 'local',
    datacenter: 'dc1',
    nodePool: 'default',
    ports: [],
    memory: { currentRssBytes: 0, peakRssBytes: 0, limitBytes: 64 << 20 },
    task: {
      name: 'report',
      state: 'running',
      failed: false,
      restarts: overrides.restarts ?? 0,
      oomKilled: overrides.oom ?? false,
      lastEventMessage: 'exit 1',
      events: [],
      startedAt: overrides.startedAt,
    },
    createdAt: '2026-01-01T00:00:00.000Z',
    modifiedAt: '2026-01-01T00:00:00.000Z',
  };
  return { ...base, ...overrides };
}

function stubScheduler(state: { jobs: JobStatus[]; allocations: Allocation[] }): Scheduler {
  return {
    listJobs: async () => state.jobs,
    getJob: async (id: string) => state.jobs.find((j) => j.spec.id === id),
    listAllocations: async (filter?: { jobId?: string; app?: string }) =>
      state.allocations.filter(
        (a) => (!filter?.jobId || a.jobId === filter.jobId) && (!filter?.app || a.app === filter.app),
      ),
    getAllocation: async (id: string) => state.allocations.find((a) => a.id === id),
  } as unknown as Scheduler;
}

test('periodic child outcomes become cron events; a later success resolves the failure; allocation failures and hung runs are reported', async (t) => {
  const { surface } = await eventServices(t);
  const clock = new ManualClock(Date.parse('2026-01-01T03:00:00.000Z'));
  const state = { jobs: [] as JobStatus[], allocations: [] as Allocation[] };
  const watcher = new AllocationWatcher({
    events: surface.events,
    substrate: { schedulers: async () => [stubScheduler(state)], registry: new LocalRegistry() },
    clock,
    logger: silentLogger(),
    hungAfterMs: 30 * MIN,
  });
  await watcher.start();
  t.teardown(() => watcher.close());
  await watcher.observe(allocation({ id: 'child-1', kind: 'periodic_child', status: 'running' }));
  await watcher.observe(allocation({ id: 'child-1', kind: 'periodic_child', status: 'failed' }));
  const failed = surface.events.list({ type: 'cron.failed', limit: 5, offset: 0 }).events[0]!;
  t.like(failed.metadata, { correlationKey: 'shop:report:cron', previousState: 'running', allocationId: 'child-1' });
  await watcher.observe(allocation({ id: 'child-2', kind: 'periodic_child', status: 'running' }));
  await watcher.observe(allocation({ id: 'child-2', kind: 'periodic_child', status: 'complete' }));
  t.is(surface.events.get(failed.id).state, 'acknowledged', 'cron.succeeded on the same key resolves the failure');
  await watcher.observe(allocation({ id: 'web-1', status: 'running' }));
  await watcher.observe(allocation({ id: 'web-1', status: 'lost' }));
  t.like(surface.events.list({ type: 'scheduler.allocation.lost', limit: 5, offset: 0 }).events[0]!.metadata, {
    correlationKey: 'shop:report:allocation',
    previousState: 'running',
  });
  await watcher.observe(
    allocation({ id: 'child-3', kind: 'periodic_child', status: 'running', startedAt: '2026-01-01T02:00:00.000Z' }),
  );
  t.is(surface.events.list({ type: 'cron.hung', limit: 5, offset: 0 }).total, 1);
  await watcher.observe(
    allocation({ id: 'child-3', kind: 'periodic_child', status: 'running', startedAt: '2026-01-01T02:00:00.000Z' }),
  );
  t.is(surface.events.list({ type: 'cron.hung', limit: 5, offset: 0 }).total, 1, 'reported once');
});

test('missed runs: a tick without a child within 5 minutes is reported once; paused and stopped jobs are excluded', async (t) => {
  const { surface, metrics } = await eventServices(t);
  const clock = new ManualClock(Date.parse('2026-01-01T00:00:30.000Z'));
  const job = (id: string, extra: Partial<JobStatus> = {}): JobStatus => ({
    spec: {
      id,
      app: 'shop',
      type: 'periodic',
      taskGroups: [{ name: id.split('-')[1]! }],
      periodic: { cron: '*/10 * * * *' },
    } as unknown as JobStatus['spec'],
    version: 1,
    status: 'running',
    paused: false,
    awaitingPromotion: [],
    submittedAt: '2026-01-01T00:00:00.000Z',
    ...extra,
  });
  const state = {
    jobs: [job('shop-report'), job('shop-paused', { paused: true }), job('shop-stopped', { status: 'dead' })],
    allocations: [] as Allocation[],
  };
  const cron = new CronWatcher({
    events: surface.events,
    substrate: { schedulers: async () => [stubScheduler(state)], registry: new LocalRegistry() },
    clock,
    logger: silentLogger(),
    metrics,
  });
  t.deepEqual(await cron.check(), []);
  // The 00:10 run happened (child created 00:10:02); the 00:20 run did not.
  state.allocations.push(
    allocation({
      id: 'c1',
      jobId: 'shop-report',
      kind: 'periodic_child',
      status: 'complete',
      createdAt: '2026-01-01T00:10:02.000Z',
    }),
  );
  clock.set(Date.parse('2026-01-01T00:24:00.000Z'));
  t.deepEqual(await cron.check(), [], 'the 00:20 run still has until 00:25');
  clock.set(Date.parse('2026-01-01T00:25:01.000Z'));
  const missed = await cron.check();
  t.deepEqual(missed, [{ jobId: 'shop-report', expectedAt: '2026-01-01T00:20:00.000Z' }]);
  t.deepEqual(await cron.check(), [], 'reported once');
  const event = surface.events.list({ type: 'cron.missed_run', limit: 5, offset: 0 }).events;
  t.is(event.length, 1);
  t.like(event[0]!, { severity: 'critical', app: 'shop', dedupeKey: 'shop-report:missed:2026-01-01T00:20:00.000Z' });
  t.like(event[0]!.metadata, { correlationKey: 'shop:report:cron', expectedAt: '2026-01-01T00:20:00.000Z' });
  t.regex((await metrics.text()).body, /svc_cron_missed_runs_total\{app="shop",process="report"\} 1/);
  t.regex((await metrics.text()).body, /svc_cron_missed_runs_total\{app="shop",process="paused"\} 0/);
});

test('capacity: one warning per episode and snapshot, one recovery per episode, host-scoped key, state kept only after acceptance', async (t) => {
  const { surface, db } = await eventServices(t);
  let sample = { freeMemoryBytes: 10, freeDiskBytes: 1_000 };
  const watcher = new CapacityWatcher({
    db,
    events: surface.events,
    clock: new ManualClock(),
    logger: silentLogger(),
    hostId: 'node-a',
    minimums: { memoryBytes: 100, diskBytes: 100 },
    probe: async () => sample,
    source: 'svc-control-plane',
    eventEnvironment: undefined,
  });
  t.is(await watcher.check(), 'warning');
  t.is(await watcher.check(), 'none', 'same episode and snapshot');
  sample = { freeMemoryBytes: 10, freeDiskBytes: 10 };
  t.is(await watcher.check(), 'warning', 'the missing-capacity snapshot changed');
  const warnings = surface.events.list({ type: 'service.capacity.below_minimum', limit: 5, offset: 0 }).events;
  t.is(warnings.length, 2);
  const episodes = warnings.map((w) => w.dedupeKey!.split(':')[1]);
  t.is(episodes[0], episodes[1], 'one episode');
  t.not(warnings[0]!.dedupeKey, warnings[1]!.dedupeKey);
  t.is(warnings[0]!.correlationKey, 'svc-host:node-a:minimum-capacity');
  sample = { freeMemoryBytes: 1_000, freeDiskBytes: 1_000 };
  t.is(await watcher.check(), 'recovered');
  const recovered = surface.events.list({ type: 'service.capacity.recovered', limit: 5, offset: 0 }).events[0]!;
  t.is(recovered.dedupeKey, `capacity:${episodes[0]}:recovered`);
  for (const w of warnings) t.is(surface.events.get(w.id).state, 'acknowledged');
  t.is(await watcher.check(), 'none');
});

test('capacity recovery adopts one matching legacy warning only with SVC_EVENT_ENVIRONMENT set; otherwise it retries', async (t) => {
  const { surface, db } = await eventServices(t);
  let sample = { freeMemoryBytes: 10, freeDiskBytes: 1_000 };
  const legacy = async (missing: string[], environment = 'test') => {
    const r = await surface.events.emit({
      type: 'service.capacity.below_minimum',
      severity: 'warning',
      title: 'legacy',
      environment,
      metadata: { correlationKey: 'svc-host:minimum-capacity', missing },
    });
    return r.recorded ? r.id : '';
  };
  const matching = await legacy(['memory']);
  const otherSnapshot = await legacy(['disk']);
  const make = (eventEnvironment: string | undefined) =>
    new CapacityWatcher({
      db,
      events: surface.events,
      clock: new ManualClock(),
      logger: silentLogger(),
      hostId: 'node-a',
      minimums: { memoryBytes: 100, diskBytes: 100 },
      probe: async () => sample,
      source: 'svc-control-plane',
      eventEnvironment,
    });
  t.is(await make(undefined).check(), 'warning');
  sample = { freeMemoryBytes: 1_000, freeDiskBytes: 1_000 };
  t.is(await make(undefined).check(), 'none', 'missing environment configuration defers the recovery');
  t.is(await make('test').check(), 'recovered');
  t.is(surface.events.get(matching).state, 'acknowledged', 'the one legacy warning with the same snapshot is adopted');
  t.is(surface.events.get(otherSnapshot).state, 'open');
  const recovery = surface.events.list({ type: 'service.capacity.recovered', limit: 5, offset: 0 }).events[0]!;
  t.is(recovery.metadata.legacyCapacityWarningID, matching);
});

test('capacity rules: only service.capacity.recovered closes; the legacy global key needs one exact legacyCapacityWarningID', async (t) => {
  const { surface } = await eventServices(t);
  const ev = surface.events;
  const emit = async (
    type: string,
    severity: 'info' | 'warning',
    key: string,
    extra: Record<string, unknown> = {},
    environment?: string,
  ) => {
    const r = await ev.emit({ type, severity, title: type, metadata: { correlationKey: key, ...extra }, environment });
    if (!r.recorded) throw new Error('not recorded');
    return r.id;
  };
  const scoped = await emit('service.capacity.below_minimum', 'warning', 'svc-host:a:minimum-capacity');
  await emit('service.health.recovered', 'info', 'svc-host:a:minimum-capacity');
  t.is(ev.get(scoped).state, 'open', 'another info type does not close capacity');
  const legacy1 = await emit('service.capacity.below_minimum', 'warning', 'svc-host:minimum-capacity');
  const legacy2 = await emit('service.capacity.below_minimum', 'warning', 'svc-host:minimum-capacity');
  await emit('service.capacity.recovered', 'info', 'svc-host:minimum-capacity');
  t.is(ev.get(legacy1).state, 'open', 'a legacy recovery without an id closes nothing');
  await emit('service.capacity.recovered', 'info', 'svc-host:minimum-capacity', { legacyCapacityWarningID: legacy1 });
  t.is(ev.get(legacy1).state, 'acknowledged');
  t.is(ev.get(legacy2).state, 'open');
  // A host-scoped recovery may adopt one named legacy warning of the same source and environment.
  await emit(
    'service.capacity.recovered',
    'info',
    'svc-host:b:minimum-capacity',
    { legacyCapacityWarningID: legacy2 },
    'elsewhere',
  );
  t.is(ev.get(legacy2).state, 'open', 'another environment does not adopt');
  await emit('service.capacity.recovered', 'info', 'svc-host:a:minimum-capacity', { legacyCapacityWarningID: legacy2 });
  t.is(ev.get(legacy2).state, 'acknowledged');
  t.is(ev.get(scoped).state, 'acknowledged');
});

test('recovery is scoped: a later info event with another key, source, app or environment resolves nothing', async (t) => {
  const { surface } = await eventServices(t);
  const ev = surface.events;
  const warn = await ev.emit({
    type: 'service.health.warning',
    severity: 'warning',
    app: 'web',
    title: 'w',
    metadata: { correlationKey: 'web:web:health' },
  });
  if (!warn.recorded) return t.fail();
  await ev.emit({
    type: 'service.health.recovered',
    severity: 'info',
    app: 'web',
    title: 'r',
    metadata: { correlationKey: 'web:worker:health' },
  });
  await ev.emit({
    type: 'service.health.recovered',
    severity: 'info',
    app: 'web',
    source: 'other',
    title: 'r',
    metadata: { correlationKey: 'web:web:health' },
  });
  await ev.emit({
    type: 'service.health.recovered',
    severity: 'info',
    app: 'api',
    title: 'r',
    metadata: { correlationKey: 'web:web:health' },
  });
  await ev.emit({
    type: 'service.health.recovered',
    severity: 'info',
    app: 'web',
    environment: 'prod',
    title: 'r',
    metadata: { correlationKey: 'web:web:health' },
  });
  await ev.emit({ type: 'service.health.recovered', severity: 'info', app: 'web', title: 'no key' });
  t.is(ev.get(warn.id).state, 'open');
});

test('the dedupe window lasts one hour and survives a restart of the service', async (t) => {
  const { surface, db, clock } = await eventServices(t);
  t.true((await surface.events.emit({ type: 'x', severity: 'info', title: 't', dedupeKey: 'k' })).recorded);
  clock.advance(59 * MIN);
  t.false((await surface.events.emit({ type: 'x', severity: 'info', title: 't', dedupeKey: 'k' })).recorded);
  const { EventService } = await import('../../controllers/events/event-service.js');
  const restarted = new EventService({ db, clock, source: 's', environment: 'test', logger: silentLogger() });
  t.false(
    (await restarted.emit({ type: 'x', severity: 'info', title: 't', dedupeKey: 'k' })).recorded,
    'the database window survives',
  );
  clock.advance(2 * MIN);
  t.true(
    (await restarted.emit({ type: 'x', severity: 'info', title: 't', dedupeKey: 'k' })).recorded,
    'after an hour the key records again',
  );
});

test('health transitions from the registry emit warning, critical and recovered with previous state, and recovery closes them', async (t) => {
  const { surface } = await eventServices(t);
  const registry = new LocalRegistry();
  const watcher = new HealthWatcher(registry, surface.events, silentLogger());
  watcher.start();
  t.teardown(() => watcher.close());
  const instance = {
    id: 'a1-shop-web',
    service: 'shop-web',
    app: 'shop',
    process: 'web',
    allocationId: 'a1',
    address: '127.0.0.1',
    port: 1,
    tags: [],
    checks: [{ id: 'http', name: 'http', status: 'passing' as const, output: 'ok' }],
  };
  registry.register(instance);
  const update = (status: 'passing' | 'warning' | 'critical') =>
    registry.updateCheck({
      instanceId: 'a1-shop-web',
      checkId: 'http',
      status,
      output: `now ${status}`,
      checkedAt: new Date().toISOString(),
    });
  update('warning');
  update('critical');
  await watcher.idle();
  await surface.events.flushed();
  const warning = surface.events.list({ type: 'service.health.warning', limit: 5, offset: 0 }).events[0]!;
  const critical = surface.events.list({ type: 'service.health.critical', limit: 5, offset: 0 }).events[0]!;
  t.like(warning.metadata, { correlationKey: 'shop:web:health', previousState: 'passing' });
  t.like(critical.metadata, {
    correlationKey: 'shop:web:health',
    previousState: 'warning',
    previousEventType: 'service.health.warning',
  });
  update('passing');
  await watcher.idle();
  await surface.events.flushed();
  const recovered = surface.events.list({ type: 'service.health.recovered', limit: 5, offset: 0 }).events[0]!;
  t.like(recovered.metadata, { previousState: 'critical', previousEventType: 'service.health.critical' });
  t.is(surface.events.get(warning.id).state, 'acknowledged');
  t.is(surface.events.get(critical.id).acknowledgement!.resolvedByEventId, recovered.id);
});

test('an instance in its start-up window raises no health event; once out of it, a failure raises critical as before', async (t) => {
  const { surface } = await eventServices(t);
  const registry = new LocalRegistry();
  const watcher = new HealthWatcher(registry, surface.events, silentLogger());
  watcher.start();
  t.teardown(() => watcher.close());
  registry.register({
    id: 'a2-shop-web',
    service: 'shop-web',
    app: 'shop',
    process: 'web',
    allocationId: 'a2',
    address: '127.0.0.1',
    port: 1,
    tags: [],
    checks: [{ id: 'http', name: 'http', status: 'critical', output: 'starting', starting: true }],
  });
  const update = (status: 'passing' | 'critical', starting: boolean) =>
    registry.updateCheck({
      instanceId: 'a2-shop-web',
      checkId: 'http',
      status,
      output: `now ${status}${starting ? ' (starting)' : ''}`,
      checkedAt: new Date().toISOString(),
      ...(starting ? { starting } : {}),
    });
  update('critical', true);
  update('passing', false);
  await watcher.idle();
  await surface.events.flushed();
  t.is(surface.events.list({ app: 'shop', limit: 10, offset: 0 }).events.length, 0);
  update('critical', false);
  await watcher.idle();
  await surface.events.flushed();
  const critical = surface.events.list({ type: 'service.health.critical', limit: 5, offset: 0 }).events;
  t.is(critical.length, 1);
  t.like(critical[0]!.metadata, { correlationKey: 'shop:web:health', previousState: 'passing' });
});
