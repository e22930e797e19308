// tier: quick
import test from 'ava';
import { decideReconcile } from '../../domain/events/evidence-rules.js';
import { LocalRegistry } from '../../platform/local-registry/index.js';
import type { JobStatus, Scheduler } from '../../domain/scheduler/index.js';
import { eventServices } from './event-harness.js';

const old = 20 * 60_000;

test('deploy.failed needs a later deploy.succeeded and a running job with a healthy allocation', (t) => {
  t.like(decideReconcile({ type: 'deploy.failed', ageMs: old, laterDeploySucceeded: [], runningHealthyJobs: ['j'] }), {
    action: 'needs_review',
  });
  t.like(
    decideReconcile({ type: 'deploy.failed', ageMs: old, laterDeploySucceeded: ['evt_b'], runningHealthyJobs: [] }),
    { action: 'needs_review', reason: 'no running job with a healthy allocation' },
  );
  t.like(decideReconcile({ type: 'deploy.failed', ageMs: old, laterDeploySucceeded: ['evt_b'] }), {
    action: 'needs_review',
    reason: 'scheduler state unavailable',
  });
  t.like(
    decideReconcile({
      type: 'deploy.failed',
      ageMs: old,
      laterDeploySucceeded: ['evt_b'],
      runningHealthyJobs: ['web-web'],
    }),
    { action: 'acknowledge' },
  );
});

test('service health needs a later recovery or every current check passing', (t) => {
  t.like(decideReconcile({ type: 'service.health.critical', ageMs: 0, laterHealthRecovered: ['evt_r'] }), {
    action: 'acknowledge',
  });
  t.like(
    decideReconcile({
      type: 'service.health.warning',
      ageMs: 0,
      serviceChecks: [{ instanceId: 'i', status: 'passing' }],
    }),
    { action: 'acknowledge' },
  );
  t.like(
    decideReconcile({
      type: 'service.health.warning',
      ageMs: 0,
      serviceChecks: [
        { instanceId: 'i', status: 'passing' },
        { instanceId: 'j', status: 'warning' },
      ],
    }),
    { action: 'needs_review' },
  );
  t.like(decideReconcile({ type: 'service.health.warning', ageMs: 0, serviceChecks: [] }), {
    action: 'needs_review',
    reason: 'the service has no current registry checks',
  });
  t.like(decideReconcile({ type: 'service.health.warning', ageMs: 0 }), {
    action: 'needs_review',
    reason: 'registry state unavailable for the service',
  });
});

test('cron events need a running, unpaused, idle parent and a terminal or absent referenced child', (t) => {
  const parent = { jobId: 'p', running: true, paused: false, activeChildren: 0 };
  for (const type of ['cron.failed', 'cron.lost', 'cron.hung', 'cron.missed_run']) {
    t.like(decideReconcile({ type, ageMs: 0, periodicParent: parent }), { action: 'acknowledge' }, type);
    t.like(decideReconcile({ type, ageMs: 0, periodicParent: { ...parent, paused: true } }), {
      action: 'needs_review',
    });
    t.like(decideReconcile({ type, ageMs: 0, periodicParent: { ...parent, running: false } }), {
      action: 'needs_review',
    });
    t.like(decideReconcile({ type, ageMs: 0, periodicParent: { ...parent, activeChildren: 1 } }), {
      action: 'needs_review',
    });
    t.like(decideReconcile({ type, ageMs: 0 }), { action: 'needs_review' });
    t.like(
      decideReconcile({
        type,
        ageMs: 0,
        periodicParent: parent,
        referencedChild: { allocationId: 'c', terminal: false },
      }),
      { action: 'needs_review' },
    );
    t.like(decideReconcile({ type, ageMs: 0, periodicParent: parent, referencedChild: null }), {
      action: 'acknowledge',
    });
  }
});

test('restarts need a healthy app and 15 minutes; capacity needs a later host-scoped recovery; other types stay for review', (t) => {
  t.like(
    decideReconcile({
      type: 'scheduler.task.restarted',
      ageMs: 14 * 60_000,
      appHealthy: { healthy: true, detail: 'ok' },
    }),
    { action: 'needs_review' },
  );
  t.like(
    decideReconcile({ type: 'scheduler.task.restarted', ageMs: old, appHealthy: { healthy: false, detail: 'down' } }),
    { action: 'needs_review' },
  );
  t.like(
    decideReconcile({ type: 'scheduler.task.restarted', ageMs: old, appHealthy: { healthy: true, detail: 'ok' } }),
    { action: 'acknowledge' },
  );
  t.like(decideReconcile({ type: 'service.capacity.below_minimum', ageMs: old, laterCapacityRecovered: [] }), {
    action: 'needs_review',
  });
  t.like(decideReconcile({ type: 'service.capacity.below_minimum', ageMs: old, laterCapacityRecovered: ['evt_c'] }), {
    action: 'acknowledge',
  });
  t.like(decideReconcile({ type: 'scheduler.task.oom_killed', ageMs: old }), {
    action: 'needs_review',
    reason: 'no evidence rule for scheduler.task.oom_killed',
  });
});

test('reconcile reads live registry checks and periodic job state', async (t) => {
  const registry = new LocalRegistry();
  registry.register({
    id: 'a1-shop-web',
    service: 'shop-web',
    app: 'shop',
    process: 'web',
    allocationId: 'a1',
    address: '127.0.0.1',
    port: 1,
    tags: [],
    checks: [{ id: 'http', name: 'http', status: 'passing', output: 'ok' }],
  });
  const job = {
    spec: {
      id: 'shop-report',
      app: 'shop',
      type: 'periodic',
      taskGroups: [{ name: 'report' }],
      periodic: { cron: '* * * * *' },
    },
    version: 1,
    status: 'running',
    paused: false,
    awaitingPromotion: [],
    submittedAt: '',
  } as unknown as JobStatus;
  const scheduler = {
    getJob: async (id: string) => (id === job.spec.id ? job : undefined),
    listAllocations: async () => [],
    getAllocation: async () => undefined,
    listJobs: async () => [job],
  } as unknown as Scheduler;
  const { surface } = await eventServices(t, { substrate: { schedulers: async () => [scheduler], registry } });
  const health = await surface.events.emit({
    type: 'service.health.critical',
    severity: 'critical',
    app: 'shop',
    title: 'down',
    metadata: { correlationKey: 'shop:web:health', process: 'web' },
  });
  const cron = await surface.events.emit({
    type: 'cron.failed',
    severity: 'critical',
    app: 'shop',
    title: 'failed',
    metadata: { correlationKey: 'shop:report:cron', jobId: 'shop-report', allocationId: 'gone' },
  });
  const unknown = await surface.events.emit({
    type: 'cron.lost',
    severity: 'critical',
    app: 'shop',
    title: 'lost',
    metadata: { correlationKey: 'shop:x:cron', jobId: 'nope' },
  });
  const result = await surface.reconcile({ dryRun: false, by: 'ops' });
  const byId = new Map(result.items.map((i) => [i.id, i]));
  t.like(byId.get(health.recorded ? health.id : '')!, { action: 'acknowledge', applied: true });
  t.like(byId.get(cron.recorded ? cron.id : '')!, { action: 'acknowledge', applied: true });
  t.deepEqual(byId.get(cron.recorded ? cron.id : '')!.evidence, [
    'periodic parent shop-report running and unpaused with no running or pending children',
    'referenced child allocation is absent',
  ]);
  t.like(byId.get(unknown.recorded ? unknown.id : '')!, { action: 'needs_review', applied: false });
  t.is(surface.events.get(unknown.recorded ? unknown.id : '').state, 'open');
});

test('operator job events carry the cron correlation key; resume closes the pause warning', async (t) => {
  const { operatorJobEvent } = await import('../../domain/events/operator-job-events.js');
  const { surface } = await eventServices(t);
  const paused = await surface.events.emit(
    operatorJobEvent('paused', { app: 'shop', process: 'report', jobId: 'shop-report', by: 'ana' }),
  );
  t.like(
    operatorJobEvent('schedule_updated', {
      app: 'shop',
      process: 'report',
      jobId: 'j',
      schedule: '0 * * * *',
      previousSchedule: '*/5 * * * *',
    }),
    { type: 'job.schedule_updated', severity: 'info' },
  );
  await surface.events.emit(operatorJobEvent('resumed', { app: 'shop', process: 'report', jobId: 'shop-report' }));
  t.is(surface.events.get(paused.recorded ? paused.id : '').state, 'acknowledged');
});
