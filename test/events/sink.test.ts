// tier: full
import { execFileSync } from 'node:child_process';
import test from 'ava';
import { systemClock } from '../../domain/events/clock.js';
import { request, startTestControlPlane } from '../helpers/servers.js';
import { testConfig } from '../helpers/test-config.js';
import { eventServices } from './event-harness.js';
import { startReceiver } from './receiver.js';

const SECRET = 'sink-secret-value-42';

/** HMAC-SHA-256 by an independent implementation: openssl. */
function opensslHmac(secret: string, input: string): string {
  const out = execFileSync('openssl', ['dgst', '-sha256', '-hmac', secret], { input }).toString().trim();
  return out.split(/\s+/).pop()!;
}

test('the sink receives each event signed over timestamp, newline and raw body, as openssl computes it', async (t) => {
  const sink = await startReceiver(t);
  const plane = await startTestControlPlane(
    t,
    testConfig(t, {
      SVC_EVENT_SINK_URL: `${sink.url}/ingest`,
      SVC_EVENT_SINK_KEY_ID: 'key-7',
      SVC_EVENT_SINK_SECRET: SECRET,
      SVC_EVENT_ENVIRONMENT: 'staging',
      SVC_CAPACITY_CHECK_INTERVAL: 'off',
    }),
  );
  const created = await request(`${plane.url}/api/events`, {
    method: 'POST',
    json: {
      type: 'deploy.failed',
      severity: 'critical',
      title: 'Deploy failed',
      app: 'web',
      metadata: { correlationKey: 'web:deploy' },
    },
  });
  t.is(created.status, 201);
  const [got] = await sink.waitFor(1, (r) => r.body.includes(created.body.event.id));
  t.is(got!.method, 'POST');
  t.is(got!.path, '/ingest');
  t.is(got!.headers['x-event-source'], 'svc-control-plane');
  t.is(got!.headers['x-sink-key-id'], 'key-7');
  const timestamp = got!.headers['x-sink-timestamp'] as string;
  t.regex(timestamp, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  t.is(got!.headers['x-sink-signature'], opensslHmac(SECRET, `${timestamp}\n${got!.body}`));
  const body = JSON.parse(got!.body);
  t.is(body.id, created.body.event.id);
  t.is(body.environment, 'staging');
  t.is(body.metadata.correlationKey, 'web:deploy');
  t.false(got!.body.includes(SECRET));

  const sinks = await request(`${plane.url}/api/events/sinks`);
  t.is(sinks.status, 200);
  t.is(sinks.body.sinks[0].keyId, 'key-7');
  t.true(sinks.body.sinks[0].signed);
  t.false(sinks.text.includes(SECRET));
});

test('a sink that is down for a while and recovers receives every event, redeliveries carry the same id, a restart resends nothing acknowledged', async (t) => {
  const sink = await startReceiver(t);
  sink.status = 503;
  const sinkConfig = { url: sink.url, keyId: 'k', secret: SECRET, source: 'svc-control-plane' };
  const { surface, db } = await eventServices(t, { clock: systemClock, sink: sinkConfig, retryBaseMs: 10 });
  const ids: string[] = [];
  for (let i = 0; i < 40; i++) {
    const result = await surface.events.emit({
      type: 'event.test',
      severity: 'info',
      title: `e${i}`,
      dedupeKey: `burst-${i}`,
    });
    if (result.recorded) ids.push(result.id);
  }
  await sink.waitFor(3); // the outage is observed (and retried) several times
  t.true(sink.received.every((r) => r.body.includes('"id":"evt_')));
  sink.status = 200;
  await surface.dispatcher.whenIdle();
  const delivered = sink.received;
  const ok = new Set<string>();
  const attempts = new Map<string, number>();
  for (const r of delivered) {
    const id = (JSON.parse(r.body) as { id: string }).id;
    attempts.set(id, (attempts.get(id) ?? 0) + 1);
    ok.add(id);
  }
  t.deepEqual([...ok].sort(), [...ids].sort(), 'every event arrived');
  t.true(
    [...attempts.values()].some((n) => n > 1),
    'at least one event was redelivered with the same id',
  );
  const stats = db.prepare(`SELECT status, COUNT(*) AS n FROM event_outbox GROUP BY status`).all() as {
    status: string;
    n: number;
  }[];
  t.deepEqual(stats, [{ status: 'delivered', n: ids.length }]);
  t.log(
    `sink outage: ${ids.length} events, ${sink.received.length} requests, redelivered ${[...attempts.values()].filter((n) => n > 1).length}`,
  );

  // A second surface on the same database (a restart) sends nothing that was acknowledged.
  const before = sink.received.length;
  const { startEventServices } = await import('../../wiring/control/event-services.js');
  const { ControlMetrics } = await import('../../platform/metrics/control-metrics.js');
  const { silentLogger } = await import('../../platform/logger.js');
  const again = await startEventServices({
    db,
    logger: silentLogger(),
    metrics: new ControlMetrics(),
    clock: systemClock,
    source: 'svc-control-plane',
    environment: 'test',
    sink: sinkConfig,
    outbound: { allowPrivate: true },
  });
  await again.dispatcher.whenIdle();
  await again.close();
  await again.events.close();
  t.is(sink.received.length, before);
});

test('a sink outage with a deep backlog does not hold up notification channels', async (t) => {
  const sink = await startReceiver(t);
  sink.status = 503;
  const channelReceiver = await startReceiver(t);
  const { surface } = await eventServices(t, {
    clock: systemClock,
    sink: { url: sink.url, keyId: 'k', secret: SECRET, source: 's' },
    retryBaseMs: 60_000,
  });
  surface.notifications.create({ provider: 'webhook', name: 'hook', url: `${channelReceiver.url}/hook` });
  await Promise.all(
    Array.from({ length: 300 }, (_, i) =>
      surface.events.emit({ type: 'event.test', severity: 'warning', title: `e${i}` }),
    ),
  );
  await channelReceiver.waitFor(300);
  t.is(sink.received.length, 1, 'the sink was tried once and is backing off');
});
