// tier: full
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { request, startTestControlPlane } from '../helpers/servers.js';
import { testConfig } from '../helpers/test-config.js';
import { REPO_ROOT } from '../helpers/repo.js';

const root = REPO_ROOT;

test('GET /schemas/{file} serves each spec schema without a token, as application/schema+json, revalidated by ETag', async (t) => {
  const plane = await startTestControlPlane(
    t,
    testConfig(t, { SVC_API_TOKEN: 'schema-test-token', SVC_REQUIRE_EXPLICIT_AUTH: 'true' }),
  );
  for (const file of ['infraspec.schema.json', 'deploy-group.schema.json', 'fleet.schema.json']) {
    const answer = await request(`${plane.url}/schemas/${file}`);
    t.is(answer.status, 200, file);
    t.is(answer.headers.get('content-type'), 'application/schema+json; charset=utf-8', file);
    t.deepEqual(answer.body, JSON.parse(fs.readFileSync(path.join(root, 'schemas', file), 'utf8')), file);
    const etag = answer.headers.get('etag');
    t.truthy(etag, file);
    const again = await request(`${plane.url}/schemas/${file}`, { headers: { 'if-none-match': etag! } });
    t.is(again.status, 304, file);
  }
  const list = await request(`${plane.url}/schemas/`);
  t.is(list.status, 200);
  t.deepEqual(
    (list.body as { schemas: { file: string; url: string }[] }).schemas.map((s) => s.url),
    ['infraspec', 'deploy-group', 'fleet'].map((name) => `${plane.url}/schemas/${name}.schema.json`),
  );
  const missing = await request(`${plane.url}/schemas/secrets.json`);
  t.is(missing.status, 404);
  t.is(missing.body.error.code, 'schema_not_found');
  // The rest of the API still needs the token.
  t.is((await request(`${plane.url}/api/apps`)).status, 401);
});

test('the capabilities and the auth hints list the schema routes as public', async (t) => {
  const plane = await startTestControlPlane(t, testConfig(t, { SVC_API_TOKEN: 'schema-test-token' }));
  const auth = { authorization: 'Bearer schema-test-token' };
  const capabilities = await request(`${plane.url}/api/v1/capabilities`, { headers: auth });
  t.true(
    (capabilities.body as { capabilities: { name: string; routes: string[] }[] }).capabilities.some(
      (c) => c.name === 'spec-schemas' && c.routes.includes('GET /schemas/infraspec.schema.json'),
    ),
  );
  const hints = await request(`${plane.url}/api/operator/auth-hints`, { headers: auth });
  t.true(JSON.stringify(hints.body).includes('GET /schemas/infraspec.schema.json'), hints.text);
});
