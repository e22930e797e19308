// tier: full
import test from 'ava';
import { request } from '../helpers/servers.js';
import {
  appEvents,
  commitApp,
  deployAndWait,
  initAppsRepo,
  pipelineConfig,
  served,
  startPlane,
  stepSummary,
  waitForApp,
} from './pipeline-fixture.js';
import { staticPort } from '../helpers/static-port.js';

test('a deploy of an app built from its apps-repository folder passes every step and serves the new release', async (t) => {
  const config = pipelineConfig(t);
  initAppsRepo(config);
  const commit = commitApp(config.appsDir, 'web1', { version: 'v1' });
  const plane = await startPlane(t, config);
  await waitForApp(plane, 'web1');
  const { queued, operation, steps } = await deployAndWait(plane, 'web1');
  t.regex(queued.sagaId, /^saga_/);
  t.is(queued.operation.kind, 'app.deploy');
  t.is(operation.status, 'succeeded', operation.lastError ?? '');
  t.deepEqual(stepSummary(steps), [
    'clone succeeded',
    'build succeeded',
    'test skipped',
    'snapshot skipped',
    'migrate skipped',
    'submit succeeded',
    'healthy succeeded',
    'forge skipped',
    'cleanup succeeded',
  ]);
  t.is(steps.deployment.commit, commit);
  t.deepEqual(
    steps.regions.map((r: { region: string; status: string }) => [r.region, r.status]),
    [['local', 'succeeded']],
  );
  const app = (await request(`${plane.url}/api/apps/web1`)).body;
  const web = app.processes.find((p: { process: string }) => p.process === 'web');
  const port = web.allocations[0].ports.http;
  t.regex(await (await fetch(`http://127.0.0.1:${port}/`)).text(), /^v1 \d+$/);
  const saga = await request(`${plane.url}/api/saga/${queued.sagaId}`);
  t.is(saga.status, 200);
  t.is(saga.body.deployment.status, 'succeeded');
  t.true(saga.body.timeline.some((e: { what: string }) => e.what === 'healthy succeeded'));
  const op = await request(`${plane.url}/api/v1/operations/${queued.operation.id}`);
  t.is(op.body.status, 'succeeded');
  t.is(op.body.attempts, 1);
  t.is(op.body.lockOwner, null);
});

test('a failing test command fails the deploy at test with its output kept, and nothing is submitted', async (t) => {
  const config = pipelineConfig(t);
  initAppsRepo(config);
  commitApp(
    config.appsDir,
    'tested',
    { test: 'node check.mjs' },
    { 'check.mjs': "console.log('checking'); console.error('assertion failed: 1 !== 2'); process.exit(3);\n" },
  );
  const plane = await startPlane(t, config);
  await waitForApp(plane, 'tested');
  const { operation, steps } = await deployAndWait(plane, 'tested');
  t.is(operation.status, 'failed');
  t.regex(operation.lastError, /^test: build.test "node check.mjs" exited with code 3/);
  t.deepEqual(stepSummary(steps), ['clone succeeded', 'build succeeded', 'test failed']);
  const failed = steps.steps.find((s: { step: string }) => s.step === 'test');
  t.regex(failed.output, /checking\n/);
  t.regex(failed.output, /assertion failed: 1 !== 2/);
  t.is(steps.deployment.status, 'failed');
  t.is(steps.deployment.failedStep, 'test');
  const app = (await request(`${plane.url}/api/apps/tested`)).body;
  t.is(app.release, null);
  t.deepEqual(app.processes, []);
  const events = await appEvents(plane, 'tested');
  const failedEvent = events.find((e) => e.type === 'deploy.failed');
  t.truthy(failedEvent);
  t.is(failedEvent?.metadata.step, 'test');
  t.is(failedEvent?.metadata.correlationKey, 'tested:deploy');
});

test('a broken health check fails at healthy and rolls back automatically to the last good release, with events and rollback steps', async (t) => {
  const config = pipelineConfig(t);
  initAppsRepo(config);
  const good = commitApp(config.appsDir, 'flaky', { version: 'v1' });
  const plane = await startPlane(t, config);
  await waitForApp(plane, 'flaky');
  t.is((await deployAndWait(plane, 'flaky')).operation.status, 'succeeded');
  const bad = commitApp(config.appsDir, 'flaky', { version: 'v2', healthStatus: 500 });
  const { queued, operation, steps } = await deployAndWait(plane, 'flaky');
  t.is(operation.status, 'failed');
  t.regex(operation.lastError, /^healthy: not healthy within 6000 ms: .*rollback to .* queued \(op_/);
  t.deepEqual(stepSummary(steps), [
    'clone succeeded',
    'build succeeded',
    'test skipped',
    'snapshot skipped',
    'migrate skipped',
    'submit succeeded',
    'healthy failed',
  ]);
  t.is(steps.deployment.status, 'rolled_back');
  t.is(steps.deployment.commit, bad);
  // The rollback is its own operation and saga, queued through the worker.
  const rollbacks = (await request(`${plane.url}/api/v1/deployments?app=flaky&kind=rollback`)).body.deployments;
  t.is(rollbacks.length, 1);
  t.is(rollbacks[0].trigger, 'auto-rollback');
  const rollbackOp = await plane.deploys.worker.waitFor(rollbacks[0].operationId, 20_000);
  t.is(rollbackOp.status, 'succeeded', rollbackOp.lastError ?? '');
  t.is(rollbackOp.kind, 'app.rollback');
  const rollbackSteps = (await request(`${plane.url}/api/v1/deployments/${rollbacks[0].id}/steps`)).body;
  t.deepEqual(stepSummary(rollbackSteps), ['submit succeeded', 'healthy succeeded', 'forge skipped']);
  t.is(rollbackSteps.deployment.commit, good);
  t.deepEqual(await served(plane, 'flaky'), ['v1']);
  const events = await appEvents(plane, 'flaky');
  const types = events.map((e) => e.type);
  for (const type of ['deploy.succeeded', 'deploy.failed', 'deploy.auto_rollback', 'rollback.succeeded'])
    t.true(types.includes(type), `${type} in ${types.join(', ')}`);
  const auto = events.find((e) => e.type === 'deploy.auto_rollback')!;
  t.is(auto.metadata.deploymentId, queued.deploymentId);
  t.is(auto.metadata.step, 'healthy');
  t.is(auto.metadata.correlationKey, 'flaky:deploy');
  t.is(events.find((e) => e.type === 'rollback.succeeded')?.metadata.correlationKey, 'flaky:rollback');
  // A manual rollback now has nothing older than the running release to return to.
  const none = await request(`${plane.url}/api/apps/flaky/rollback`, { method: 'POST', json: {} });
  t.is(none.status, 409);
  t.is(none.body.error.code, 'no_rollback_target');
});

test('a first deploy that never gets healthy leaves no half-new app running', async (t) => {
  const config = pipelineConfig(t);
  initAppsRepo(config);
  commitApp(config.appsDir, 'never', { version: 'v1', healthStatus: 503 });
  const plane = await startPlane(t, config);
  await waitForApp(plane, 'never');
  const { operation, steps } = await deployAndWait(plane, 'never');
  t.is(operation.status, 'failed');
  t.regex(steps.deployment.message, /no earlier successful deployment: the new jobs are stopped/);
  await plane.reconcilers.whenIdle();
  const scheduler = await plane.reconcilers.targets.get('local');
  t.deepEqual(
    (await scheduler.listJobs({ app: 'never' })).filter((j) => j.status === 'running'),
    [],
  );
});

test('preflight runs validate, clone, inspect, build and test and changes nothing at runtime', async (t) => {
  const config = pipelineConfig(t);
  initAppsRepo(config);
  commitApp(
    config.appsDir,
    'pre',
    { version: 'v1', test: 'true', extra: 'secrets:\n  - DB_PASSWORD\nplacement:\n  nodePool: batch' },
    { '.env': 'X=1\n' },
  );
  const plane = await startPlane(t, config);
  await waitForApp(plane, 'pre');
  const missing = await deployAndWait(plane, 'pre', {}, 'preflight');
  t.is(missing.operation.kind, 'app.preflight');
  t.is(missing.operation.status, 'failed');
  t.deepEqual(stepSummary(missing.steps), ['validate succeeded', 'clone succeeded', 'inspect failed']);
  const inspect = missing.steps.steps.find((s: { step: string }) => s.step === 'inspect');
  t.regex(inspect.message, /secrets: DB_PASSWORD is declared but has no value/);
  t.regex(inspect.output, /warning source.env-file/);
  const fs = await import('node:fs');
  fs.mkdirSync(`${config.dataDir}/secrets/pre`, { recursive: true });
  fs.writeFileSync(`${config.dataDir}/secrets/pre/DB_PASSWORD`, 'hunter2');
  const ok = await deployAndWait(plane, 'pre', { ref: 'main' }, 'preflight');
  t.is(ok.operation.status, 'succeeded', ok.operation.lastError ?? '');
  t.deepEqual(stepSummary(ok.steps), [
    'validate succeeded',
    'clone succeeded',
    'inspect succeeded',
    'build succeeded',
    'test succeeded',
    'cleanup succeeded',
  ]);
  t.false(JSON.stringify(ok.steps).includes('hunter2'));
  // The node pool this host cannot honour is said aloud by the preflight, at its place in the spec.
  const validate = ok.steps.steps.find((s: { step: string }) => s.step === 'validate');
  t.regex(validate.message, /with 1 warning\(s\): placement\.nodePool: "batch" is not applied on the local driver/);
  t.regex(validate.output, /^pre\/infraspec\.yaml:\d+:13 warning driver\.nodePool placement\.nodePool: /m);
  const app = (await request(`${plane.url}/api/apps/pre`)).body;
  t.is(app.release, null);
  t.deepEqual(app.processes, []);
  t.deepEqual(
    (await appEvents(plane, 'pre')).filter((e) => e.type.startsWith('deploy.')),
    [],
  );
});

test('a manual rollback re-deploys the previous release without clone, build or test, with one region row per region', async (t) => {
  const config = pipelineConfig(t);
  initAppsRepo(config);
  const v1 = commitApp(config.appsDir, 'manual-rb', { version: 'v1' });
  const plane = await startPlane(t, config);
  await waitForApp(plane, 'manual-rb');
  t.is((await deployAndWait(plane, 'manual-rb')).operation.status, 'succeeded');
  commitApp(config.appsDir, 'manual-rb', { version: 'v2' });
  t.is((await deployAndWait(plane, 'manual-rb')).operation.status, 'succeeded');
  t.deepEqual(await served(plane, 'manual-rb'), ['v2']);
  const { queued, operation, steps } = await deployAndWait(plane, 'manual-rb', { regions: ['local'] }, 'rollback');
  t.is(queued.operation.kind, 'app.rollback');
  t.is(operation.status, 'succeeded', operation.lastError ?? '');
  t.deepEqual(stepSummary(steps), ['submit succeeded', 'healthy succeeded', 'forge skipped']);
  t.is(steps.deployment.commit, v1);
  t.deepEqual(
    steps.regions.map((r: { region: string }) => r.region),
    ['local'],
  );
  t.deepEqual(await served(plane, 'manual-rb'), ['v1']);
  const events = await appEvents(plane, 'manual-rb');
  t.true(events.some((e) => e.type === 'rollback.succeeded' && e.metadata.deploymentId === queued.deploymentId));
});

test('the production profile refuses anything but a digest-pinned image, naming the admission rule', async (t) => {
  const production = pipelineConfig(t, {
    SVC_PROFILE: 'production',
    SVC_RELEASE_SIGNATURE_POLICY: 'none',
    SVC_REQUIRE_EXPLICIT_AUTH: 'true',
    SVC_API_TOKEN: 'tok',
  });
  initAppsRepo(production);
  commitApp(production.appsDir, 'prod', { version: 'v1' });
  const prodPlane = await startPlane(t, production);
  await waitForApp(prodPlane, 'prod');
  const queued = prodPlane.deploys.deploys.deploy('prod');
  const op = await prodPlane.deploys.worker.waitFor(queued.operation.id, 20_000);
  t.is(op.status, 'failed');
  t.regex(
    op.lastError!,
    /^clone: production admission refused \(digest-pinned\): build\.image must be an immutable image@sha256:<digest>, and none is set/,
  );
});

test('a static port used by another app is logged as port.conflict with a suggestion; the local driver then refuses the held port', async (t) => {
  const config = pipelineConfig(t);
  initAppsRepo(config);
  const port = await staticPort();
  // Two apps asking for the same host port.
  const spec = (name: string) =>
    `name: ${name}\ndeploy: true\nprocesses:\n  web:\n    port: 8080\n    hostPort: ${port}\n    resources:\n      memory: 64\n`;
  const fs = await import('node:fs');
  for (const name of ['owner', 'second']) {
    fs.mkdirSync(`${config.appsDir}/${name}`, { recursive: true });
    fs.writeFileSync(`${config.appsDir}/${name}/infraspec.yaml`, spec(name));
    fs.writeFileSync(
      `${config.appsDir}/${name}/Dockerfile`,
      'FROM node:20-alpine\nWORKDIR /app\nCOPY . .\nCMD ["node", "server.mjs"]\n',
    );
    fs.writeFileSync(
      `${config.appsDir}/${name}/server.mjs`,
      "import http from 'node:http';\nhttp.createServer((q, r) => r.end('ok')).listen(Number(process.env.PORT), '127.0.0.1');\n",
    );
  }
  const { git } = await import('./pipeline-fixture.js');
  git(config.appsDir, 'add', '-A');
  git(config.appsDir, 'commit', '-q', '-m', 'ports');
  const plane = await startPlane(t, config);
  await waitForApp(plane, 'owner');
  await waitForApp(plane, 'second');
  t.is((await deployAndWait(plane, 'owner')).operation.status, 'succeeded');
  const second = await deployAndWait(plane, 'second');
  const submit = second.steps.steps.find((s: { step: string }) => s.step === 'submit');
  // The check only warns; the local driver then refuses to bind a held port, which ends the submit.
  t.regex(submit.message, new RegExp(`port\\.conflict: port ${port} is used by owner suggest ${port + 1}`));
  t.is(submit.status, 'failed');
  t.regex(submit.message, /the scheduler refused the jobs: job second: static port \d+ is held by allocation/);
});

test('the forge step updates the tunnel ingress through the routing controller for an app with endpoints', async (t) => {
  const config = pipelineConfig(t);
  initAppsRepo(config);
  const port = await staticPort();
  commitApp(config.appsDir, 'forged', {
    version: 'v1',
    portNumber: port,
    extra: 'endpoints:\n  - url: forged.example.test',
  });
  const plane = await startPlane(t, config);
  await waitForApp(plane, 'forged');
  const { operation, steps } = await deployAndWait(plane, 'forged');
  t.is(operation.status, 'succeeded', operation.lastError ?? '');
  const forge = steps.steps.find((s: { step: string }) => s.step === 'forge');
  t.is(forge.status, 'succeeded');
  t.regex(forge.message, /tunnel ingress routes forged\.example\.test/);
  const fs = await import('node:fs');
  t.regex(fs.readFileSync(config.tunnelConfigFile, 'utf8'), /forged\.example\.test/);
});

test('a deploy where one of two processes fails is rolled back as a whole: no half-new app stays', async (t) => {
  const config = pipelineConfig(t);
  initAppsRepo(config);
  const fs = await import('node:fs');
  const { git, server } = await import('./pipeline-fixture.js');
  const dir = `${config.appsDir}/pair`;
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(
    `${dir}/infraspec.yaml`,
    'name: pair\ndeploy: true\nprocesses:\n  web:\n    port: 8080\n    health:\n      path: /healthz\n      interval: 100ms\n      timeout: 1s\n  worker:\n    command: node worker.mjs\n',
  );
  fs.writeFileSync(`${dir}/Dockerfile`, 'FROM node:20-alpine\nWORKDIR /app\nCOPY . .\nCMD ["node", "server.mjs"]\n');
  const write = (version: string, workerCrashes: boolean) => {
    fs.writeFileSync(`${dir}/server.mjs`, server(version, 200));
    fs.writeFileSync(
      `${dir}/worker.mjs`,
      workerCrashes ? "console.error('boom'); process.exit(1);\n" : 'setInterval(() => {}, 1000);\n',
    );
    git(config.appsDir, 'add', '-A');
    git(config.appsDir, 'commit', '-q', '-m', version);
    return git(config.appsDir, 'rev-parse', 'HEAD');
  };
  const good = write('v1', false);
  const plane = await startPlane(t, config);
  await waitForApp(plane, 'pair');
  t.is((await deployAndWait(plane, 'pair')).operation.status, 'succeeded');
  write('v2', true);
  const { operation, steps } = await deployAndWait(plane, 'pair');
  t.is(operation.status, 'failed');
  t.is(steps.deployment.status, 'rolled_back');
  const rollback = (await request(`${plane.url}/api/v1/deployments?app=pair&kind=rollback`)).body.deployments[0];
  t.is((await plane.deploys.worker.waitFor(rollback.operationId, 20_000)).status, 'succeeded');
  const scheduler = await plane.reconcilers.targets.get('local');
  const jobs = await scheduler.listJobs({ app: 'pair' });
  const running = jobs.filter((j) => j.status === 'running');
  t.true(running.length > 0);
  t.true(
    running.every((j) => j.spec.meta?.['svc.commit'] === good),
    'every job runs the old release',
  );
  const groups = running.flatMap((j) => j.spec.taskGroups.map((g) => g.name)).sort();
  t.deepEqual(groups, ['web', 'worker']);
  t.deepEqual(await served(plane, 'pair'), ['v1']);
});
