// tier: quick
import { Writable } from 'node:stream';
import test from 'ava';
import { pino } from 'pino';
import { systemClock } from '../../domain/events/clock.js';
import { loadConfig, redactConfig } from '../../platform/config.js';
import { ConfigError } from '../../domain/errors.js';
import { eventServices } from './event-harness.js';
import { startReceiver } from './receiver.js';

test('sink secrets and channel tokens never appear in logs, events or channel views, even when deliveries fail', async (t) => {
  const lines: string[] = [];
  const logger = pino(
    { level: 'trace' },
    new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    }),
  );
  const down = await startReceiver(t);
  down.status = 500;
  const { surface } = await eventServices(t, {
    clock: systemClock,
    logger,
    retryBaseMs: 5,
    sink: { url: down.url, keyId: 'kid', secret: 'SINK-SECRET-XYZ', source: 'svc' },
  });
  const channel = surface.notifications.create({
    provider: 'mobile_push',
    name: 'phone',
    url: `${down.url}/m`,
    token: 'APP-TOKEN-XYZ',
    userKey: 'USER-KEY-XYZ',
  });
  const emitted = await surface.events.emit({
    type: 'deploy.failed',
    severity: 'critical',
    title: 'failed',
    app: 'web',
  });
  await down.waitFor(4);
  const everything = [
    ...lines,
    JSON.stringify(surface.events.list({ limit: 200, offset: 0 })),
    JSON.stringify(surface.notifications.list()),
    JSON.stringify(channel),
    JSON.stringify(surface.sinks()),
  ].join('\n');
  for (const secret of ['SINK-SECRET-XYZ', 'APP-TOKEN-XYZ', 'USER-KEY-XYZ'])
    t.false(everything.includes(secret), secret);
  t.true(
    lines.some((l) => l.includes('event delivery failed')),
    'failures are logged',
  );
  t.true(emitted.recorded);
  t.like(surface.sinks()[0], { keyId: 'kid', signed: true });
  t.is(redactConfig(loadConfig({ SVC_EVENT_SINK_SECRET: 'SINK-SECRET-XYZ' })).eventSinkSecret, '<set>');
});

test('event surface configuration is validated at start, naming the variable', (t) => {
  for (const [name, value] of [
    ['SVC_EVENT_SINK_URL', 'ftp://x'],
    ['SVC_NOTIFY_ALLOW_PRIVATE', 'maybe'],
    ['SVC_HOST_ID', 'a:b'],
    ['SVC_ALLOCATION_WATCH_INTERVAL', 'soon'],
    ['SVC_CAPACITY_MIN_DISK', 'lots'],
  ] as const) {
    t.throws(() => loadConfig({ [name]: value }), { instanceOf: ConfigError, message: new RegExp(name) });
  }
  const config = loadConfig({
    SVC_ENVIRONMENT: 'prod',
    SVC_ALLOCATION_WATCH_INTERVAL: '200ms',
    SVC_CAPACITY_CHECK_INTERVAL: 'off',
    SVC_CAPACITY_MIN_MEMORY: '1gb',
  });
  t.like(config, {
    eventEnvironment: undefined,
    environment: 'prod',
    eventSource: 'svc-control-plane',
    allocationWatchIntervalMs: 200,
    capacityCheckIntervalMs: 0,
    capacityMinMemoryBytes: 1024 ** 3,
    notifyAllowPrivate: false,
  });
});
