// tier: full
import test, { type ExecutionContext } from 'ava';
import { request } from '../helpers/servers.js';
import { commitApp, initAppsRepo, pipelineConfig, startPlane, waitForApp } from '../pipeline/pipeline-fixture.js';
import { listOperations } from '../../store/control/operations/operations.js';

async function plane(t: ExecutionContext) {
  // No worker: queued operations stay queued, so the HTTP semantics are observed alone.
  const config = pipelineConfig(t, { SVC_OPERATION_WORKER: 'false' });
  initAppsRepo(config);
  commitApp(config.appsDir, 'idem', { version: 'v1' });
  commitApp(config.appsDir, 'other', { version: 'v1' });
  const p = await startPlane(t, config);
  await waitForApp(p, 'idem');
  await waitForApp(p, 'other');
  return p;
}

test('the same Idempotency-Key and request answer the original response; another request with the key is 422 idempotency_key_reused', async (t) => {
  const p = await plane(t);
  const headers = { 'idempotency-key': 'key-1' };
  const first = await request(`${p.url}/api/apps/idem/deploy`, { method: 'POST', json: { ref: 'main' }, headers });
  t.is(first.status, 202);
  const second = await request(`${p.url}/api/apps/idem/deploy`, { method: 'POST', json: { ref: 'main' }, headers });
  t.is(second.status, 202);
  t.is(second.headers.get('idempotent-replayed'), 'true');
  t.deepEqual(second.body, first.body);
  t.is(listOperations(p.db, { app: 'idem' }).length, 1);
  const reused = await request(`${p.url}/api/apps/idem/deploy`, {
    method: 'POST',
    json: { ref: 'other-branch' },
    headers,
  });
  t.is(reused.status, 422);
  t.is(reused.body.error.code, 'idempotency_key_reused');
  const otherPath = await request(`${p.url}/api/apps/other/deploy`, { method: 'POST', json: { ref: 'main' }, headers });
  t.is(otherPath.status, 422);
  const row = p.db.prepare('SELECT created_at, expires_at FROM idempotency_keys WHERE key = ?').get('key-1') as {
    created_at: string;
    expires_at: string;
  };
  t.true(Date.parse(row.expires_at) - Date.parse(row.created_at) >= 24 * 3600 * 1000, 'kept at least 24 hours');
  const bad = await request(`${p.url}/api/apps/idem/deploy`, {
    method: 'POST',
    json: {},
    headers: { 'idempotency-key': 'has space' },
  });
  t.is(bad.status, 400);
  t.is(bad.body.error.code, 'invalid_idempotency_key');
});

test('concurrent requests with one Idempotency-Key create one operation; the ones in flight get 409', async (t) => {
  const p = await plane(t);
  const headers = { 'idempotency-key': 'burst' };
  const answers = await Promise.all(
    Array.from({ length: 12 }, () => request(`${p.url}/api/apps/idem/deploy`, { method: 'POST', json: {}, headers })),
  );
  const statuses = answers.map((a) => a.status);
  t.true(
    statuses.every((s) => s === 202 || s === 409),
    statuses.join(','),
  );
  const ids = new Set(answers.filter((a) => a.status === 202).map((a) => a.body.operation.id));
  t.is(ids.size, 1);
  t.is(listOperations(p.db, { app: 'idem' }).length, 1);
  for (const conflict of answers.filter((a) => a.status === 409))
    t.is(conflict.body.error.code, 'idempotency_request_in_flight');
  // A failed request keeps nothing: the key can be used again.
  const failed = await request(`${p.url}/api/apps/nope/deploy`, {
    method: 'POST',
    json: {},
    headers: { 'idempotency-key': 'retry-me' },
  });
  t.is(failed.status, 404);
  const retried = await request(`${p.url}/api/apps/idem/preflight`, {
    method: 'POST',
    json: {},
    headers: { 'idempotency-key': 'retry-me' },
  });
  t.is(retried.status, 202);
});

test('bad input answers 4xx with an error body and queued operations can be cancelled, running or finished ones not', async (t) => {
  const p = await plane(t);
  const cases: [string, string, unknown, number, string][] = [
    ['POST', '/api/apps/nope/deploy', {}, 404, 'app_not_found'],
    ['POST', '/api/apps/idem/deploy', { ref: 5 }, 400, 'invalid_request'],
    ['POST', '/api/apps/idem/deploy', { ref: '--upload-pack=x' }, 400, 'invalid_ref'],
    ['POST', '/api/apps/idem/deploy', { unknown: true }, 400, 'invalid_request'],
    ['POST', '/api/apps/idem/deploy', [1, 2], 400, 'invalid_request'],
    ['POST', '/api/apps/idem/rollback', { regions: ['mars'] }, 400, 'invalid_regions'],
    ['POST', '/api/apps/idem/rollback', { regions: 'local' }, 400, 'invalid_request'],
    ['POST', '/api/apps/idem/rollback', {}, 409, 'no_rollback_target'],
    ['POST', '/api/apps/idem/canary/promote', { now: true }, 400, 'invalid_request'],
    ['GET', '/api/v1/operations/op_missing', undefined, 404, 'operation_not_found'],
    ['POST', '/api/v1/operations/op_missing/cancel', {}, 404, 'operation_not_found'],
    ['GET', '/api/v1/deployments/dep_missing/steps', undefined, 404, 'deployment_not_found'],
    ['GET', '/api/saga/saga_missing', undefined, 404, 'saga_not_found'],
    ['GET', '/api/v1/deployments?limit=lots', undefined, 400, 'invalid_query'],
    ['GET', '/api/v1/deployments?kind=party', undefined, 400, 'invalid_query'],
    ['GET', '/api/webhooks/deliveries?offset=-1', undefined, 400, 'invalid_query'],
  ];
  for (const [method, path, json, status, code] of cases) {
    const response = await request(`${p.url}${path}`, { method, ...(json === undefined ? {} : { json }) });
    t.is(response.status, status, `${method} ${path}: ${response.text}`);
    t.is(response.body.error?.code, code, `${method} ${path}`);
    t.is(typeof response.body.error.message, 'string');
  }
  const malformed = await request(`${p.url}/api/apps/idem/deploy`, {
    method: 'POST',
    body: '{"ref":',
    headers: { 'content-type': 'application/json' },
  });
  t.is(malformed.status, 400);

  const queued = await request(`${p.url}/api/apps/idem/deploy`, { method: 'POST', json: {} });
  const cancelled = await request(`${p.url}/api/v1/operations/${queued.body.operation.id}/cancel`, { method: 'POST' });
  t.is(cancelled.status, 200);
  t.is(cancelled.body.operation.status, 'cancelled');
  const steps = await request(`${p.url}/api/v1/deployments/${queued.body.deploymentId}/steps`);
  t.is(steps.body.deployment.status, 'cancelled');
  const twice = await request(`${p.url}/api/v1/operations/${queued.body.operation.id}/cancel`, { method: 'POST' });
  t.is(twice.status, 409);
  t.is(twice.body.error.code, 'operation_not_cancellable');
  const active = await request(`${p.url}/api/operations/active`);
  t.is(active.status, 200);
  t.deepEqual(active.body.operations, []);
  t.like(active.body.drain, { draining: false, mode: 'fail', workerEnabled: false });
  t.is(active.body.counts.cancelled, 1);
});
