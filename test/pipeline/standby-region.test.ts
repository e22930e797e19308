// tier: full
/**
 * Standby on one host: a region of `trafficWeight: 0` is deployed and health-checked, and the wake
 * gateway sends it no traffic; a weight between 0 and 100 on the only region is refused at validation
 * (file:line:col) and at deploy.
 */
import test from 'ava';
import { request } from '../helpers/servers.js';
import { hostRequest } from '../routing/wake-harness.js';
import { waitForReconciled } from '../helpers/wait-for.js';
import { commitApp, deployAndWait, initAppsRepo, pipelineConfig, startPlane, waitForApp } from './pipeline-fixture.js';

const HOST = 'standby.example.test';

/** The pid each running web allocation answers with, by region (asked on the allocation's own port). */
async function pidsByRegion(url: string, app: string): Promise<Record<string, string[]>> {
  const view = (await request(`${url}/api/apps/${app}`)).body;
  const out: Record<string, string[]> = {};
  for (const process of view.processes.filter((p: { process: string }) => p.process === 'web')) {
    for (const allocation of process.allocations) {
      if (allocation.status !== 'running' || allocation.desiredStatus !== 'run') continue;
      const text = await (await fetch(`http://127.0.0.1:${allocation.ports.http}/`)).text();
      (out[process.region] ??= []).push(text.split(' ')[1]!);
    }
  }
  return out;
}

test('a region of weight 0 is deployed and passes its checks but takes no traffic; a split of the only region is refused', async (t) => {
  const config = pipelineConfig(t);
  initAppsRepo(config);
  const regions = ['regions:', '  east: {}', '  west: {trafficWeight: 0}', 'endpoints:', `  - url: ${HOST}`].join('\n');
  commitApp(config.appsDir, 'standby', { version: 'v1', extra: regions });
  const plane = await startPlane(t, config);
  await waitForApp(plane, 'standby');
  const deployed = await deployAndWait(plane, 'standby');
  t.is(deployed.operation.status, 'succeeded', deployed.operation.lastError ?? '');
  t.deepEqual(
    deployed.steps.regions.map((r: { region: string; status: string }) => [r.region, r.status]),
    [
      ['east', 'succeeded'],
      ['west', 'succeeded'],
    ],
  );
  const validation = (await request(`${plane.url}/api/apps/standby`)).body;
  t.false(
    JSON.stringify(validation).includes('driver.trafficWeight'),
    'weight 0 is honoured on the local driver: no warning',
  );

  const pids = await pidsByRegion(plane.url, 'standby');
  t.is(pids.east?.length, 1, JSON.stringify(pids));
  t.is(pids.west?.length, 1, 'the standby region runs');
  const manifest = (await request(`${plane.url}/api/services/manifest`)).body;
  const web = manifest.services.find((s: { service: string }) => s.service === 'standby-web');
  t.deepEqual(
    web.instances.map((i: { status: string }) => i.status),
    ['passing', 'passing'],
    'both regions are health-checked and pass',
  );
  const served = new Set<string>();
  for (let i = 0; i < 12; i += 1) {
    const answer = await hostRequest(plane.url, { host: HOST });
    t.is(answer.status, 200, answer.text);
    served.add(answer.text.split(' ')[1]!);
  }
  t.deepEqual([...served], pids.east, 'every request went to the region that takes traffic');

  const split = 'name: standby\nregions:\n  east: {trafficWeight: 50}\nprocesses:\n  web:\n    port: 8080\n';
  const checked = (
    await request(`${plane.url}/api/v1/validate/infraspec`, {
      method: 'POST',
      json: { spec: split },
    })
  ).body;
  t.false(checked.valid);
  const finding = checked.findings.find((f: { rule: string }) => f.rule === 'trafficWeight.singleRegion');
  t.like(finding, { severity: 'error', path: 'regions.east.trafficWeight', line: 3, column: 25 });
  t.regex(finding.message, /"east" is the only region/);

  commitApp(config.appsDir, 'standby', {
    version: 'v2',
    extra: ['regions:', '  east: {trafficWeight: 50}', 'endpoints:', `  - url: ${HOST}`].join('\n'),
  });
  await waitForReconciled(
    [plane.reconcilers.specController],
    async () =>
      JSON.stringify((await request(`${plane.url}/api/apps/standby`)).body).includes('trafficWeight.singleRegion'),
    { what: 'the split spec read' },
  );
  const refused = await request(`${plane.url}/api/apps/standby/deploy`, { method: 'POST', json: {} });
  t.is(refused.status, 422, refused.text);
  t.is(refused.body.error.code, 'app_spec_invalid');
  t.regex(refused.body.error.message, /"east" is the only region/);
  t.regex(
    refused.body.error.details.findings[0],
    /^standby\/infraspec\.yaml:\d+:25 error trafficWeight\.singleRegion /,
  );
  const deploys = (await request(`${plane.url}/api/v1/deployments?app=standby&kind=deploy`)).body.deployments;
  t.is(deploys.length, 1, 'nothing was queued');
  t.deepEqual(Object.keys(await pidsByRegion(plane.url, 'standby')).sort(), ['east', 'west'], 'v1 still runs');
});
