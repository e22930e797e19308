// tier: full
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import fc from 'fast-check';
import { request, startTestControlPlane } from '../helpers/servers.js';
import { testConfig } from '../helpers/test-config.js';
import { malformedSpec } from '../helpers/malformed-specs.js';
import { REPO_ROOT } from '../helpers/repo.js';

const root = REPO_ROOT;
const helloWeb = fs.readFileSync(path.join(root, 'fixtures/apps/hello-web/infraspec.yaml'), 'utf8');
const FINDING_KEYS = ['column', 'line', 'message', 'path', 'rule', 'severity'];

/** Whether a JSON value holds an object key `__proto__` anywhere (a string value "__proto__" is not one). */
function hasProtoKey(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(hasProtoKey);
  if (value === null || typeof value !== 'object') return false;
  return Object.keys(value).some((key) => key === '__proto__' || hasProtoKey((value as Record<string, unknown>)[key]));
}

test('POST /api/v1/validate/infraspec accepts a valid spec as YAML text', async (t) => {
  const plane = await startTestControlPlane(t);
  const response = await request(`${plane.url}/api/v1/validate/infraspec`, {
    method: 'POST',
    json: { spec: helloWeb },
  });
  t.is(response.status, 200);
  t.true(response.body.valid, JSON.stringify(response.body.findings));
  t.deepEqual(
    response.body.findings.filter((f: { severity: string }) => f.severity === 'error'),
    [],
  );
});

test('POST /api/v1/validate/infraspec names path, rule, line and column of a wrong-typed field', async (t) => {
  const plane = await startTestControlPlane(t);
  const spec = 'name: demo\nprocesses:\n  web:\n    port: "eighty"\n';
  const response = await request(`${plane.url}/api/v1/validate/infraspec`, { method: 'POST', json: { spec } });
  t.is(response.status, 200);
  t.false(response.body.valid);
  const finding = response.body.findings.find((f: { path: string }) => f.path === 'processes.web.port');
  t.truthy(finding, JSON.stringify(response.body.findings));
  t.deepEqual(Object.keys(finding).sort(), FINDING_KEYS);
  t.is(finding.line, 4);
  t.is(finding.column, 11, 'a wrong type points at the value');
  t.regex(finding.rule, /^schema\./);
});

test('POST /api/v1/validate/infraspec takes a JSON object spec and a YAML body', async (t) => {
  const plane = await startTestControlPlane(t);
  const asObject = await request(`${plane.url}/api/v1/validate/infraspec`, {
    method: 'POST',
    json: { spec: { name: 'demo', processes: { web: { port: 'x' } } } },
  });
  t.is(asObject.status, 200);
  t.false(asObject.body.valid);
  t.is(asObject.body.findings[0].line, null);

  const asYaml = await request(`${plane.url}/api/v1/validate/infraspec`, {
    method: 'POST',
    body: helloWeb,
    headers: { 'content-type': 'application/yaml' },
  });
  t.is(asYaml.status, 200);
  t.true(asYaml.body.valid);
});

test('POST /api/v1/validate/infraspec checks the node pool against a supplied fleet document', async (t) => {
  const plane = await startTestControlPlane(t);
  const spec = 'name: demo\nplacement:\n  nodePool: gpu\nprocesses:\n  web:\n    port: 8080\n';
  const fleetDocument = {
    apiVersion: 'svc/v1',
    kind: 'Fleet',
    metadata: { name: 'home', environment: 'development' },
    nodePools: [{ name: 'general' }],
  };
  const response = await request(`${plane.url}/api/v1/validate/infraspec`, {
    method: 'POST',
    json: { spec, fleetDocument },
  });
  t.false(response.body.valid);
  const finding = response.body.findings.find((f: { rule: string }) => f.rule === 'placement.nodePoolExists');
  t.truthy(finding, JSON.stringify(response.body.findings));
  t.is(finding.path, 'placement.nodePool');
  t.is(finding.line, 3);
  const withPool = await request(`${plane.url}/api/v1/validate/infraspec`, {
    method: 'POST',
    json: { spec, fleetDocument: { ...fleetDocument, nodePools: [{ name: 'gpu' }] } },
  });
  t.true(withPool.body.valid, JSON.stringify(withPool.body.findings));
  // The platform runs the local driver: the pool exists, and this host cannot place on it (a warning).
  t.deepEqual(
    withPool.body.findings.map((f: { rule: string; severity: string; line: number }) => [f.rule, f.severity, f.line]),
    [['driver.nodePool', 'warning', 3]],
  );
});

test('POST /api/v1/validate/infraspec answers 400 for an unusable request body', async (t) => {
  const plane = await startTestControlPlane(t);
  const missing = await request(`${plane.url}/api/v1/validate/infraspec`, { method: 'POST', json: { nope: 1 } });
  t.is(missing.status, 400);
  t.is(missing.body.error.code, 'invalid_request');
  t.true(missing.body.error.details.problems.some((p: { path: string }) => p.path === 'spec'));
  const broken = await request(`${plane.url}/api/v1/validate/infraspec`, {
    method: 'POST',
    body: '{"spec": ',
    headers: { 'content-type': 'application/json' },
  });
  t.is(broken.status, 400);
  t.is(broken.body.error.code, 'invalid_json');
});

test('GET /api/validate reports every committed spec with its findings', async (t) => {
  const config = testConfig(t);
  fs.cpSync(path.join(root, 'fixtures/apps'), config.appsDir, { recursive: true });
  fs.mkdirSync(path.join(config.appsDir, 'broken'));
  fs.writeFileSync(
    path.join(config.appsDir, 'broken', 'infraspec.yaml'),
    'name: broken\nprocesses:\n  web:\n    port: 8080\n    health:\n      interval: "10"\n',
  );
  const plane = await startTestControlPlane(t, config);
  const response = await request(`${plane.url}/api/validate`);
  t.is(response.status, 200);
  t.false(response.body.valid);
  const broken = response.body.files.find((f: { key: string }) => f.key === 'broken');
  t.false(broken.valid);
  t.true(
    broken.findings.some(
      (f: { path: string; line: number }) => f.path === 'processes.web.health.interval' && f.line === 6,
    ),
  );
  const others = response.body.files.filter((f: { key: string }) => f.key !== 'broken');
  t.true(others.length >= 5);
  t.true(
    others.every((f: { valid: boolean }) => f.valid),
    JSON.stringify(others.filter((f: { valid: boolean }) => !f.valid)),
  );
});

test('POST /api/v1/validate/infraspec never answers 5xx to random malformed documents', async (t) => {
  const plane = await startTestControlPlane(t);
  await fc.assert(
    fc.asyncProperty(malformedSpec, fc.boolean(), async (spec, asText) => {
      const payload = asText && typeof spec !== 'string' ? JSON.stringify(spec) : spec;
      const response = await request(`${plane.url}/api/v1/validate/infraspec`, {
        method: 'POST',
        json: { spec: payload },
      });
      // A JSON body with a `__proto__` key is refused by the body parser (prototype poisoning): a 400
      // in the error shape, never a 5xx. Every other malformed document reaches the validator.
      if (hasProtoKey(payload)) return response.status === 400 && typeof response.body.error?.code === 'string';
      return (
        response.status === 200 &&
        Array.isArray(response.body.findings) &&
        response.body.findings.every((f: object) => Object.keys(f).sort().join() === FINDING_KEYS.join())
      );
    }),
    { numRuns: 300 },
  );
  const poisoned = await request(`${plane.url}/api/v1/validate/infraspec`, {
    method: 'POST',
    json: JSON.parse('{"spec":{"name":{"__proto__":0},"processes":{"web":{"port":8080}}}}'),
  });
  t.is(poisoned.status, 400, 'a __proto__ key is refused before validation');
  t.is(typeof poisoned.body.error.code, 'string');
  const twoMb = `name: ${'x'.repeat(2 * 1024 * 1024)}\n`;
  const huge = await request(`${plane.url}/api/v1/validate/infraspec`, { method: 'POST', json: { spec: twoMb } });
  t.is(huge.status, 413, 'over the default 1 MiB body limit');
  t.is(huge.body.error.code, 'payload_too_large');
  const roomy = await startTestControlPlane(t, testConfig(t, { SVC_BODY_LIMIT: '8mb' }));
  const reached = await request(`${roomy.url}/api/v1/validate/infraspec`, { method: 'POST', json: { spec: twoMb } });
  t.is(reached.status, 200, 'a 2 MB string reaches the validator and gets findings');
  t.false(reached.body.valid);
  const deepDoc = await request(`${plane.url}/api/v1/validate/infraspec`, {
    method: 'POST',
    json: { spec: '['.repeat(5000) + ']'.repeat(5000) },
  });
  t.is(deepDoc.status, 200);
  t.false(deepDoc.body.valid);
});
