// tier: full
import test from 'ava';
import { runSvc } from '../helpers/cli.js';
import { commitApp, initAppsRepo, pipelineConfig, startPlane, waitForApp } from './pipeline-fixture.js';

test('svc deploy --follow shows each step live and exits 0; svc ops lists the queue; svc rollback without a target exits 1', async (t) => {
  const config = pipelineConfig(t);
  initAppsRepo(config);
  commitApp(config.appsDir, 'clied', { version: 'v1', test: 'echo testing' });
  const plane = await startPlane(t, config);
  await waitForApp(plane, 'clied');
  const deploy = await runSvc(['deploy', 'clied', '--follow', '--api', plane.url], { timeoutMs: 60_000 });
  t.is(deploy.code, 0, deploy.stderr);
  t.regex(deploy.stdout, /^deploy of clied queued: operation op_\w+, saga saga_\w+, deployment dep_\w+$/m);
  for (const step of ['clone', 'build', 'test', 'submit', 'healthy', 'cleanup'])
    t.regex(deploy.stdout, new RegExp(`^  ${step}\\s+succeeded`, 'm'));
  t.regex(deploy.stdout, /^  forge\s+skipped\s+.*no endpoints/m);
  t.regex(deploy.stdout, /^deploy succeeded at [0-9a-f]{12}/m);
  const ops = await runSvc(['ops', '--api', plane.url]);
  t.is(ops.code, 0, ops.stderr);
  t.regex(ops.stdout, /^worker enabled {2}draining=false {2}drain mode=fail/m);
  t.regex(ops.stdout, /^ID\s+KIND\s+APP\s+STATUS/m);
  const rollback = await runSvc(['rollback', 'clied', '--api', plane.url]);
  t.is(rollback.code, 1);
  t.regex(rollback.stderr, /no earlier successful deployment to roll back to \(no_rollback_target\)/);
  const preflight = await runSvc(['preflight', 'clied', '--ref', 'main', '--json', '--api', plane.url]);
  t.is(preflight.code, 0, preflight.stderr);
  const queued = JSON.parse(preflight.stdout);
  t.is(queued.operation.kind, 'app.preflight');
  const one = await runSvc(['ops', queued.operation.id, '--api', plane.url]);
  t.is(one.code, 0, one.stderr);
  t.regex(one.stdout, new RegExp(`^operation ${queued.operation.id} {2}app.preflight`, 'm'));
});
