// tier: full
import test from 'ava';
import { startControlPlane } from '../../wiring/control-plane.js';
import { silentLogger } from '../../platform/logger.js';
import { request } from '../helpers/servers.js';
import { waitForChange } from '../helpers/wait-for.js';
import {
  appEvents,
  commitApp,
  deployAndWait,
  initAppsRepo,
  pipelineConfig,
  served,
  startPlane,
  waitForApp,
} from './pipeline-fixture.js';

test('a deploy interrupted at its health gate is undone after the restart: failed visibly, and rolled back to the last good release', async (t) => {
  // A long health deadline: the deploy is still waiting at `healthy` when the control plane stops.
  const config = pipelineConfig(t, { SVC_DEPLOY_HEALTHY_TIMEOUT: '2m' });
  initAppsRepo(config);
  const good = commitApp(config.appsDir, 'steady', { version: 'v1' });
  const first = await startControlPlane(config, silentLogger());
  // Closing is idempotent: this only matters when the test fails before its own stop.
  t.teardown(() => first.close());
  await waitForApp(first, 'steady');
  t.is((await deployAndWait(first, 'steady')).operation.status, 'succeeded');

  commitApp(config.appsDir, 'steady', { version: 'v2', healthStatus: 500 });
  const queued = await request(`${first.url}/api/apps/steady/deploy`, { method: 'POST', json: {} });
  t.is(queued.status, 202, queued.text);
  const scheduler = await first.reconcilers.targets.get('local');
  await waitForChange(
    [(listener) => scheduler.watch(() => listener()), (listener) => first.reconcilers.registry.watch(() => listener())],
    async () => {
      const steps = (await request(`${first.url}/api/v1/deployments/${queued.body.deploymentId}/steps`)).body;
      return steps.steps.some((s: { step: string; status: string }) => s.step === 'healthy' && s.status === 'running');
    },
    { what: 'the deploy waiting at healthy', timeoutMs: 30_000 },
  );
  // Stop while the release is on the runtime but not yet healthy (a crash is recovered the same way).
  await first.close();

  const second = await startPlane(t, config);
  const deployment = (await request(`${second.url}/api/v1/deployments/${queued.body.deploymentId}/steps`)).body
    .deployment;
  t.is(deployment.status, 'rolled_back');
  t.regex(deployment.message, /rollback to [0-9a-f]{12} queued \(op_/);
  const rollbacks = (await request(`${second.url}/api/v1/deployments?app=steady&kind=rollback`)).body.deployments;
  t.is(rollbacks.length, 1);
  t.is(rollbacks[0].trigger, 'auto-rollback');
  const rollback = await second.deploys.worker.waitFor(rollbacks[0].operationId, 30_000);
  t.is(rollback.status, 'succeeded', rollback.lastError ?? '');
  t.is((await request(`${second.url}/api/v1/deployments/${rollbacks[0].id}/steps`)).body.deployment.commit, good);
  t.deepEqual(await served(second, 'steady'), ['v1']);
  const types = (await appEvents(second, 'steady')).map((e) => e.type);
  t.true(types.includes('deploy.failed'));
  t.true(types.includes('deploy.auto_rollback'));
  t.true(types.includes('rollback.succeeded'));
});
