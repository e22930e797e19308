// tier: full
import test from 'ava';
import { request, startTestKnowledgeStore } from '../helpers/servers.js';
import { testConfig } from '../helpers/test-config.js';
import { startPlaneWithApps } from '../helpers/plane-with-apps.js';
import { waitForReconciled } from '../helpers/wait-for.js';
import { openApiAnswers } from '../helpers/openapi-answers.js';

const SPEC = `name: shop
deploy: true
processes:
  web:
    port: 8080
    health:
      path: /healthz
    resources:
      cpu: 500
      memory: 256
`;

test('control plane answers match the answer schemas of its OpenAPI document', async (t) => {
  const token = 'openapi-answers-token';
  const { plane } = await startPlaneWithApps(t, {
    server: 'export {};\n',
    apps: [{ name: 'shop', spec: SPEC, release: false }],
    env: { SVC_API_TOKEN: token },
  });
  const auth = { authorization: `Bearer ${token}` };
  const get = (path: string) => request(`${plane.url}${path}`, { headers: auth });
  const document = (await request(`${plane.url}/api/openapi.json`)).body;
  const answers = openApiAnswers(t, document);
  await waitForReconciled([plane.reconcilers.specController, plane.reconcilers.appController], async () =>
    ((await get('/api/apps')).body.apps as { name: string }[]).some((app) => app.name === 'shop'),
  );
  for (const [path, url] of [
    ['/api/health', '/api/health'],
    ['/api/version', '/api/version'],
    ['/api/v1/capabilities', '/api/v1/capabilities'],
    ['/schemas/', '/schemas/'],
    ['/api/apps', '/api/apps'],
    ['/api/apps/{id}', '/api/apps/shop'],
    ['/api/services/manifest', '/api/services/manifest'],
    ['/api/v1/services/manifest', '/api/v1/services/manifest'],
    ['/api/operator/cron', '/api/operator/cron'],
    ['/api/operator/deploy-confidence', '/api/operator/deploy-confidence'],
    ['/api/v1/apps/{id}/logs', '/api/v1/apps/shop/logs'],
    ['/api/operator/auth-hints', '/api/operator/auth-hints'],
    ['/api/operator/actions', '/api/operator/actions'],
    ['/api/secrets/migration-plan', '/api/secrets/migration-plan'],
    ['/api/v1/production/readiness', '/api/v1/production/readiness'],
    ['/api/platform/releases', '/api/platform/releases'],
  ] as const)
    answers.check('GET', path, await get(url));
  answers.check(
    'POST',
    '/api/v1/validate/infraspec',
    await request(`${plane.url}/api/v1/validate/infraspec`, { method: 'POST', headers: auth, json: { spec: SPEC } }),
  );
  const recorded = await request(`${plane.url}/api/events`, {
    method: 'POST',
    headers: auth,
    json: { type: 'deploy.failed', app: 'shop', severity: 'critical', title: 'deploy failed', source: 'test' },
  });
  t.is(recorded.status, 201, recorded.text);
  const id = recorded.body.event.id as string;
  answers.check('GET', '/api/events', await get('/api/events'));
  answers.check('GET', '/api/events/{id}', await get(`/api/events/${id}`));
  answers.check(
    'POST',
    '/api/events/{id}/ack',
    await request(`${plane.url}/api/events/${id}/ack`, { method: 'POST', headers: auth, json: { operator: 'op' } }),
  );
  answers.check('GET', '/api/events/active', await get('/api/events/active'));
  answers.check(
    'GET',
    '/api/events/correlated',
    await get(`/api/events/correlated?key=${recorded.body.event.correlationKey}`),
  );
  answers.check('GET', '/api/events/sinks', await get('/api/events/sinks'));
  answers.check('GET', '/api/alerts/rules', await get('/api/alerts/rules'));
  answers.check('GET', '/api/notifications/channels', await get('/api/notifications/channels'));
  const issued = await request(`${plane.url}/api/access/tokens`, {
    method: 'POST',
    headers: auth,
    json: { name: 'reader', scopes: ['events:read'] },
  });
  answers.check('POST', '/api/access/tokens', issued);
  answers.check('GET', '/api/access/tokens', await get('/api/access/tokens'));
  answers.check('GET', '/api/access/tokens/{id}', await get(`/api/access/tokens/${issued.body.token.id}`));
  const deploy = await request(`${plane.url}/api/apps/shop/deploy`, { method: 'POST', headers: auth, json: {} });
  answers.check('POST', '/api/apps/{id}/deploy', deploy);
  answers.check('GET', '/api/v1/operations/{id}', await get(`/api/v1/operations/${deploy.body.operation.id}`));
  answers.check('GET', '/api/v1/deployments', await get('/api/v1/deployments?app=shop'));
  answers.check('GET', '/api/operations/active', await get('/api/operations/active'));
  answers.check(
    'GET',
    '/api/v1/deployments/{id}/steps',
    await get(`/api/v1/deployments/${deploy.body.deploymentId}/steps`),
  );
  t.true(answers.checked >= 33);
});

test('knowledge store answers match the answer schemas of its OpenAPI document', async (t) => {
  const store = await startTestKnowledgeStore(
    t,
    testConfig(t, { SVC_KNOWLEDGE_TOKENS: 'acme:read+write+admin:answers-secret-1' }),
  );
  const auth = { authorization: 'Bearer acme:read+write+admin:answers-secret-1' };
  const document = (await request(`${store.url}/v1/openapi.json`)).body;
  const answers = openApiAnswers(t, document);
  answers.check('GET', '/v1/ping', await request(`${store.url}/v1/ping`));
  for (const path of ['/v1/version', '/v1/features', '/v1/migrations', '/v1/backends'])
    answers.check('GET', path, await request(`${store.url}${path}`, { headers: auth }));
  const written = await request(`${store.url}/v1/namespaces/n/write`, {
    method: 'POST',
    headers: auth,
    json: { content: 'The shop service listens on port 8080.', source_id: 'runbook' },
  });
  answers.check('POST', '/v1/namespaces/{ns}/write', written);
  answers.check(
    'GET',
    '/v1/namespaces/{ns}/nodes/{id}',
    await request(`${store.url}/v1/namespaces/n/nodes/${written.body.node_id}`, { headers: auth }),
  );
  answers.check(
    'POST',
    '/v1/namespaces/{ns}/retrieve',
    await request(`${store.url}/v1/namespaces/n/retrieve`, {
      method: 'POST',
      headers: auth,
      json: { text: 'shop port' },
    }),
  );
  answers.check(
    'GET',
    '/v1/namespaces/{ns}/review/queue',
    await request(`${store.url}/v1/namespaces/n/review/queue`, { headers: auth }),
  );
  answers.check(
    'POST',
    '/v1/namespaces/{ns}/nodes/{id}/validate',
    await request(`${store.url}/v1/namespaces/n/nodes/${written.body.node_id}/validate`, {
      method: 'POST',
      headers: auth,
      json: {},
    }),
  );
  answers.check('GET', '/v1/stats', await request(`${store.url}/v1/stats`, { headers: auth }));
  answers.check('GET', '/admin/api/stats', await request(`${store.adminUrl}/admin/api/stats`, { headers: auth }));
  answers.check(
    'GET',
    '/admin/api/node',
    await request(`${store.adminUrl}/admin/api/node?ns=n&id=${written.body.node_id}`, { headers: auth }),
  );
  answers.check(
    'POST',
    '/admin/api/retrieve',
    await request(`${store.adminUrl}/admin/api/retrieve`, {
      method: 'POST',
      headers: auth,
      json: { namespace: 'n', text: 'shop port' },
    }),
  );
  answers.check('GET', '/admin/api/backups', await request(`${store.adminUrl}/admin/api/backups`, { headers: auth }));
  answers.check(
    'POST',
    '/admin/api/doctor/sample-write',
    await request(`${store.adminUrl}/admin/api/doctor/sample-write`, { method: 'POST', headers: auth, json: {} }),
  );
  t.is(answers.checked, 16);
});
