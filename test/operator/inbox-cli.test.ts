// tier: full
import test from 'ava';
import { request, startTestControlPlane } from '../helpers/servers.js';
import { runSvc } from '../helpers/cli.js';
import { testConfig } from '../helpers/test-config.js';

test('svc inbox summarizes what needs attention and exits 2 while something is critical', async (t) => {
  const plane = await startTestControlPlane(t, testConfig(t, { SVC_CAPACITY_CHECK_INTERVAL: 'off' }));
  const env = { SVC_API_URL: plane.url };

  const calm = await runSvc(['inbox'], { env });
  t.is(calm.code, 0, calm.stderr);
  t.regex(calm.stdout, /^critical 0, warning \d+: 0 incidents, 0 failed and 0 active operations/);
  t.false(calm.stdout.includes('INCIDENTS'));

  const created = await request(`${plane.url}/api/events`, {
    method: 'POST',
    json: {
      type: 'service.unhealthy',
      severity: 'critical',
      title: 'checkout is down',
      app: 'checkout',
      dedupeKey: 'checkout-down',
    },
  });
  t.is(created.status, 201, created.text);
  const alarmed = await runSvc(['inbox'], { env });
  t.is(alarmed.code, 2, alarmed.stderr);
  t.regex(alarmed.stdout, /^critical 1, /);
  t.regex(alarmed.stdout, /INCIDENTS\n.*\ncritical\s+checkout\s+checkout-down\s+1\s+\S+\s+checkout is down/);

  const json = await runSvc(['inbox', '--json'], { env });
  t.is(json.code, 2, json.stderr);
  t.is(JSON.parse(json.stdout).incidents.items[0].correlationKey, 'checkout-down');
  const unknown = await runSvc(['inbox', '--app', 'other'], { env });
  t.is(unknown.code, 4);
  t.regex(unknown.stderr, /app_not_found/);

  const bad = await runSvc(['inbox', '--limit', 'lots'], { env });
  t.is(bad.code, 1);
  t.regex(bad.stderr, /invalid_query/);
});
