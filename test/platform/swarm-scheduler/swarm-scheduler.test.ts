// tier: full
/**
 * The swarm driver against a real single-node Docker Swarm (Debian's dockerd, test/helpers/swarm.ts):
 * a job's group runs as a Swarm service of its image by digest from the managed registry, its tasks
 * are registered with the platform's checks on their host-mode ports, replicas follow `scale`, a new
 * version rolls, app secrets reach tasks as Swarm secrets and never the service's environment, and a
 * reopened driver puts back a service changed by hand and removes one of a job it does not know.
 * Through the front door: a control plane on the swarm driver builds an app's Dockerfile, pushes it,
 * runs it on the swarm behind its wake gateway, and deploys a new version under load without a
 * failed request. A second dockerd, in its own network namespace, joins as a worker: replicas spread
 * over both nodes, a node pool pins tasks to one, and nodes pull images from the registry address
 * they are given.
 */
import fs, { mkdtempSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import test, { type ExecutionContext } from 'ava';
import type Docker from 'dockerode';
import { instanceStatus } from '../../../domain/registry/index.js';
import type { JobSpec } from '../../../domain/scheduler/index.js';
import type { ControlPlane } from '../../../wiring/control-plane.js';
import type { SvcConfig } from '../../../platform/config.js';
import { ManagedRegistry } from '../../../platform/containers/managed-registry.js';
import { LocalRegistry } from '../../../platform/local-registry/index.js';
import { silentLogger } from '../../../platform/logger.js';
import { SwarmScheduler, requireSwarmManager } from '../../../platform/swarm-scheduler/index.js';
import { containerOf } from '../../../platform/swarm-scheduler/service-spec.js';
import { EngineExec } from '../../../platform/swarm-scheduler/engine-exec.js';
import { NODE_BASE, assertBaseImages } from '../../helpers/containers.js';
import { removeRegistryImages } from '../../helpers/registry-images.js';
import { LINK, pushByDigest, startSwarm, startWorker, type TestSwarm } from '../../helpers/swarm.js';
import { waitForChange } from '../../helpers/wait-for.js';
import { failures, startLoad } from '../../helpers/http-load.js';
import { containerConfig } from '../../helpers/containers.js';
import { managedRegistryLayout } from '../../../platform/containers/managed-registry.js';
import { readReleaseManifest } from '../../../platform/release-builder/index.js';
import { getApp } from '../../../store/control/apps.js';
import { deployAndWait, git, initAppsRepo, startPlane, waitForApp } from '../../pipeline/pipeline-fixture.js';
import { hostRequest } from '../../routing/wake-harness.js';
import { request } from '../../helpers/servers.js';
import { attachSession } from '../../exec/exec-harness.js';
import { FUNCTION_PROGRAM, type ExecutionView } from '../../functions/functions-harness.js';
import { serviceGroup } from '../local-scheduler/fixtures.js';

const SERVER = `const http = require('node:http'); const fs = require('node:fs');
const secret = () => { try { return fs.readFileSync(process.env.SVC_SECRETS_DIR + '/API_KEY', 'utf8'); } catch { return 'none'; } };
const server = http.createServer((req, res) => {
  if (req.url === '/healthz') { res.writeHead(process.env.VERSION === 'broken' ? 500 : 200); res.end('health'); return; }
  res.end([process.env.VERSION, process.getuid(), secret()].join(' '));
});
server.listen(Number(process.env.PORT), '0.0.0.0');
process.on('SIGTERM', () => server.close(() => process.exit(0)));`;

interface Context {
  swarm: TestSwarm;
  registry: ManagedRegistry;
  image: string;
  dir: string;
}
let context: Context;

test.before(async () => {
  assertBaseImages();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-swarm-'));
  const swarm = await startSwarm(path.join(dir, 'engine'));
  const registry = await ManagedRegistry.open({ dataDir: path.join(dir, 'platform'), logger: silentLogger() });
  const image = pushByDigest(NODE_BASE, registry.host, 'swarm-demo', dir);
  context = { swarm, registry, image, dir };
});

test.after.always(async () => {
  if (!context) return;
  await context.swarm.stop();
  await context.registry.close();
  removeRegistryImages(context.registry.host);
  fs.rmSync(context.dir, { recursive: true, force: true });
});

function job(id: string, version: string): JobSpec {
  const group = serviceGroup({
    command: ['node', '-e', SERVER],
    workdir: '/',
    env: { VERSION: version },
    drainMs: 2000,
  });
  return { id, app: id, type: 'service', taskGroups: [{ ...group, task: { ...group.task, image: context.image } }] };
}

async function openDriver(services: LocalRegistry): Promise<SwarmScheduler> {
  return SwarmScheduler.open({
    engine: context.swarm.engine,
    dataDir: path.join(context.dir, 'platform'),
    appSecretsDir: path.join(context.dir, 'secrets'),
    registry: services,
    resyncMs: 1000,
    logger: silentLogger(),
  });
}

/** The passing instances of `service` once there are `count`, each answering `expected` at its address. */
async function passing(services: LocalRegistry, driver: SwarmScheduler, count: number, expected: string) {
  return waitForChange(
    [(listener) => services.watch(() => listener()), (listener) => driver.watch(() => listener())],
    async () => {
      const live = (await services.instances('demo-web')).filter((i) => instanceStatus(i) === 'passing');
      if (live.length !== count) return undefined;
      const answers = await Promise.all(
        live.map((i) =>
          fetch(`http://${i.address}:${i.port}/`)
            .then((r) => r.text())
            .catch(() => ''),
        ),
      );
      return answers.every((a) => a === expected) ? live : undefined;
    },
    { what: `${count} passing instances answering "${expected}"`, timeoutMs: 90_000 },
  );
}

/** The running tasks of `app` once there are `count`, each with a CPU and a memory sample. */
async function sampledTasks(driver: SwarmScheduler, app: string, count: number) {
  return waitForChange(
    [(listener) => driver.onSampled(listener)],
    async () => {
      const running = (await driver.listAllocations({ app })).filter((a) => a.status === 'running');
      return running.length === count && running.every((a) => a.cpu && a.memory.sampledAt) ? running : undefined;
    },
    { what: `CPU and memory samples of ${count} tasks of ${app}`, timeoutMs: 30_000 },
  );
}

/** The one service of job `job` (a roll hands over to the new version's service and removes the old). */
async function serviceSpec(engine: Docker, job: string): Promise<Docker.ServiceSpec & { id: string; index: number }> {
  const services = (await engine.listServices({ filters: { label: [`io.svc.job=${job}`] } })) as (Docker.Service & {
    Spec: Docker.ServiceSpec;
    Version: { Index: number };
  })[];
  if (services.length !== 1) throw new Error(`job ${job} has ${services.length} services, not one`);
  return { ...services[0]!.Spec, id: services[0]!.ID, index: services[0]!.Version.Index };
}

test.serial(
  'a job runs as a Swarm service of its image by digest, scales, rolls, keeps secrets out of its spec, and is put back after a hand edit',
  async (t) => {
    t.timeout(300_000);
    await t.notThrowsAsync(requireSwarmManager(context.swarm.engine, context.swarm.host));
    fs.mkdirSync(path.join(context.dir, 'secrets', 'demo'), { recursive: true });
    fs.writeFileSync(path.join(context.dir, 'secrets', 'demo', 'API_KEY'), 'swarm-secret-value');
    const services = new LocalRegistry();
    let driver = await openDriver(services);
    t.teardown(() => driver.close());

    const first = await driver.submitJob(job('demo', 'v1'));
    t.is(first.outcome, 'created');
    const [one] = await passing(services, driver, 1, 'v1 65532 swarm-secret-value');
    t.is(one!.address, context.swarm.address);
    t.is((await driver.submitJob(job('demo', 'v1'))).outcome, 'unchanged');

    const spec = await serviceSpec(context.swarm.engine, 'demo');
    const container = containerOf(spec)!;
    t.regex(container.Image!, /^127\.0\.0\.1:\d+\/swarm-demo@sha256:[0-9a-f]{64}$/, 'the image is named by digest');
    t.false(JSON.stringify(spec).includes('swarm-secret-value'), 'the secret is never in the service spec');
    t.deepEqual(
      container.Secrets!.map((s) => s.File?.Name),
      ['/svc/alloc/secrets/API_KEY'],
    );
    t.is(spec.UpdateConfig?.Order, 'start-first');
    t.is(spec.TaskTemplate?.Resources?.Limits?.MemoryBytes, 256 * 1024 * 1024);

    // Replicas follow scale: two tasks, each on its own host port.
    t.is(await driver.scale('demo', 'web', 2), 'updated');
    const two = await passing(services, driver, 2, 'v1 65532 swarm-secret-value');
    t.not(two[0]!.port, two[1]!.port);
    // Each running task's CPU and memory are sampled from its container (for the autoscaler).
    const sampled = await sampledTasks(driver, 'demo', 2);
    for (const allocation of sampled) {
      t.true(allocation.memory.currentRssBytes > 1024 * 1024, 'a node process uses more than 1 MiB');
      t.true(allocation.memory.currentRssBytes <= allocation.memory.limitBytes);
      t.true(allocation.cpu!.percent >= 0 && allocation.cpu!.percent < 400);
    }
    t.like(await driver.memoryUsage(sampled[0]!.id), { limitBytes: 256 * 1024 * 1024 });
    const allocations = await driver.listAllocations({ app: 'demo' });
    t.is(allocations.filter((a) => a.status === 'running').length, 2);
    t.true(
      allocations.every(
        (a) => a.taskGroup === 'web' && a.jobId === 'demo' && a.ports[0]!.hostIp === context.swarm.address,
      ),
    );

    // A new version rolls both tasks; the scaled count is kept.
    const rolled = await driver.submitJob(job('demo', 'v2'));
    t.deepEqual([rolled.outcome, rolled.rolled], ['updated', ['web']]);
    await passing(services, driver, 2, 'v2 65532 swarm-secret-value');

    // A version whose tasks never pass leaves the old one serving; submitting the old version again
    // (a deploy's rollback) makes it current and removes the broken one.
    const broken = await driver.submitJob(job('demo', 'broken'));
    t.deepEqual(broken.rolled, ['web']);
    await waitForChange(
      [(listener) => driver.watch(() => listener())],
      async () =>
        (await driver.listAllocations({ app: 'demo' })).filter(
          (a) => a.status === 'running' && a.jobVersion === broken.jobVersion,
        ).length === 2,
      { what: 'the broken version running', timeoutMs: 60_000 },
    );
    await passing(services, driver, 2, 'v2 65532 swarm-secret-value');
    t.is((await context.swarm.engine.listServices({ filters: { label: ['io.svc.job=demo'] } })).length, 2);
    const back2 = await driver.submitJob(job('demo', 'v2'));
    t.deepEqual(back2.rolled, ['web']);
    await waitForChange(
      [(listener) => driver.watch(() => listener())],
      async () => (await context.swarm.engine.listServices({ filters: { label: ['io.svc.job=demo'] } })).length === 1,
      { what: 'the broken version removed', timeoutMs: 60_000 },
    );
    await passing(services, driver, 2, 'v2 65532 swarm-secret-value');

    // A hand edit (an added variable) is put back when the driver opens again.
    const edited = await serviceSpec(context.swarm.engine, 'demo');
    const { id, index, ...editedSpec } = edited;
    const editedContainer = containerOf(editedSpec)!;
    editedContainer.Env = [...(editedContainer.Env ?? []), 'HAND=edited'];
    await context.swarm.engine.getService(id).update({ version: index, ...editedSpec });
    // A service of a job the driver never had is removed.
    await context.swarm.engine.createService({
      Name: 'svc-ghost-web',
      Labels: { 'io.svc.managed-by': 'svc', 'io.svc.job': 'ghost' },
      TaskTemplate: { ContainerSpec: { Image: context.image, Command: ['sleep', '600'] } },
      Mode: { Replicated: { Replicas: 0 } },
    });
    await driver.close();
    driver = await openDriver(services);
    const back = await serviceSpec(context.swarm.engine, 'demo');
    t.false((containerOf(back)!.Env ?? []).includes('HAND=edited'));
    t.is(back.Mode?.Replicated?.Replicas, 2, 'the scaled count survives the reopen');
    t.deepEqual(await context.swarm.engine.listServices({ filters: { name: ['svc-ghost-web'] } }), []);

    // Stopping the job removes its service and its secrets.
    t.is(await driver.stopJob('demo'), 'deleted');
    t.deepEqual(await context.swarm.engine.listServices({ filters: { label: ['io.svc.job=demo'] } }), []);
    t.deepEqual(await context.swarm.engine.listSecrets({ filters: { label: ['io.svc.job=demo'] } }), []);
    await waitForChange(
      [(listener) => driver.watch(() => listener())],
      async () => (await services.instances('demo-web')).length === 0,
      { what: 'no instance of the stopped job', timeoutMs: 60_000 },
    );
    t.pass();
  },
);

test.serial('jobs the swarm driver cannot run are refused with the reason', async (t) => {
  const services = new LocalRegistry();
  const driver = await openDriver(services);
  t.teardown(() => driver.close());
  const batch: JobSpec = { ...job('once', 'v1'), type: 'batch' };
  await t.throwsAsync(driver.submitJob(batch), { message: /runs batch jobs only when dispatched/ });
  const noImage = job('plain', 'v1');
  const { image: _image, ...task } = noImage.taskGroups[0]!.task;
  const hostJob: JobSpec = { ...noImage, taskGroups: [{ ...noImage.taskGroups[0]!, task }] };
  await t.throwsAsync(driver.submitJob(hostJob), { message: /has no image/ });
  await t.throwsAsync(driver.dispatch('never-submitted'), { message: /job "never-submitted" not found/ });
});

/**
 * A control plane on the test's swarm with `app` committed by `commit`, deployed; its services on the
 * swarm and its images in podman's storage are removed when the test ends.
 */
async function deployedOnSwarm(
  t: ExecutionContext,
  app: string,
  commit: (appsDir: string) => void,
): Promise<{ plane: ControlPlane; registryPort: number; appsDir: string; config: SvcConfig }> {
  const config = containerConfig(t, { SVC_SCHEDULER_DRIVER: 'swarm', SVC_SWARM_HOST: context.swarm.host });
  initAppsRepo(config);
  commit(config.appsDir);
  const plane = await startPlane(t, config);
  const { port } = JSON.parse(fs.readFileSync(managedRegistryLayout(config.dataDir).state, 'utf8')) as {
    port: number;
  };
  t.teardown(() => removeRegistryImages(`127.0.0.1:${port}`));
  t.teardown(async () => {
    for (const service of await context.swarm.engine.listServices({ filters: { label: [`io.svc.app=${app}`] } }))
      await context.swarm.engine.getService(service.ID).remove();
  });
  await waitForApp(plane, app);
  const deployed = await deployAndWait(plane, app, {}, 'deploy', 300_000);
  t.is(deployed.operation.status, 'succeeded', JSON.stringify(deployed.steps));
  return { plane, registryPort: port, appsDir: config.appsDir, config };
}

const HOST = 'shop.example.test';

/** The first line of `app`'s log containing `text`, awaited through `GET /api/v1/apps/<app>/logs?follow=true`. */
async function firstLogLine(url: string, app: string, text: string): Promise<Record<string, unknown>> {
  const abort = new AbortController();
  const response = await fetch(`${url}/api/v1/apps/${app}/logs?follow=true&grep=${encodeURIComponent(text)}`, {
    signal: abort.signal,
  });
  const decoder = new TextDecoder();
  let buffered = '';
  try {
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      buffered += decoder.decode(chunk, { stream: true });
      const data = /^data: (\{.*"line".*\})$/m.exec(buffered);
      if (data) return JSON.parse(data[1]!) as Record<string, unknown>;
    }
  } finally {
    abort.abort();
  }
  throw new Error(`the log stream of ${app} ended without "${text}"`);
}

function commitShop(appsDir: string, version: string, scaling = ''): void {
  const dir = path.join(appsDir, 'shop');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(
    path.join(dir, 'infraspec.yaml'),
    `name: shop\ndeploy: true\nendpoints:\n  - url: ${HOST}\nprocesses:\n  web:\n    port: 8080\n    health:\n      path: /healthz\n      interval: 200ms\n      timeout: 1s\n    resources:\n      memory: 128\n    drain:\n      timeout: 5s\n${scaling}volumes:\n  - name: data\n    mount: /data\n`,
  );
  fs.writeFileSync(
    path.join(dir, 'Dockerfile'),
    'FROM node:20-bookworm-slim\nWORKDIR /app\nCOPY server.mjs ./\nCMD ["node", "server.mjs"]\n',
  );
  // In its own network namespace the app listens on every address: the engine's proxy reaches it there.
  fs.writeFileSync(
    path.join(dir, 'server.mjs'),
    `import http from 'node:http';
import fs from 'node:fs';
const versions = process.env.SVC_VOLUME_DATA + '/versions';
fs.appendFileSync(versions, '${version};');
const server = http.createServer((req, res) =>
  res.end(req.url === '/healthz' ? 'ok' : req.url === '/versions' ? fs.readFileSync(versions) : '${version}'));
server.listen(Number(process.env.PORT), '0.0.0.0', () => console.log('listening ${version}'));
console.error('stderr of ${version}');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
`,
  );
  git(appsDir, 'add', '-A');
  git(appsDir, 'commit', '-q', '-m', `shop ${version}`);
}

test.serial(
  'a control plane on the swarm driver deploys a Dockerfile app with a volume, rolls it forward and back under load without a failed request while each version finds what the last one wrote, adopts it after a restart and retires it',
  async (t) => {
    t.timeout(400_000);
    const deployed = await deployedOnSwarm(t, 'shop', (dir) => commitShop(dir, 'v1'));
    const { registryPort: port, appsDir, config } = deployed;
    let plane = deployed.plane;
    t.is((await hostRequest(plane.url, { host: HOST })).text, 'v1');

    // The service runs the release manifest's image, by digest from the managed registry.
    const manifest = readReleaseManifest(getApp(plane.db, 'shop')!.release!.dir)!;
    const [service] = await context.swarm.engine.listServices({ filters: { label: ['io.svc.app=shop'] } });
    t.is(containerOf(service!.Spec)!.Image, manifest.image ?? undefined);
    t.regex(manifest.image!, new RegExp(`^127\\.0\\.0\\.1:${port}/shop@sha256:[0-9a-f]{64}$`));

    // svc logs reads the task's output through the platform's log store.
    const logged = await firstLogLine(plane.url, 'shop', 'listening v1');
    t.like(logged, { process: 'web', stream: 'stdout', line: 'listening v1' });
    t.like(await firstLogLine(plane.url, 'shop', 'stderr of v1'), { stream: 'stderr' });

    // svc exec runs in the task's own container, as its user, through the engine.
    const once = await request(`${plane.url}/api/apps/shop/exec`, {
      method: 'POST',
      json: {
        command: [
          'sh',
          '-c',
          'id -u; echo "port=$PORT"; touch "$SVC_TASK_DIR/x" && echo scratch; cat; echo oops >&2; exit 4',
        ],
        stdin: 'from-stdin',
      },
    });
    t.is(once.status, 200, once.text);
    t.like(once.body, { exitCode: 4, stdout: '65532\nport=8080\nscratch\nfrom-stdin', stderr: 'oops\n' });
    const created = await request(`${plane.url}/api/v1/exec-sessions`, {
      method: 'POST',
      json: { app: 'shop', cols: 100, rows: 30 },
    });
    t.is(created.status, 201, created.text);
    const client = await attachSession(plane.url, created.body.session.id);
    client.send('stty size; echo "who=$(id -u) $(xargs -0 < /proc/1/cmdline)"\r');
    await client.waitFor(/who=65532 node server\.mjs/);
    t.regex(client.output(), /30 100/);
    client.resize(120, 40);
    client.send('stty size\r');
    await client.waitFor(/40 120/);
    client.send('exit 3\r');
    t.like(await client.exited, { exitCode: 3, reason: 'exited' });

    const load = startLoad({
      url: plane.url,
      host: HOST,
      keepAliveClients: 2,
      newConnectionClients: 2,
      timeoutMs: 20_000,
    });
    t.teardown(() => load.stop());
    commitShop(appsDir, 'v2');
    const second = await deployAndWait(plane, 'shop', {}, 'deploy', 300_000);
    t.is(second.operation.status, 'succeeded', JSON.stringify(second.steps));
    await waitForChange(
      [(listener) => plane.reconcilers.appController.onReconciled(() => listener())],
      async () => (await hostRequest(plane.url, { host: HOST })).text === 'v2',
      { what: 'the gateway serving v2', timeoutMs: 60_000 },
    );
    // A rollback under the same load goes back to v1.
    const back = await deployAndWait(plane, 'shop', {}, 'rollback', 300_000);
    t.is(back.operation.status, 'succeeded', JSON.stringify(back.steps));
    await waitForChange(
      [(listener) => plane.reconcilers.appController.onReconciled(() => listener())],
      async () => (await hostRequest(plane.url, { host: HOST })).text === 'v1',
      { what: 'the gateway serving v1 again', timeoutMs: 60_000 },
    );
    const samples = await load.stop();
    // Each version found what the one before wrote in the app's volume.
    t.regex((await hostRequest(`${plane.url}/versions`, { host: HOST })).text, /^v1;(v1;)*v2;(v2;)*v1;$/);
    t.log(`${samples.length} requests through the gateway across the roll and the rollback`);
    t.true(samples.length > 50);
    t.deepEqual(failures(samples), {}, 'no request failed across the roll and the rollback');

    // A restarted platform adopts what runs: the same service and tasks, nothing restarted. The
    // rollback's hand-over ends first (the old version's service removed, its task gone).
    const scheduler = await plane.reconcilers.targets.get();
    await waitForChange(
      [(listener) => scheduler.watch(() => listener())],
      async () =>
        (await context.swarm.engine.listServices({ filters: { label: ['io.svc.app=shop'] } })).length === 1 &&
        (await scheduler.listAllocations({ app: 'shop' })).length === 1,
      { what: 'the rollback handed over to one service and one task', timeoutMs: 60_000 },
    );
    const servicesBefore = await context.swarm.engine.listServices({ filters: { label: ['io.svc.app=shop'] } });
    const tasksBefore = (await (await plane.reconcilers.targets.get()).listAllocations({ app: 'shop' })).map(
      (a) => a.id,
    );
    await plane.close({ restart: true });
    plane = await startPlane(t, config);
    await waitForChange(
      [(listener) => plane.reconcilers.appController.onReconciled(() => listener())],
      async () => (await hostRequest(plane.url, { host: HOST })).text === 'v1',
      { what: 'the restarted platform serving v1', timeoutMs: 60_000 },
    );
    const servicesAfter = await context.swarm.engine.listServices({ filters: { label: ['io.svc.app=shop'] } });
    t.deepEqual(
      servicesAfter.map((s) => [s.ID, s.Version?.Index]),
      servicesBefore.map((s) => [s.ID, s.Version?.Index]),
      'the service was adopted as it was',
    );
    t.deepEqual(
      (await (await plane.reconcilers.targets.get()).listAllocations({ app: 'shop' })).map((a) => a.id),
      tasksBefore,
    );

    // An app deleted from the apps repository is retired: its services and secrets leave the swarm.
    fs.rmSync(path.join(appsDir, 'shop'), { recursive: true });
    git(appsDir, 'add', '-A');
    git(appsDir, 'commit', '-q', '-m', 'remove shop');
    await waitForChange(
      [(listener) => plane.reconcilers.appController.onReconciled(() => listener())],
      async () =>
        (await context.swarm.engine.listServices({ filters: { label: ['io.svc.app=shop'] } })).length === 0 &&
        (await context.swarm.engine.listSecrets({ filters: { label: ['io.svc.job=shop-web'] } })).length === 0,
      { what: 'shop retired from the swarm', timeoutMs: 60_000 },
    );
    t.pass();
  },
);

test.serial(
  'on the swarm driver a process at zero replicas wakes on its first request through the gateway',
  async (t) => {
    t.timeout(400_000);
    const { plane } = await deployedOnSwarm(t, 'shop', (dir) =>
      commitShop(dir, 'lazy', '    scaling:\n      min: 0\n'),
    );
    const [asleep] = await context.swarm.engine.listServices({ filters: { label: ['io.svc.app=shop'] } });
    t.is(asleep!.Spec!.Mode!.Replicated!.Replicas, 0, 'deployed at zero replicas');

    const started = Date.now();
    const woken = await hostRequest(plane.url, { host: HOST });
    t.is(woken.text, 'lazy');
    t.log(`first request answered after ${Date.now() - started} ms (replicas 0 to 1)`);
    const [awake] = await context.swarm.engine.listServices({ filters: { label: ['io.svc.app=shop'] } });
    t.is(awake!.Spec!.Mode!.Replicated!.Replicas, 1);
  },
);

test.serial(
  'on the swarm driver functions and cron runs are one-task Swarm jobs: output, failure, timeout, ticks, trigger and pause',
  async (t) => {
    t.timeout(400_000);
    const { plane } = await deployedOnSwarm(t, 'fns', (appsDir) => {
      const dir = path.join(appsDir, 'fns');
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(
        path.join(dir, 'infraspec.yaml'),
        'name: fns\ndeploy: true\nenv:\n  GREETING: hello from swarm\nprocesses:\n  echo:\n      function:\n        timeout: 20s\n  slow:\n      function:\n        timeout: 2s\n  tick:\n      command: node fn.mjs\n      schedule: "*/2 * * * * *"\n',
      );
      fs.writeFileSync(path.join(dir, 'fn.mjs'), FUNCTION_PROGRAM);
      fs.writeFileSync(
        path.join(dir, 'Dockerfile'),
        'FROM node:20-bookworm-slim\nWORKDIR /app\nCOPY fn.mjs ./\nCMD ["node", "fn.mjs"]\n',
      );
      git(appsDir, 'add', '-A');
      git(appsDir, 'commit', '-q', '-m', 'fns');
    });
    const scheduler = await plane.reconcilers.targets.get();

    const run = async (process: string, body: unknown): Promise<ExecutionView> => {
      const started = await request(`${plane.url}/api/apps/fns/invoke`, { method: 'POST', json: { process, body } });
      t.is(started.status, 202, started.text);
      return waitForChange(
        [(listener) => scheduler.watch(() => listener())],
        async () => {
          const history = await request(
            `${plane.url}/api/apps/fns/function/history?execution=${started.body.executionId}`,
          );
          const record = (history.body.executions as ExecutionView[])[0];
          return record !== undefined && record.status !== 'running' ? record : undefined;
        },
        { what: `execution ${started.body.executionId} finished`, timeoutMs: 60_000 },
      );
    };
    const ok = await run('echo', { greeting: 'hi' });
    t.like(ok, { status: 'succeeded', exitCode: 0 });
    t.like(JSON.parse(ok.output), { body: '{"greeting":"hi"}', greeting: 'hello from swarm', job: 'fns-echo' });
    const failed = await run('echo', { fail: true });
    t.like(failed, { status: 'failed', exitCode: 1, errorOutput: 'boom: asked to fail\n' });
    const hung = await run('slow', { hang: true });
    t.is(hung.status, 'timed_out');
    // The cron process ticks every 2 s on its own, and a trigger runs it at once.
    const cronJob = (await scheduler.listJobs({ app: 'fns' })).find((j) => j.spec.type === 'periodic')!;
    t.truthy(cronJob.nextLaunchAt);
    const ticked = await waitForChange(
      [(listener) => scheduler.watch(() => listener())],
      async () => (await scheduler.listExecutions(cronJob.spec.id)).find((e) => e.status === 'succeeded'),
      { what: 'a scheduled cron run', timeoutMs: 60_000 },
    );
    t.like(JSON.parse(ticked.output), { greeting: 'hello from swarm', job: cronJob.spec.id });
    t.is((await request(`${plane.url}/api/apps/fns/cron/pause`, { method: 'POST', json: { by: 'ops' } })).status, 200);
    t.true((await scheduler.getJob(cronJob.spec.id))!.paused);
    t.is((await scheduler.getJob(cronJob.spec.id))!.nextLaunchAt, undefined);
    const triggered = await request(`${plane.url}/api/apps/fns/cron/trigger`, { method: 'POST', json: { by: 'ops' } });
    t.is(triggered.status, 202, triggered.text);
    const forced = await waitForChange(
      [(listener) => scheduler.watch(() => listener())],
      async () => {
        const found = await scheduler.getExecution((triggered.body.executions[0] as { id: string }).id);
        return found && found.status !== 'running' ? found : undefined;
      },
      { what: 'the triggered cron run', timeoutMs: 60_000 },
    );
    t.is(forced.status, 'succeeded', forced.errorOutput);

    // Each run's service is gone once its execution is recorded. The last removal changes no
    // allocation (its task had ended): the driver's sampling rounds re-check too.
    let left: string[] = [];
    await waitForChange(
      [
        (listener) => scheduler.watch(() => listener()),
        (listener) => (scheduler as SwarmScheduler).onSampled(listener),
      ],
      async () => {
        const services = await context.swarm.engine.listServices({ filters: { label: ['io.svc.app=fns'] } });
        left = services.map((service) => service.Spec?.Name ?? service.ID);
        return left.length === 0;
      },
      { what: 'no run left on the swarm', timeoutMs: 30_000 },
    ).catch((error: unknown) => {
      throw new Error(`${String(error)}: ${left.join(', ')} left`);
    });
    t.pass();
  },
);

test.serial('a node pool places tasks only on nodes labelled svc.node-pool with it', async (t) => {
  t.timeout(120_000);
  const { engine } = context.swarm;
  const [node] = await engine.listNodes();
  await engine.getNode(node!.ID).update({
    version: node!.Version!.Index,
    Role: node!.Spec!.Role,
    Availability: node!.Spec!.Availability,
    Labels: { 'svc.node-pool': 'edge' },
  });
  const services = new LocalRegistry();
  const driver = await openDriver(services);
  t.teardown(async () => {
    await driver.stopJob('edge-app').catch(() => undefined);
    await driver.stopJob('gpu-app').catch(() => undefined);
    await driver.close();
  });
  const placed = (id: string, pool: string): JobSpec => ({ ...job(id, 'v1'), nodePool: pool });
  await driver.submitJob(placed('edge-app', 'edge'));
  await driver.submitJob(placed('gpu-app', 'gpu'));
  const [edge] = await passing(services, driver, 1, 'v1 65532 none');
  t.is(edge!.app, 'edge-app');
  const gpu = await waitForChange(
    [(listener) => driver.watch(() => listener())],
    async () =>
      (await driver.listAllocations({ app: 'gpu-app' })).find((a) =>
        /no suitable node/.test(a.statusDescription ?? ''),
      ),
    { what: 'the gpu-app task waiting for a node', timeoutMs: 60_000 },
  );
  t.is(gpu.status, 'pending');
  const spec = (await engine.listServices({ filters: { label: ['io.svc.job=gpu-app'] } }))[0]!.Spec!;
  t.deepEqual(spec.TaskTemplate?.Placement?.Constraints, ['node.labels.svc.node-pool==gpu']);
});

const VOLUME_SERVER = `const http = require('node:http'); const fs = require('node:fs');
const dir = process.env.SVC_VOLUME_DATA;
let wrote = 'wrote';
try { fs.appendFileSync(dir + '/versions', process.env.VERSION + ';'); } catch (error) { wrote = error.code; }
const server = http.createServer((req, res) => {
  if (req.url === '/healthz') { res.writeHead(200); res.end('health'); return; }
  res.end([fs.readFileSync(dir + '/versions', 'utf8'), fs.statSync(dir).uid, wrote].join(' '));
});
server.listen(Number(process.env.PORT), '0.0.0.0');
process.on('SIGTERM', () => server.close(() => process.exit(0)));`;

test.serial(
  "an app's volume is a named volume its tasks' user owns, kept across versions, read-only where asked, and kept when the app stops",
  async (t) => {
    t.timeout(180_000);
    const { engine } = context.swarm;
    const services = new LocalRegistry();
    const driver = await openDriver(services);
    t.teardown(async () => {
      await driver.stopJob('vol-writer').catch(() => undefined);
      await driver.stopJob('vol-reader').catch(() => undefined);
      await driver.close();
    });
    const withVolume = (id: string, version: string, readOnly: boolean): JobSpec => {
      const base = job(id, version);
      const group = base.taskGroups[0]!;
      return {
        ...base,
        app: 'vol',
        taskGroups: [
          {
            ...group,
            task: {
              ...group.task,
              command: ['node', '-e', VOLUME_SERVER],
              volumes: [{ volume: 'data', destination: '/srv/data', readOnly }],
            },
          },
        ],
      };
    };
    await driver.submitJob(withVolume('vol-writer', 'v1', false));
    await passing(services, driver, 1, 'v1; 65532 wrote');
    const spec = await serviceSpec(engine, 'vol-writer');
    t.like(
      containerOf(spec)!.Mounts!.find((m) => m.Type === 'volume'),
      {
        Source: 'svc-vol-data',
        Target: '/srv/data',
      },
    );
    t.true((containerOf(spec)!.Env ?? []).includes('SVC_VOLUME_DATA=/srv/data'));
    // The new version's task starts beside the old one and finds what the old one wrote.
    await driver.submitJob(withVolume('vol-writer', 'v2', false));
    await passing(services, driver, 1, 'v1;v2; 65532 wrote');
    t.deepEqual(
      await engine.listServices({ filters: { label: ['io.svc.purpose=volume-owner'] } }),
      [],
      'the owner job is removed once it ran',
    );
    await driver.stopJob('vol-writer');
    await waitForChange(
      [(listener) => services.watch(() => listener())],
      async () => (await services.instances('demo-web')).length === 0,
      { what: 'no instance of the stopped writer', timeoutMs: 60_000 },
    );
    // A read-only mount of the same volume reads the data and cannot write.
    await driver.submitJob(withVolume('vol-reader', 'v3', true));
    await passing(services, driver, 1, 'v1;v2; 65532 EROFS');
    const volume = (await engine.getVolume('svc-vol-data').inspect()) as { Labels?: Record<string, string> };
    t.like(volume.Labels, { 'io.svc.app': 'vol', 'io.svc.volume': 'data' });
    await driver.stopJob('vol-reader');
    t.truthy(await engine.getVolume('svc-vol-data').inspect(), "a stopped app's volume keeps its data");
  },
);

test.serial(
  "on two nodes, replicas spread over both and are reached at their node's address, a node pool pins tasks to one, and nodes pull from the registry address they are given",
  async (t) => {
    t.timeout(240_000);
    const { engine } = context.swarm;
    if (!context.swarm.link.ok) {
      t.fail(`this host cannot give a second dockerd its own network: ${context.swarm.link.reason}`);
      return;
    }
    const worker = await startWorker(context.swarm, path.join(context.dir, 'worker'));
    t.teardown(() => worker.stop());
    // A stand-in for the proxy an operator puts in front of the managed registry, where every node reaches it.
    const [, registryPort] = context.registry.host.split(':');
    const proxy = net.createServer((socket) => {
      const upstream = net.connect(Number(registryPort), '127.0.0.1');
      socket.pipe(upstream).pipe(socket);
      socket.on('error', () => upstream.destroy());
      upstream.on('error', () => socket.destroy());
    });
    await new Promise<void>((resolve) => proxy.listen(0, LINK.host, resolve));
    t.teardown(() => proxy.close());
    const nodeRegistry = `${LINK.host}:${(proxy.address() as net.AddressInfo).port}`;
    const services = new LocalRegistry();
    const driver = await SwarmScheduler.open({
      engine,
      dataDir: path.join(context.dir, 'platform'),
      registry: services,
      resyncMs: 1000,
      nodeRegistry,
      logger: silentLogger(),
    });
    t.teardown(async () => {
      await driver.stopJob('spread').catch(() => undefined);
      await driver.stopJob('pinned').catch(() => undefined);
      await driver.close();
    });

    await driver.submitJob(job('spread', 'v1'));
    await driver.scale('spread', 'web', 2);
    const spread = await passing(services, driver, 2, 'v1 65532 none');
    t.deepEqual(spread.map((i) => i.address).sort(), [context.swarm.address, LINK.worker].sort());
    t.is(
      containerOf(await serviceSpec(engine, 'spread'))!.Image,
      context.image.replace(context.registry.host, nodeRegistry),
    );
    await driver.stopJob('spread');
    await waitForChange(
      [(listener) => services.watch(() => listener())],
      async () => (await services.instances('demo-web')).length === 0,
      { what: 'no instance of the spread job', timeoutMs: 60_000 },
    );

    const node = await engine.getNode(worker.nodeId).inspect();
    await engine.getNode(worker.nodeId).update({
      version: node.Version.Index,
      Role: node.Spec.Role,
      Availability: node.Spec.Availability,
      Labels: { 'svc.node-pool': 'far' },
    });
    await driver.submitJob({ ...job('pinned', 'v1'), nodePool: 'far' });
    await driver.scale('pinned', 'web', 2);
    const pinned = await passing(services, driver, 2, 'v1 65532 none');
    t.deepEqual(
      pinned.map((i) => i.address),
      [LINK.worker, LINK.worker],
    );

    // Exec reaches a task on the worker through the worker's engine, named by the node's svc.engine label.
    const [allocation] = (await driver.listAllocations({ app: 'pinned' })).filter((a) => a.status === 'running');
    t.is(allocation!.task.container?.node, worker.nodeId);
    const target = new EngineExec(engine).target(allocation!.task.pid!, allocation!.task.container)!;
    const limits = { stdin: '', timeoutMs: 10_000, maxOutputBytes: 4096 };
    await t.throwsAsync(new EngineExec(engine).run(target, ['id', '-u'], limits), {
      message:
        /Engine API the platform does not know: label the node with its address \(docker node update --label-add svc\.engine=/,
    });
    const labelled = await engine.getNode(worker.nodeId).inspect();
    await engine.getNode(worker.nodeId).update({
      version: labelled.Version.Index,
      Role: labelled.Spec.Role,
      Availability: labelled.Spec.Availability,
      Labels: { 'svc.node-pool': 'far', 'svc.engine': worker.host },
    });
    const exec = new EngineExec(engine);
    t.like(await exec.run(target, ['id', '-u'], limits), { exitCode: 0, stdout: '65532\n', timedOut: false });
    const started = Date.now();
    t.like(await exec.run(target, ['sleep', '30'], { ...limits, timeoutMs: 500 }), {
      timedOut: true,
      signal: 'SIGKILL',
    });
    t.true(Date.now() - started < 10_000, 'a command past its timeout on another node is killed there');
    const pty = exec.spawnPty(target, ['/bin/sh'], { cols: 80, rows: 24 });
    let output = '';
    const exited = new Promise<number>((resolve) => pty.onExit(({ exitCode }) => resolve(exitCode)));
    const answered = new Promise<void>((resolve) =>
      pty.onData((data) => {
        output += data;
        if (output.includes('hi-3')) resolve();
      }),
    );
    pty.write('echo hi-$((1+2))\n');
    await answered;
    t.notRegex(output, /^\d+\r?\n/, 'the process id the wrapper prints is not output');
    pty.kill();
    t.not(await exited, 0, 'ending the session ends its shell on the other node');
    // With the worker's engine known, its tasks' CPU and memory are sampled too (for the autoscaler).
    const sampled = await sampledTasks(driver, 'pinned', 2);
    t.true(sampled.every((a) => a.memory.currentRssBytes > 1024 * 1024));
  },
);
