// tier: full
import test, { type ExecutionContext } from 'ava';
import { request, startTestControlPlane, startTestKnowledgeStore } from '../helpers/servers.js';
import { testConfig } from '../helpers/test-config.js';
import { routeKey, servedRoutes } from '../../api/openapi/openapi-document.js';

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

/** `METHOD /path` of every operation the document names. */
function documentedRoutes(document: { paths: Record<string, Record<string, unknown>> }): string[] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    METHODS.filter((method) => item[method] !== undefined).map((method) => `${method.toUpperCase()} ${path}`),
  );
}

function compare(t: ExecutionContext, served: string[], documented: string[]) {
  const inDocument = new Set(documented);
  const isServed = new Set(served);
  t.deepEqual(
    served.filter((key) => !inDocument.has(key)),
    [],
    'every served route is in the document',
  );
  t.deepEqual(
    documented.filter((key) => !isServed.has(key)),
    [],
    'every route of the document is served',
  );
  t.true(served.length > 50);
}

test('the control plane serves its OpenAPI document without a token, naming exactly the routes its routers serve', async (t) => {
  const plane = await startTestControlPlane(
    t,
    testConfig(t, { SVC_API_TOKEN: 'openapi-test-token', SVC_REQUIRE_EXPLICIT_AUTH: 'true' }),
  );
  const answer = await request(`${plane.url}/api/openapi.json`);
  t.is(answer.status, 200);
  t.is(answer.body.openapi, '3.1.0');
  compare(t, [...new Set(servedRoutes(plane.routers).map(routeKey))], documentedRoutes(answer.body));
  const again = await request(`${plane.url}/api/openapi.json`, {
    headers: { 'if-none-match': answer.headers.get('etag')! },
  });
  t.is(again.status, 304);
  // A route the document says needs a caller refuses one without a token.
  t.is(answer.body.paths['/api/apps'].get['x-svc-auth'], 'administrator: the control token or an edge access identity');
  t.is((await request(`${plane.url}/api/apps`)).status, 401);
  // The operator's auth hints list it among the public routes.
  const hints = await request(`${plane.url}/api/operator/auth-hints`, {
    headers: { authorization: 'Bearer openapi-test-token' },
  });
  t.true(JSON.stringify(hints.body).includes('GET /api/openapi.json'), hints.text);
});

test('the knowledge store serves its OpenAPI document without a token, naming exactly the routes of both listeners', async (t) => {
  const store = await startTestKnowledgeStore(t, testConfig(t, { SVC_KNOWLEDGE_TOKENS: 'acme:read:openapi-secret-1' }));
  const answer = await request(`${store.url}/v1/openapi.json`);
  t.is(answer.status, 200);
  t.is(answer.body.openapi, '3.1.0');
  const served = [...servedRoutes(store.routers.api), ...servedRoutes(store.routers.admin)].map(routeKey);
  compare(t, [...new Set(served)], documentedRoutes(answer.body));
  // The admin listener's routes name it as their server.
  t.is(answer.body.paths['/admin/api/stats'].servers[0].url, 'http://127.0.0.1:7702');
  t.is((await request(`${store.url}/v1/stats`)).status, 401);
});
