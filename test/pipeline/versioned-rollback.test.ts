// tier: full
/**
 * `POST /api/v1/apps/{id}/rollback`: the legacy rollback under the versioned conventions (an
 * Idempotency-Key required, a retry answered with the original response, errors in the error shape).
 */
import test from 'ava';
import { request } from '../helpers/servers.js';
import { listOperations } from '../../store/control/operations/operations.js';
import {
  commitApp,
  deployAndWait,
  initAppsRepo,
  pipelineConfig,
  served,
  startPlane,
  waitForApp,
} from './pipeline-fixture.js';

test('the versioned rollback needs an Idempotency-Key, queues one rollback per key and brings the previous release back', async (t) => {
  const config = pipelineConfig(t);
  initAppsRepo(config);
  const v1 = commitApp(config.appsDir, 'v1-rb', { version: 'v1' });
  const plane = await startPlane(t, config);
  await waitForApp(plane, 'v1-rb');
  const rollback = (app: string, json: unknown, key?: string) =>
    request(`${plane.url}/api/v1/apps/${app}/rollback`, {
      method: 'POST',
      json,
      headers: key === undefined ? {} : { 'idempotency-key': key },
    });

  const nothingOlder = await rollback('v1-rb', {}, 'rb-0');
  t.is(nothingOlder.status, 409);
  t.is(nothingOlder.body.error.code, 'no_rollback_target');
  t.is(typeof nothingOlder.body.error.message, 'string');

  t.is((await deployAndWait(plane, 'v1-rb')).operation.status, 'succeeded');
  commitApp(config.appsDir, 'v1-rb', { version: 'v2' });
  t.is((await deployAndWait(plane, 'v1-rb')).operation.status, 'succeeded');
  t.deepEqual(await served(plane, 'v1-rb'), ['v2']);

  const refusals: [string, unknown, string | undefined, number, string][] = [
    ['v1-rb', {}, undefined, 400, 'idempotency_key_required'],
    ['v1-rb', {}, 'has space', 400, 'invalid_idempotency_key'],
    ['v1-rb', { regions: ['mars'] }, 'rb-1', 400, 'invalid_regions'],
    ['v1-rb', { regions: 'local' }, 'rb-2', 400, 'invalid_request'],
    ['v1-rb', { now: true }, 'rb-3', 400, 'invalid_request'],
    ['v1-rb', [1], 'rb-4', 400, 'invalid_request'],
    ['nope', {}, 'rb-5', 404, 'app_not_found'],
  ];
  for (const [app, json, key, status, code] of refusals) {
    const answer = await rollback(app, json, key);
    t.is(answer.status, status, `${JSON.stringify(json)} ${key}: ${answer.text}`);
    t.is(answer.body.error?.code, code, JSON.stringify(json));
    t.is(typeof answer.body.error.message, 'string');
  }
  const before = listOperations(plane.db, { app: 'v1-rb' }).length;

  const queued = await rollback('v1-rb', { regions: ['local'] }, 'rb-go');
  t.is(queued.status, 202, queued.text);
  t.is(queued.body.operation.kind, 'app.rollback');
  t.regex(queued.body.deploymentId, /\S/);
  t.is(queued.body.links.operation, `/api/v1/operations/${queued.body.operation.id}`);
  const replay = await rollback('v1-rb', { regions: ['local'] }, 'rb-go');
  t.is(replay.status, 202);
  t.is(replay.headers.get('idempotent-replayed'), 'true');
  t.deepEqual(replay.body, queued.body);
  const reused = await rollback('v1-rb', {}, 'rb-go');
  t.is(reused.status, 422);
  t.is(reused.body.error.code, 'idempotency_key_reused');
  t.is(listOperations(plane.db, { app: 'v1-rb' }).length, before + 1, 'one rollback queued for the key');

  const done = await plane.deploys.worker.waitFor(queued.body.operation.id, 30_000);
  t.is(done.status, 'succeeded', JSON.stringify(done));
  const steps = (await request(`${plane.url}/api/v1/deployments/${queued.body.deploymentId}/steps`)).body;
  t.is(steps.deployment.kind, 'rollback');
  t.is(steps.deployment.commit, v1);
  t.deepEqual(await served(plane, 'v1-rb'), ['v1']);
});
