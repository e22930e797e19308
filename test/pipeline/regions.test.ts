// tier: full
import test from 'ava';
import { request } from '../helpers/servers.js';
import {
  commitApp,
  deployAndWait,
  initAppsRepo,
  pipelineConfig,
  startPlane,
  stepSummary,
  waitForApp,
} from './pipeline-fixture.js';

async function servedByRegion(url: string, app: string): Promise<Record<string, string[]>> {
  const view = (await request(`${url}/api/apps/${app}`)).body;
  const out: Record<string, string[]> = {};
  for (const process of view.processes.filter((p: { process: string }) => p.process === 'web')) {
    for (const allocation of process.allocations) {
      // An allocation a passing one replaced drains beside it for a moment (start before stop, ADR 0160).
      if (allocation.status !== 'running' || allocation.desiredStatus !== 'run') continue;
      const text = await (await fetch(`http://127.0.0.1:${allocation.ports.http}/`)).text();
      (out[process.region] ??= []).push(text.split(' ')[0]!);
    }
  }
  return out;
}

test('a rollback of selected regions returns only those regions to the previous release, with one region row each', async (t) => {
  const config = pipelineConfig(t);
  initAppsRepo(config);
  const regions = 'regions:\n  east: {}\n  west: {}';
  const v1 = commitApp(config.appsDir, 'regional', { version: 'v1', extra: regions });
  const plane = await startPlane(t, config);
  await waitForApp(plane, 'regional');
  const first = await deployAndWait(plane, 'regional');
  t.is(first.operation.status, 'succeeded', first.operation.lastError ?? '');
  t.deepEqual(
    first.steps.regions.map((r: { region: string }) => r.region),
    ['east', 'west'],
  );
  const v2 = commitApp(config.appsDir, 'regional', { version: 'v2', extra: regions });
  t.is((await deployAndWait(plane, 'regional')).operation.status, 'succeeded');
  t.deepEqual(await servedByRegion(plane.url, 'regional'), { east: ['v2'], west: ['v2'] });

  const bad = await request(`${plane.url}/api/apps/regional/rollback`, {
    method: 'POST',
    json: { regions: ['north'] },
  });
  t.is(bad.status, 400);
  t.is(bad.body.error.code, 'invalid_regions');
  const { operation, steps } = await deployAndWait(plane, 'regional', { regions: ['east'] }, 'rollback');
  t.is(operation.status, 'succeeded', operation.lastError ?? '');
  t.deepEqual(stepSummary(steps), ['submit succeeded', 'healthy succeeded', 'forge skipped']);
  t.deepEqual(
    steps.regions.map((r: { region: string; status: string }) => [r.region, r.status]),
    [['east', 'succeeded']],
  );
  t.is(steps.deployment.commit, v1);
  await plane.reconcilers.whenIdle();
  t.deepEqual(await servedByRegion(plane.url, 'regional'), { east: ['v1'], west: ['v2'] });
  // A later deploy makes every region uniform again.
  const again = await deployAndWait(plane, 'regional', { ref: v2 });
  t.is(again.operation.status, 'succeeded');
  t.deepEqual(await servedByRegion(plane.url, 'regional'), { east: ['v2'], west: ['v2'] });
});
