// tier: full
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { request } from '../helpers/servers.js';
import {
  appEvents,
  commitApp,
  deployAndWait,
  git,
  initAppsRepo,
  pipelineConfig,
  served,
  startPlane,
  stepSummary,
  waitForApp,
} from './pipeline-fixture.js';

test('canaries start first, pass the health gate, are promoted automatically after evaluateAfter, and unhealthy canaries are rolled back', async (t) => {
  const config = pipelineConfig(t);
  initAppsRepo(config);
  const canary = { count: 1, evaluateAfter: '300ms' };
  commitApp(config.appsDir, 'birdy', { version: 'v1', count: 2, canary });
  const plane = await startPlane(t, config);
  await waitForApp(plane, 'birdy');
  t.is((await deployAndWait(plane, 'birdy')).operation.status, 'succeeded');
  t.deepEqual(await served(plane, 'birdy'), ['v1', 'v1']);

  commitApp(config.appsDir, 'birdy', { version: 'v2', count: 2, canary });
  const v2 = await deployAndWait(plane, 'birdy');
  t.is(v2.operation.status, 'succeeded', v2.operation.lastError ?? '');
  t.regex(
    v2.steps.steps.find((s: { step: string }) => s.step === 'healthy').message,
    /canaries healthy after 300 ms: promoted automatically/,
  );
  t.deepEqual(await served(plane, 'birdy'), ['v2', 'v2']);

  commitApp(config.appsDir, 'birdy', { version: 'v3', count: 2, canary, healthStatus: 500 });
  const v3 = await deployAndWait(plane, 'birdy');
  t.is(v3.operation.status, 'failed');
  t.regex(v3.operation.lastError, /canaries healthy/);
  t.is(v3.steps.deployment.status, 'rolled_back');
  const rollback = (await request(`${plane.url}/api/v1/deployments?app=birdy&kind=rollback`)).body.deployments[0];
  t.is((await plane.deploys.worker.waitFor(rollback.operationId, 20_000)).status, 'succeeded');
  await plane.reconcilers.whenIdle();
  t.deepEqual(await served(plane, 'birdy'), ['v2', 'v2']);
  const scheduler = await plane.reconcilers.targets.get('local');
  const allocations = await scheduler.listAllocations({ app: 'birdy' });
  t.false(
    allocations.some((a) => a.canary && a.desiredStatus === 'run'),
    'no canary left',
  );
});

test('an operator promotes waiting canaries manually and canary.promoted is emitted', async (t) => {
  const config = pipelineConfig(t, { SVC_DEPLOY_HEALTHY_TIMEOUT: '20s' });
  initAppsRepo(config);
  const canary = { count: 1, evaluateAfter: '1h' };
  commitApp(config.appsDir, 'manual', { version: 'v1', count: 2, canary });
  const plane = await startPlane(t, config);
  await waitForApp(plane, 'manual');
  t.is((await deployAndWait(plane, 'manual')).operation.status, 'succeeded');
  const none = await request(`${plane.url}/api/apps/manual/canary/promote`, { method: 'POST' });
  t.is(none.status, 409);
  t.is(none.body.error.code, 'no_canaries_awaiting');

  commitApp(config.appsDir, 'manual', { version: 'v2', count: 2, canary });
  const queued = await request(`${plane.url}/api/apps/manual/deploy`, { method: 'POST', json: {} });
  t.is(queued.status, 202);
  // Wait until the deploy sits in its evaluation with a healthy canary.
  const scheduler = await plane.reconcilers.targets.get('local');
  await new Promise<void>((resolve) => {
    const check = async () => {
      const steps = (await request(`${plane.url}/api/v1/deployments/${queued.body.deploymentId}/steps`)).body.steps as {
        step: string;
      }[];
      const jobs = await scheduler.listJobs({ app: 'manual' });
      if (steps.some((s) => s.step === 'healthy') && jobs.some((j) => j.awaitingPromotion.length > 0)) {
        const instances = await plane.reconcilers.registry.instances('manual-web');
        if (instances.some((i) => i.tags.includes('canary') && i.checks.every((c) => c.status === 'passing')))
          return true;
      }
      return false;
    };
    const unsubscribe = plane.reconcilers.registry.watch(
      () => void check().then((done) => done && (unsubscribe(), resolve())),
    );
  });
  const promoted = await request(`${plane.url}/api/apps/manual/canary/promote`, { method: 'POST' });
  t.is(promoted.status, 200, promoted.text);
  t.deepEqual(promoted.body.promoted, ['manual']);
  const operation = await plane.deploys.worker.waitFor(queued.body.operation.id, 20_000);
  t.is(operation.status, 'succeeded', operation.lastError ?? '');
  const steps = (await request(`${plane.url}/api/v1/deployments/${queued.body.deploymentId}/steps`)).body;
  t.regex(steps.steps.find((s: { step: string }) => s.step === 'healthy').message, /^promoted by an operator/);
  t.deepEqual(await served(plane, 'manual'), ['v2', 'v2']);
  const event = (await appEvents(plane, 'manual')).find((e) => e.type === 'canary.promoted');
  t.truthy(event);
  t.is(event?.metadata.correlationKey, 'manual:deploy');
  t.is(event?.metadata.deploymentId, queued.body.deploymentId);
});

test('a deploy group gives each app its own saga and operation and waitReady holds later apps until the earlier one is healthy', async (t) => {
  const config = pipelineConfig(t);
  initAppsRepo(config);
  commitApp(config.appsDir, 'ga', { version: 'v1' });
  commitApp(config.appsDir, 'gb', { version: 'v1' });
  fs.mkdirSync(path.join(config.appsDir, 'deploy-groups'));
  fs.writeFileSync(
    path.join(config.appsDir, 'deploy-groups', 'stack.yaml'),
    'name: stack\napps:\n  - app: ga\n    waitReady: true\n  - app: gb\n    waitReady: true\n',
  );
  git(config.appsDir, 'add', '-A');
  git(config.appsDir, 'commit', '-q', '-m', 'group');
  const plane = await startPlane(t, config);
  await waitForApp(plane, 'ga');
  await waitForApp(plane, 'gb');
  const missing = await request(`${plane.url}/api/deploy-groups/nope/deploy`, { method: 'POST', json: {} });
  t.is(missing.status, 404);
  t.is(missing.body.error.code, 'deploy_group_not_found');
  const queued = await request(`${plane.url}/api/deploy-groups/stack/deploy`, { method: 'POST', json: {} });
  t.is(queued.status, 202, queued.text);
  const [a, b] = queued.body.deployments;
  t.not(a.sagaId, b.sagaId);
  t.is(b.operation.dependsOn, a.operation.id);
  const opA = await plane.deploys.worker.waitFor(a.operation.id, 20_000);
  const opB = await plane.deploys.worker.waitFor(b.operation.id, 20_000);
  t.is(opA.status, 'succeeded');
  t.is(opB.status, 'succeeded');
  t.true(opB.startedAt! >= opA.finishedAt!, `gb started ${opB.startedAt} after ga finished ${opA.finishedAt}`);
  t.deepEqual(
    stepSummary((await request(`${plane.url}/api/v1/deployments/${b.deploymentId}/steps`)).body).at(-1),
    'cleanup succeeded',
  );
});
