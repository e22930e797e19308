// tier: full
import test from 'ava';
import { request, startTestControlPlane } from '../helpers/servers.js';
import { testConfig } from '../helpers/test-config.js';

test('the full control plane has no verifier: admission calls answer 503 external_deployment_verifier_unavailable, and an administrator does not substitute for the scope', async (t) => {
  const open = await startTestControlPlane(t, testConfig(t, { SVC_CAPACITY_CHECK_INTERVAL: 'off' }));
  const answer = await request(`${open.url}/api/v1/apps/sample/external-deployments/begin`, {
    method: 'POST',
    headers: { 'idempotency-key': 'k' },
    json: {},
  });
  t.is(answer.status, 503);
  t.is(answer.body.error.code, 'external_deployment_verifier_unavailable');
  t.is(answer.headers.get('cache-control'), 'no-store');
  t.is(answer.headers.get('pragma'), 'no-cache');
  const capabilities = await request(`${open.url}/api/v1/capabilities`);
  t.false(capabilities.text.includes('external-deployments'));

  const guarded = await startTestControlPlane(
    t,
    testConfig(t, { SVC_CAPACITY_CHECK_INTERVAL: 'off', SVC_API_TOKEN: 'admin-token' }),
  );
  const admin = await request(`${guarded.url}/api/v1/apps/sample/external-deployments/begin`, {
    method: 'POST',
    headers: { authorization: 'Bearer admin-token', 'idempotency-key': 'k' },
    json: {},
  });
  t.is(admin.status, 403);
  t.is(admin.body.error.code, 'insufficient_scope');
  t.is(admin.headers.get('cache-control'), 'no-store');
});
