// tier: full
import test from 'ava';
import fc from 'fast-check';
import { request, startTestControlPlane } from '../helpers/servers.js';
import { testConfig } from '../helpers/test-config.js';

test('random bodies and queries on every event surface endpoint never produce a 5xx', async (t) => {
  const plane = await startTestControlPlane(t, testConfig(t, { SVC_CAPACITY_CHECK_INTERVAL: 'off' }));
  const seed = await request(`${plane.url}/api/events`, {
    method: 'POST',
    json: { type: 'x', severity: 'warning', title: 't', metadata: { correlationKey: 'k' } },
  });
  const id = seed.body.event.id as string;
  const posts = [
    '/api/events',
    `/api/events/${id}/ack`,
    `/api/events/${id}/snooze`,
    `/api/events/${id}/open`,
    '/api/incidents/action',
    '/api/events/reconcile',
    '/api/events/test',
    '/api/notifications/channels',
  ];
  const gets = [
    '/api/events',
    '/api/events/correlated',
    '/api/events/active',
    '/api/events/sinks',
    '/api/alerts/rules',
    '/api/notifications/channels',
  ];
  const value = fc.oneof(
    fc.constantFrom(
      'info',
      'warning',
      'critical',
      'acknowledge',
      'resolve',
      'snooze',
      'open',
      'webhook',
      'mobile_push',
      'k',
      '30m',
      '2030-01-01T00:00:00Z',
      'http://127.0.0.1/x',
      -1,
      0,
      1e12,
      true,
      null,
    ),
    fc.string({ maxLength: 20 }),
    fc.integer(),
  );
  const key = fc.constantFrom(
    'type',
    'severity',
    'title',
    'action',
    'correlationKey',
    'dedupeKey',
    'duration',
    'until',
    'limit',
    'dryRun',
    'provider',
    'name',
    'url',
    'severities',
    'token',
    'userKey',
    'metadata',
    'app',
    'note',
    'operator',
  );
  const body = fc.oneof(
    fc.dictionary(
      key,
      fc.oneof(value, fc.array(value, { maxLength: 3 }), fc.dictionary(fc.string({ maxLength: 5 }), value)),
      { maxKeys: 6 },
    ),
    fc.jsonValue({ maxDepth: 2 }),
  );
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(...posts),
      body,
      fc.constantFrom(...gets),
      fc.dictionary(
        fc.constantFrom('app', 'type', 'severity', 'limit', 'offset', 'key', 'source'),
        fc.oneof(fc.string({ maxLength: 8 }), fc.integer().map(String)),
        { maxKeys: 4 },
      ),
      async (path, json, getPath, query) => {
        const res = await request(`${plane.url}${path}`, { method: 'POST', json });
        if (res.status >= 500)
          throw new Error(`POST ${path} ${JSON.stringify(json)} answered ${res.status}: ${res.text}`);
        if (res.status >= 400 && !(res.body?.error?.code && res.body.error.message !== undefined))
          throw new Error(`POST ${path} answered ${res.status} without the error body`);
        const got = await request(`${plane.url}${getPath}?${new URLSearchParams(query)}`);
        if (got.status >= 500) throw new Error(`GET ${getPath}?${new URLSearchParams(query)} answered ${got.status}`);
      },
    ),
    { numRuns: 250 },
  );
  t.pass();
});
