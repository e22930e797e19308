// tier: full
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import type { ExecutionContext } from 'ava';
import type { ControlPlane } from '../../wiring/control-plane.js';
import { request } from '../helpers/servers.js';
import { failures, startLoad, type LoadSample } from '../helpers/http-load.js';
import { freePort, hostRequest } from '../routing/wake-harness.js';
import {
  appEvents,
  commitApp,
  deployAndWait,
  git,
  initAppsRepo,
  pipelineConfig,
  startPlane,
  waitForApp,
  type AppOptions,
} from './pipeline-fixture.js';

const HOST = 'zd.example.test';
const ENDPOINT = `endpoints:\n  - url: ${HOST}`;

/** A plane serving the app `zd` (v1 deployed) behind its gateway, under load from 2 + 2 clients. */
async function servedUnderLoad(
  t: ExecutionContext,
  options: AppOptions = {},
  env: Record<string, string> = {},
): Promise<{ plane: ControlPlane; appsDir: string; stopLoad: () => Promise<LoadSample[]> }> {
  const config = pipelineConfig(t, env);
  initAppsRepo(config);
  commitApp(config.appsDir, 'zd', { version: 'v1', extra: ENDPOINT, ...options });
  const plane = await startPlane(t, config);
  await waitForApp(plane, 'zd');
  const first = await deployAndWait(plane, 'zd');
  t.is(first.operation.status, 'succeeded', first.operation.lastError ?? '');
  // A request fails on a non-2xx answer or a reset; the wait is long because this machine is
  // shared (a slow answer is not a dropped one; bench/zero-downtime.ts measures with 5 s).
  const load = startLoad({
    url: plane.url,
    host: HOST,
    keepAliveClients: 2,
    newConnectionClients: 2,
    timeoutMs: 20_000,
  });
  t.teardown(() => load.stop());
  return { plane, appsDir: config.appsDir, stopLoad: () => load.stop() };
}

/** Versions the gateway serves right now (one request per allocation is not needed: 8 requests). */
async function gatewayServes(plane: ControlPlane): Promise<Set<string>> {
  const seen = new Set<string>();
  for (let i = 0; i < 8; i += 1) {
    const response = await hostRequest(plane.url, { host: HOST });
    seen.add(String(response.text).split(' ')[0]!);
  }
  return seen;
}

function assertNoFailures(t: ExecutionContext, samples: readonly LoadSample[]): void {
  t.true(samples.length >= 4, `only ${samples.length} requests were sent`);
  t.deepEqual(failures(samples), {}, `${samples.length} requests`);
}

/**
 * Critical health events raised by an allocation's start-up: a probe before the process listens
 * (refused) or the registration before any probe. A probe that times out on this shared machine
 * is a real failure and is not what these tests are about.
 */
async function startUpCriticalEvents(plane: ControlPlane): Promise<unknown[]> {
  await plane.eventServices.health?.idle();
  await plane.eventServices.events.flushed();
  return (await appEvents(plane, 'zd')).filter(
    (e) =>
      e.type === 'service.health.critical' &&
      /ECONNREFUSED|no check has|starting/.test(String((e as { body?: string }).body)),
  );
}

test('a deploy of a changed commit under load drops no request, starts the new allocation beside the old one and records no critical health event', async (t) => {
  const { plane, appsDir, stopLoad } = await servedUnderLoad(t);
  // A 30 s check interval: the deploy must not wait for it (it waited a whole 5 s interval before).
  commitApp(appsDir, 'zd', { version: 'v2', extra: ENDPOINT, healthInterval: '30s' });
  const started = performance.now();
  const v2 = await deployAndWait(plane, 'zd');
  const tookMs = performance.now() - started;
  t.is(v2.operation.status, 'succeeded', v2.operation.lastError ?? '');
  t.deepEqual([...(await gatewayServes(plane))], ['v2']);
  assertNoFailures(t, await stopLoad());
  t.deepEqual(await startUpCriticalEvents(plane), []);
  // The healthy step probes at once instead of waiting for the first interval; a wall-clock bound
  // tighter than the interval would measure this machine's load, not the behaviour.
  const healthy = v2.steps.steps.find((s: { step: string }) => s.step === 'healthy');
  t.truthy(healthy);
  t.true(tookMs < 30_000, `deploy took ${Math.round(tookMs)} ms, as long as a whole check interval`);
});

test('a committed spec change under load is reconciled onto a new allocation without dropping a request', async (t) => {
  const { plane, appsDir, stopLoad } = await servedUnderLoad(t);
  const spec = path.join(appsDir, 'zd', 'infraspec.yaml');
  fs.writeFileSync(spec, `${fs.readFileSync(spec, 'utf8')}env:\n  GREETING: changed\n`);
  git(appsDir, 'commit', '-qam', 'zd: GREETING changed');
  const scheduler = await plane.reconcilers.targets.get('local');
  const before = (await scheduler.listAllocations({ app: 'zd' })).map((a) => a.id);
  // Wait for the change to land: a new allocation runs and every old one was retired.
  for (;;) {
    await plane.reconcilers.whenIdle();
    const live = (await scheduler.listAllocations({ app: 'zd' })).filter((a) => a.desiredStatus === 'run');
    // Until the old allocation drained too: the load spans the switch and the drain.
    const old = await scheduler.getAllocation(before[0]!);
    if (
      live.length === 1 &&
      !before.includes(live[0]!.id) &&
      live[0]!.status === 'running' &&
      old?.status === 'complete'
    )
      break;
    await new Promise<void>((resolve) => {
      const stop = scheduler.watch(() => (stop(), resolve()));
    });
  }
  const view = (await request(`${plane.url}/api/apps/zd`)).body;
  t.is(view.processes[0].health, 'passing');
  assertNoFailures(t, await stopLoad());
  t.deepEqual(await startUpCriticalEvents(plane), []);
});

test('a rollback under load drops no request', async (t) => {
  const { plane, appsDir, stopLoad } = await servedUnderLoad(t);
  commitApp(appsDir, 'zd', { version: 'v2', extra: ENDPOINT });
  t.is((await deployAndWait(plane, 'zd')).operation.status, 'succeeded');
  const rollback = await deployAndWait(plane, 'zd', {}, 'rollback');
  t.is(rollback.operation.status, 'succeeded', rollback.operation.lastError ?? '');
  t.deepEqual([...(await gatewayServes(plane))], ['v1']);
  assertNoFailures(t, await stopLoad());
});

test('a canary deploy and its promotion under load drop no request', async (t) => {
  const canary = { count: 1, evaluateAfter: '300ms' };
  const { plane, appsDir, stopLoad } = await servedUnderLoad(t, { canary });
  commitApp(appsDir, 'zd', { version: 'v2', extra: ENDPOINT, canary });
  const v2 = await deployAndWait(plane, 'zd');
  t.is(v2.operation.status, 'succeeded', v2.operation.lastError ?? '');
  t.regex(v2.steps.steps.find((s: { step: string }) => s.step === 'healthy').message, /promoted automatically/);
  t.deepEqual([...(await gatewayServes(plane))], ['v2']);
  assertNoFailures(t, await stopLoad());
});

test('a new allocation that never passes is stopped, the deploy fails and rolls back, and the old one served every request throughout', async (t) => {
  const { plane, appsDir, stopLoad } = await servedUnderLoad(t, {}, { SVC_DEPLOY_HEALTHY_TIMEOUT: '5s' });
  commitApp(appsDir, 'zd', { version: 'v2', extra: ENDPOINT, healthStatus: 500 });
  const v2 = await deployAndWait(plane, 'zd');
  t.is(v2.operation.status, 'failed');
  t.is(v2.steps.deployment.status, 'rolled_back');
  const rollback = (await request(`${plane.url}/api/v1/deployments?app=zd&kind=rollback`)).body.deployments[0];
  t.is((await plane.deploys.worker.waitFor(rollback.operationId, 20_000)).status, 'succeeded');
  await plane.reconcilers.whenIdle();
  t.deepEqual([...(await gatewayServes(plane))], ['v1']);
  const scheduler = await plane.reconcilers.targets.get('local');
  const live = (await scheduler.listAllocations({ app: 'zd' })).filter((a) => a.desiredStatus === 'run');
  t.is(live.length, 1, 'only the old allocation runs');
  assertNoFailures(t, await stopLoad());
  const types = (await appEvents(plane, 'zd')).map((e) => e.type);
  t.true(types.includes('deploy.failed'));
  t.true(types.includes('deploy.auto_rollback'));
});

test('a hostPort process cannot overlap: validation warns of the gap, and a deploy stops the old process before the new one starts', async (t) => {
  const hostPort = await freePort();
  const config = pipelineConfig(t);
  initAppsRepo(config);
  const extra = `    hostPort: ${hostPort}\n${ENDPOINT}`;
  commitApp(config.appsDir, 'hp', { version: 'v1', extra });
  const plane = await startPlane(t, config);
  await waitForApp(plane, 'hp');
  const spec = fs.readFileSync(path.join(config.appsDir, 'hp', 'infraspec.yaml'), 'utf8');
  const validation = (await request(`${plane.url}/api/v1/validate/infraspec`, { method: 'POST', json: { spec } })).body;
  t.true(validation.valid);
  t.deepEqual(
    validation.findings.map((f: { rule: string; severity: string }) => `${f.rule} ${f.severity}`),
    ['hostPort.noOverlap warning'],
  );
  t.is((await deployAndWait(plane, 'hp')).operation.status, 'succeeded');
  commitApp(config.appsDir, 'hp', { version: 'v2', extra });
  t.is((await deployAndWait(plane, 'hp')).operation.status, 'succeeded');
  const scheduler = await plane.reconcilers.targets.get('local');
  const all = await scheduler.listAllocations({ app: 'hp', includeTerminal: true });
  const [old, fresh] = [...all].sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  t.is(old!.ports[0]!.value, hostPort);
  t.is(fresh!.ports[0]!.value, hostPort);
  // The old task was killed before the new one was even received (no overlap on the port).
  const killed = old!.task.events.find((e) => e.type === 'Killed')!;
  const received = fresh!.task.events.find((e) => e.type === 'Received')!;
  t.true(Date.parse(killed.at) <= Date.parse(received.at));
});
