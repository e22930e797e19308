// tier: full
/**
 * The lifecycle of container apps on the local driver (ADR 0219), against the real podman and
 * registry: a terminal and one-shot commands run in the app's container as its user; a function
 * and a cron run print only their own output; a process scaled to zero wakes on a request; the
 * containers outlive an API restart and are adopted; a retired app leaves no container nor image.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import { getApp, listApps } from '../../../store/control/apps.js';
import { readReleaseManifest } from '../../../platform/release-builder/index.js';
import type { ControlPlane } from '../../../wiring/control-plane.js';
import type { LocalScheduler } from '../../../platform/local-scheduler/index.js';
import { request } from '../../helpers/servers.js';
import {
  CONTAINER_DEPLOY_MS,
  CONTAINER_DOCKERFILE as DOCKERFILE,
  containerConfig,
  containerState,
  containersOf,
  removeRegistryImages,
} from '../../helpers/containers.js';
import { waitForChange } from '../../helpers/wait-for.js';
import { attachSession } from '../../exec/exec-harness.js';
import { freePort, hostRequest } from '../../routing/wake-harness.js';
import { deployAndWait, git, initAppsRepo, startPlane, waitForApp } from '../../pipeline/pipeline-fixture.js';

const SERVER = `import http from 'node:http';
const server = http.createServer((req, res) => {
  if (req.url === '/healthz') { res.writeHead(200); return res.end('ok'); }
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ pid: process.pid, uid: process.getuid(), host: req.headers.host }));
});
server.listen(Number(process.env.PORT));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
`;
const HANDLER = `console.log(JSON.stringify({ body: process.env.SVC_REQUEST_BODY, uid: process.getuid() }));\n`;

function commit(appsDir: string, app: string, spec: string, files: Record<string, string>): void {
  const dir = path.join(appsDir, app);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'infraspec.yaml'), spec);
  fs.writeFileSync(path.join(dir, 'Dockerfile'), DOCKERFILE);
  for (const [file, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, file), text);
  git(appsDir, 'add', '-A');
  git(appsDir, 'commit', '-q', '-m', app);
}

async function runningAllocation(plane: ControlPlane, app: string) {
  const scheduler = await plane.reconcilers.targets.get('local');
  return (await scheduler.listAllocations({ app })).find((a) => a.status === 'running' && a.desiredStatus === 'run');
}

function registryOf(plane: ControlPlane, app: string): string {
  return readReleaseManifest(getApp(plane.db, app)!.release!.dir)!.image!.split('/')[0]!;
}

test('a container app gets a terminal and commands in its own container as its user', async (t) => {
  const config = containerConfig(t);
  initAppsRepo(config);
  commit(
    config.appsDir,
    'shell',
    'name: shell\ndeploy: true\nprocesses:\n  web:\n    port: 8080\n    health:\n      path: /healthz\n      interval: 200ms\n      timeout: 1s\n',
    { 'server.mjs': SERVER },
  );
  const plane = await startPlane(t, config);
  await waitForApp(plane, 'shell');
  t.is((await deployAndWait(plane, 'shell', {}, 'deploy', CONTAINER_DEPLOY_MS)).operation.status, 'succeeded');
  t.teardown(() => removeRegistryImages(registryOf(plane, 'shell')));
  const uid = execFileSync('id', ['-u', 'svc-app-shell'], { encoding: 'utf8' }).trim();

  const created = await request(`${plane.url}/api/v1/exec-sessions`, {
    method: 'POST',
    json: { app: 'shell', cols: 90, rows: 20 },
  });
  t.is(created.status, 201, created.text);
  const client = await attachSession(plane.url, created.body.session.id);
  const control = path.join(config.dataDir, 'control.db');
  client.send(
    `stty size; id -u; cat /etc/debian_version; test -e ${control} || echo "no-control-db"; echo done-$((6*7))\r`,
  );
  await client.waitFor(/done-42/);
  t.regex(client.output(), /20 90/);
  t.regex(client.output(), new RegExp(`^${uid}\\r?$`, 'm'));
  t.regex(client.output(), /^12\.\d+\r?$/m);
  t.true(fs.existsSync(control));
  t.regex(client.output(), /\r\nno-control-db\r\n/);
  // The engine applies a resize to the container's terminal a moment later: asked until it shows.
  client.resize(120, 40);
  for (let round = 0; round < 100 && !/40 120/.test(client.output()); round += 1) {
    client.send(`stty size; echo round-${round}-end\r`);
    await client.waitFor(new RegExp(`\r\nround-${round}-end`));
  }
  t.regex(client.output(), /40 120/);
  client.send('exit 4\r');
  t.is((await client.exited).exitCode, 4);

  const once = await request(`${plane.url}/api/apps/shell/exec`, {
    method: 'POST',
    json: { command: ['sh', '-c', 'id -u; ls /app'] },
  });
  t.is(once.status, 200, once.text);
  t.is(once.body.exitCode, 0);
  t.deepEqual(once.body.stdout.trim().split('\n'), [uid, 'Dockerfile', 'infraspec.yaml', 'server.mjs']);
});

test('a function and a cron process run in the image and print only their own output', async (t) => {
  const config = containerConfig(t);
  initAppsRepo(config);
  commit(
    config.appsDir,
    'jobs',
    'name: jobs\ndeploy: true\nprocesses:\n  fn:\n    command: node handler.mjs\n    function:\n      timeout: 30s\n      memory: 96\n  nightly:\n    schedule: "0 3 * * *"\n    command: node handler.mjs\n',
    { 'server.mjs': SERVER, 'handler.mjs': HANDLER },
  );
  const plane = await startPlane(t, config);
  await waitForApp(plane, 'jobs');
  t.is((await deployAndWait(plane, 'jobs', {}, 'deploy', CONTAINER_DEPLOY_MS)).operation.status, 'succeeded');
  t.teardown(() => removeRegistryImages(registryOf(plane, 'jobs')));
  const scheduler = await plane.reconcilers.targets.get('local');
  const started = await request(`${plane.url}/api/apps/jobs/invoke`, {
    method: 'POST',
    json: { process: 'fn', body: { width: 64 } },
  });
  t.is(started.status, 202, started.text);
  const record = await waitForChange(
    [(listener) => scheduler.watch(() => listener())],
    async () => {
      const history = await request(
        `${plane.url}/api/apps/jobs/function/history?execution=${started.body.executionId}`,
      );
      const found = history.body.executions[0];
      return found && found.status !== 'running' ? found : undefined;
    },
    { what: 'the function run' },
  );
  t.is(record.status, 'succeeded', JSON.stringify(record));
  // The app's user exists once a task of it ran.
  const uid = Number(execFileSync('id', ['-u', 'svc-app-jobs'], { encoding: 'utf8' }).trim());
  t.deepEqual(JSON.parse(record.output), { body: '{"width":64}', uid });

  const triggered = await request(`${plane.url}/api/apps/jobs/cron/trigger`, { method: 'POST', json: { by: 'ops' } });
  t.is(triggered.status, 202, triggered.text);
  const cronExecution = triggered.body.executions[0] as { id: string };
  const cronRun = await waitForChange(
    [(listener) => scheduler.watch(() => listener())],
    async () => {
      const found = await scheduler.getExecution(cronExecution.id);
      return found && found.status !== 'running' ? found : undefined;
    },
    { what: 'the cron run' },
  );
  t.is(cronRun.status, 'succeeded', cronRun.errorOutput);
  t.is(JSON.parse(cronRun.output).uid, uid);
  const left = containersOf('jobs');
  t.deepEqual(left, [], `containers left: ${left.join(', ')}`);
});

test('a container process scaled to zero wakes on a request; containers survive an API restart and are adopted; retirement removes them and their images', async (t) => {
  const port = await freePort();
  const config = containerConfig(t, { SVC_APP_REMOVAL_GRACE: '1ms' });
  initAppsRepo(config);
  commit(
    config.appsDir,
    'sleepy',
    `name: sleepy\ndeploy: true\nprocesses:\n  web:\n    port: ${port}\n    health:\n      path: /healthz\n      interval: 50ms\n      timeout: 1s\n    scaling:\n      min: 0\n    resources:\n      memory: 96\nendpoints:\n  - url: sleepy.example.test\n`,
    { 'server.mjs': SERVER },
  );
  let plane = await startPlane(t, config);
  await waitForApp(plane, 'sleepy');
  t.is((await deployAndWait(plane, 'sleepy', {}, 'deploy', CONTAINER_DEPLOY_MS)).operation.status, 'succeeded');
  const registry = registryOf(plane, 'sleepy');
  t.teardown(() => removeRegistryImages(registry));
  t.is(await runningAllocation(plane, 'sleepy'), undefined, 'scaled to zero after the deploy');
  // The next container is created at deploy, not started (ADR 0228): the wake only starts it.
  await ((await plane.reconcilers.targets.get('local')) as LocalScheduler).preparedSettled();
  const prepared = containersOf('sleepy', 'created');
  t.is(prepared.length, 1, 'one container prepared for the wake');

  const woken = await hostRequest(`${plane.url}/hello`, { host: 'sleepy.example.test' });
  t.is(woken.status, 200, woken.text);
  t.is(woken.headers['x-svc-wake-action'], 'scaled');
  const first = woken.json();
  t.not(first.uid, 0);
  const alloc = (await runningAllocation(plane, 'sleepy'))!;
  t.deepEqual(containersOf('sleepy'), [`svc-${alloc.id}`]);
  t.deepEqual(prepared, [`svc-${alloc.id}`], 'the wake started the prepared container');
  t.true(alloc.task.events.some((e) => e.type === 'Started' && e.message.includes('the prepared container')));
  // The app's pid inside its container is 1 whether or not it restarted: the host's view tells.
  const started = containerState(`svc-${alloc.id}`);

  // An API restart (the host agent's): the container keeps running and the next API adopts it.
  await plane.close({ restart: true });
  plane = await startPlane(t, config);
  const adopted = await waitForChange(
    [(listener) => plane.reconcilers.appController.onReconciled(() => listener())],
    async () => {
      const a = await runningAllocation(plane, 'sleepy');
      return a?.task.events.some((e) => e.type === 'Adopted') ? a : undefined;
    },
    { what: 'the adopted allocation' },
  );
  t.is(adopted.id, alloc.id);
  const again = await hostRequest(`${plane.url}/hello`, { host: 'sleepy.example.test' });
  t.is(again.status, 200, again.text);
  t.is(again.json().pid, first.pid);
  t.is(containerState(`svc-${alloc.id}`), started, 'the same container process serves: the app was not restarted');

  // Deleted from the apps repository, then retired: no container, no image, no registry tag.
  fs.rmSync(path.join(config.appsDir, 'sleepy'), { recursive: true });
  git(config.appsDir, 'add', '-A');
  git(config.appsDir, 'commit', '-q', '-m', 'remove sleepy');
  await waitForChange(
    [
      (listener) => plane.reconcilers.specController.onReconciled(() => listener()),
      (listener) => plane.reconcilers.appController.onReconciled(() => listener()),
    ],
    () => (listApps(plane.db).some((a) => a.name === 'sleepy') ? undefined : true),
    { what: 'sleepy deleted' },
  );
  await waitForChange(
    [(listener) => plane.reconcilers.appController.onReconciled(() => listener())],
    async () =>
      (await runningAllocation(plane, 'sleepy')) === undefined && containersOf('sleepy').length === 0
        ? true
        : undefined,
    { what: 'sleepy stopped' },
  );
  await plane.retirement!.sweep();
  const swept = await plane.retirement!.sweep();
  t.deepEqual(swept.removed, ['sleepy']);
  t.deepEqual(containersOf('sleepy'), []);
  const images = execFileSync('podman', ['images', '--filter', `reference=${registry}/sleepy`, '--quiet'], {
    encoding: 'utf8',
  }).trim();
  t.is(images, '');
  const tags = await fetch(`http://${registry}/v2/sleepy/tags/list`);
  const listed = tags.ok ? (((await tags.json()) as { tags: string[] | null }).tags ?? []) : [];
  t.deepEqual(listed, []);
});

test('on the bridge network a container’s ports are published on loopback only', async (t) => {
  const external = Object.values(os.networkInterfaces())
    .flat()
    .find(
      (address) => address && address.family === 'IPv4' && !address.internal && !address.address.startsWith('10.88.'),
    );
  t.truthy(external, 'the host has a non-loopback IPv4 address to try');
  const config = containerConfig(t, { SVC_CONTAINER_NETWORK: 'bridge' });
  initAppsRepo(config);
  commit(
    config.appsDir,
    'walled',
    'name: walled\ndeploy: true\nprocesses:\n  web:\n    port: 8080\n    health:\n      path: /healthz\n      interval: 200ms\n      timeout: 1s\n',
    { 'server.mjs': SERVER },
  );
  const plane = await startPlane(t, config);
  await waitForApp(plane, 'walled');
  const deployed = await deployAndWait(plane, 'walled', {}, 'deploy', CONTAINER_DEPLOY_MS);
  t.is(deployed.operation.status, 'succeeded', JSON.stringify(deployed.steps));
  t.teardown(() => removeRegistryImages(registryOf(plane, 'walled')));
  const alloc = (await runningAllocation(plane, 'walled'))!;
  const port = alloc.ports[0]!.value;
  const inspected = execFileSync('podman', ['inspect', '--format', '{{.HostConfig.NetworkMode}}', `svc-${alloc.id}`], {
    encoding: 'utf8',
  }).trim();
  t.is(inspected, 'bridge');
  t.is((await fetch(`http://127.0.0.1:${port}/healthz`)).status, 200);
  const outside = await fetch(`http://${external!.address}:${port}/healthz`, {
    signal: AbortSignal.timeout(3000),
  }).then(
    (r) => r.status,
    (error: Error) => (error.cause as { code?: string } | undefined)?.code ?? error.name,
  );
  t.is(outside, 'ECONNREFUSED');
});
