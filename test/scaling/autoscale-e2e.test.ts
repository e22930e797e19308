// tier: full
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import type { ControlPlane } from '../../wiring/control-plane.js';
import { instanceStatus } from '../../domain/registry/index.js';
import { startPlaneWithApps } from '../helpers/plane-with-apps.js';
import { waitForReconciled } from '../helpers/wait-for.js';
import { getApp } from '../../store/control/apps.js';
import { request } from '../helpers/servers.js';
import { startLoad, type Load } from '../helpers/http-load.js';
import { runSvc } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp-dir.js';
import { hostRequest, waitForState } from '../routing/wake-harness.js';
import { AUTOSCALE_APP_SERVER, autoscaledSpec } from './autoscale-app.js';

// Short intervals so the behaviour shows in seconds: evaluated every 200 ms, a 3 s stabilization window.
const INTERVAL_MS = 200;
const WINDOW_MS = 3000;

const KAFKA_SPEC = `name: lagged
deploy: true
processes:
  consumer:
    command: node server.mjs
    scaling:
      min: 1
      max: 4
      auto:
        metric: kafka_lag
        target: 100
        topic: orders
`;

/** Passing registry instances of `<app>-web`. */
async function passing(plane: ControlPlane, app: string): Promise<number> {
  return (await plane.reconcilers.registry.instances(`${app}-web`)).filter((i) => instanceStatus(i) === 'passing')
    .length;
}

/** The count the scheduler runs for `<app>/web`; undefined before the job exists. */
async function jobCount(plane: ControlPlane, app: string): Promise<number | undefined> {
  const scheduler = await plane.reconcilers.targets.get();
  const job = (await scheduler.listJobs({ app })).find((j) => j.status === 'running');
  return job?.spec.taskGroups.find((g) => g.name === 'web')?.count;
}

/** The count the scheduler runs for `<app>/web` (0 when absent). */
async function desired(plane: ControlPlane, app: string): Promise<number> {
  return (await jobCount(plane, app)) ?? 0;
}

async function scaleEvents(plane: ControlPlane, app: string): Promise<any[]> {
  const out = [];
  for (const type of ['service.scaled_out', 'service.scaled_in'])
    out.push(...(await request(`${plane.url}/api/events?app=${app}&type=${type}&limit=100`)).body.events);
  return out.sort((a, b) => a.occurredAt.localeCompare(b.occurredAt) || a.metadata.to - b.metadata.to);
}

/** Loads still running: stopped in teardown when an assertion fails half-way. */
const running = new Set<Load>();

function load(plane: ControlPlane, hostname: string, path: string, clients: number): Load {
  const started = startLoad({
    url: `${plane.url}${path}`,
    host: hostname,
    keepAliveClients: clients,
    newConnectionClients: 0,
    timeoutMs: 30_000,
    keepBodies: true,
  });
  running.add(started);
  return {
    samples: started.samples,
    stop: () => {
      running.delete(started);
      return started.stop();
    },
  };
}

test('the autoscaler scales a process out under load, in after the stabilization window, to zero through the wake gateway when idle, and on CPU; each decision is an event; an unconfigured metric is refused', async (t) => {
  const { plane, config } = await startPlaneWithApps(t, {
    server: AUTOSCALE_APP_SERVER,
    apps: [
      {
        name: 'surge',
        spec: autoscaledSpec({
          name: 'surge',
          hostname: 'surge.example.test',
          metric: 'requests_in_flight',
          target: 2,
          min: 0,
          max: 3,
        }),
      },
      {
        name: 'burner',
        // A low target: on a loaded 2-core machine a spinning allocation may get only a tenth of a core.
        spec: autoscaledSpec({
          name: 'burner',
          hostname: 'burner.example.test',
          metric: 'cpu',
          target: 5,
          min: 1,
          max: 2,
        }),
      },
      {
        // Two fixed allocations, for the balancer.
        name: 'pair',
        spec: autoscaledSpec({
          name: 'pair',
          hostname: 'pair.example.test',
          metric: 'cpu',
          target: 1,
          min: 2,
          max: 2,
          fixed: true,
        }),
      },
    ],
    env: { SVC_AUTOSCALE_INTERVAL: `${INTERVAL_MS}ms`, SVC_AUTOSCALE_WINDOW: `${WINDOW_MS / 1000}s` },
  });
  // Registered after the plane's, so it runs first: no client outlives the test.
  t.teardown(() => Promise.all([...running].map((l) => l.stop())));

  // --- Refusal: kafka_lag has no source on a plane without SVC_KAFKA_EXPORTER_URL. The app is not
  // valid, with the finding at file:line:col.
  fs.mkdirSync(path.join(config.appsDir, 'lagged'));
  fs.writeFileSync(path.join(config.appsDir, 'lagged', 'infraspec.yaml'), KAFKA_SPEC);
  await waitForReconciled([plane.reconcilers.specController], () => getApp(plane.db, 'lagged') !== undefined, {
    what: 'lagged discovered',
  });
  const lagged = (await request(`${plane.url}/api/apps/lagged`)).body;
  const refusal = lagged.findings.find((f: any) => f.rule === 'autoscale.metricSource');
  t.truthy(refusal, JSON.stringify(lagged.findings));
  t.like(refusal, { path: 'processes.consumer.scaling.auto.metric', line: 10, column: 17, severity: 'error' });
  t.regex(refusal.message, /kafka_lag.*no Kafka consumer lag/);
  t.is(lagged.conditions.find((c: any) => c.type === 'Valid')?.status, 'False');
  // The plane's validation endpoint says the same; svc validate, offline, does not know the plane's
  // exporter and does not judge it.
  const posted = await request(`${plane.url}/api/v1/validate/infraspec`, {
    method: 'POST',
    json: { spec: KAFKA_SPEC },
  });
  t.false(posted.body.valid);
  t.true(posted.body.findings.some((f: any) => f.rule === 'autoscale.metricSource' && f.line === 10));
  const file = path.join(tempDir(t), 'infraspec.yaml');
  fs.writeFileSync(file, KAFKA_SPEC);
  const validated = await runSvc(['validate', file]);
  t.is(validated.code, 0, validated.stdout + validated.stderr);
  t.false(validated.stdout.includes('autoscale.metricSource'), validated.stdout);

  // --- Scale to zero at first: min 0, deployed with no allocation.
  await waitForState(plane, async () => (await jobCount(plane, 'surge')) === 0, 'surge deployed at 0');

  // --- Out: 8 clients keep a 150 ms request each in flight (8 in flight, target 2 per allocation):
  // the first request wakes it (0 -> 1), the autoscaler takes it to max (3).
  const heavy = load(plane, 'surge.example.test', '/slow?ms=150', 8);
  await waitForState(plane, async () => (await passing(plane, 'surge')) === 3, 'surge at 3 passing', 30_000);
  t.is(await desired(plane, 'surge'), 3);
  const outChange = plane.autoscaler.lastChange('surge', 'web')!;
  t.like(outChange, { source: 'autoscaler', to: 3, metric: 'requests_in_flight', target: 2 });
  t.regex(outChange.reason, /^scale out: requests_in_flight [\d.]+ per allocation over \d+ \(target 2\)$/);
  // The gateway balances across the three allocations: a second of load reaches every one.
  const balancedFrom = performance.now();
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const pids = new Set(heavy.samples.filter((s) => s.startMs >= balancedFrom && s.ok).map((s) => s.body));
  t.is(pids.size, 3, `pids seen after the scale-out: ${[...pids].join(', ')}`);

  // --- The window: a dip shorter than the window (one client for 1 s) does not scale in.
  const heavySamples = await heavy.stop();
  const dip = load(plane, 'surge.example.test', '/slow?ms=150', 1);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  await dip.stop();
  const heavyAgain = load(plane, 'surge.example.test', '/slow?ms=150', 8);
  await new Promise((resolve) => setTimeout(resolve, 500));
  const heavyEndMs = Date.now();
  const heavyAgainSamples = await heavyAgain.stop();
  t.is(await desired(plane, 'surge'), 3, 'a dip shorter than the window kept the count');

  // --- In: one client (about 1 in flight) asks for 1 allocation; it applies one window after the load fell.
  const light = load(plane, 'surge.example.test', '/slow?ms=150', 1);
  await waitForState(plane, async () => (await desired(plane, 'surge')) === 1, 'surge scaled in to 1', 30_000);
  const inChange = plane.autoscaler.lastChange('surge', 'web')!;
  t.like(inChange, { source: 'autoscaler', to: 1 });
  t.regex(inChange.reason, /^scale in: .*stabilization window \(3 s\) was 1$/);
  // The first scale-in (to the highest count the window asked for: the load fell over a pass or two)
  // came no sooner than one window after the heavy load ended.
  const firstInAt = Math.min(
    ...(await scaleEvents(plane, 'surge'))
      .filter((e) => e.type === 'service.scaled_in' && e.metadata.from === 3)
      .map((e) => Date.parse(e.occurredAt)),
  );
  t.true(
    firstInAt - heavyEndMs >= WINDOW_MS - INTERVAL_MS,
    `scaled in ${firstInAt - heavyEndMs} ms after the heavy load ended; the window is ${WINDOW_MS} ms`,
  );
  const lightSamples = await light.stop();
  // The load ended when its last request did (its answer read), not when stop() resolved: under a
  // loaded machine that can come later than one sampling interval.
  const loadEndMs = Date.now() - (performance.now() - Math.max(...lightSamples.map((s) => s.endMs)));

  // --- To zero: no request for a window.
  await waitForState(plane, async () => (await desired(plane, 'surge')) === 0, 'surge scaled to zero', 30_000);
  const zeroChange = plane.autoscaler.lastChange('surge', 'web')!;
  t.like(zeroChange, { source: 'autoscaler', from: 1, to: 0 });
  t.regex(zeroChange.reason, /^scale to zero: no request through the wake gateway for the stabilization window/);
  t.true(
    Date.parse(zeroChange.at) - loadEndMs >= WINDOW_MS - INTERVAL_MS,
    `scaled to zero ${Date.parse(zeroChange.at) - loadEndMs} ms after the last request; the window is ${WINDOW_MS} ms`,
  );

  // Every request of every phase succeeded: scaling out, in and the dip dropped none.
  const all = [...heavySamples, ...heavyAgainSamples, ...lightSamples];
  t.deepEqual(
    all.filter((s) => !s.ok).map((s) => s.outcome),
    [],
  );

  // --- Events: each decision with its reason, and no flapping: out, then in, never out again in between.
  const events = await scaleEvents(plane, 'surge');
  const steps = events.map((e) => `${e.metadata.from}->${e.metadata.to}`);
  t.log(
    events.map((e) => `${e.occurredAt} ${e.metadata.source} ${e.metadata.from}->${e.metadata.to} ${e.body}`).join('\n'),
  );
  // From zero: the wake (or the autoscaler, when its pass saw the first request waiting).
  t.regex(steps[0]!, /^0->[1-3]$/, steps.join(', '));
  t.true(['wake', 'autoscaler'].includes(events[0].metadata.source));
  t.is(steps.at(-1), '1->0', steps.join(', '));
  const firstIn = events.findIndex((e) => e.type === 'service.scaled_in');
  t.true(events.slice(0, firstIn).every((e) => e.type === 'service.scaled_out'));
  t.true(
    events.slice(firstIn).every((e) => e.type === 'service.scaled_in'),
    steps.join(', '),
  );
  for (const event of events.filter((e) => e.metadata.source !== 'wake')) {
    t.is(event.metadata.source, 'autoscaler');
    t.is(event.body, event.metadata.reason);
    t.is(event.metadata.metric, 'requests_in_flight');
  }

  // --- The app view and svc status show the scaling.
  const view = (await request(`${plane.url}/api/apps/surge`)).body;
  t.like(view.scaling[0], {
    process: 'web',
    mode: 'autoscaled',
    min: 0,
    max: 3,
    auto: { metric: 'requests_in_flight', target: 2 },
    windowMs: WINDOW_MS,
    lastChange: { from: 1, to: 0, source: 'autoscaler' },
  });
  const status = await runSvc(['status', 'surge'], { env: { SVC_API_URL: plane.url } });
  t.is(status.code, 0, status.stderr);
  t.regex(status.stdout, /web\s+autoscaled \(window 3 s\)\s+0\.\.3\s+requests_in_flight target 2/);
  t.regex(status.stdout, /1 -> 0 by autoscaler .*scale to zero/);

  // --- CPU: four clients spinning 40 ms each keep the one allocation above 5 % of a core.
  t.is(await desired(plane, 'burner'), 1);
  const burn = load(plane, 'burner.example.test', '/burn?ms=40', 4);
  await waitForState(plane, async () => (await desired(plane, 'burner')) === 2, 'burner scaled out on cpu', 30_000);
  const cpuChange = plane.autoscaler.lastChange('burner', 'web')!;
  t.like(cpuChange, { source: 'autoscaler', from: 1, to: 2, metric: 'cpu' });
  t.true(cpuChange.value! > 5 * 1.1, `cpu per allocation ${cpuChange.value}`);
  await burn.stop();

  // --- Least in flight: with one allocation busy on a long request, every new request goes to the other.
  await waitForState(plane, async () => (await passing(plane, 'pair')) === 2, 'pair at 2 passing', 30_000);
  const long = hostRequest(`${plane.url}/slow?ms=4000`, { host: 'pair.example.test' });
  // The gateway counts the request as it arrives; no event says so, so poll that counter (bounded).
  for (const deadline = Date.now() + 10_000; plane.routing.gateway.activity('pair', 'web').inFlight < 1;) {
    if (Date.now() > deadline) throw new Error('the long request never reached the gateway');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const quick: string[] = [];
  for (let i = 0; i < 6; i += 1) quick.push((await hostRequest(`${plane.url}/`, { host: 'pair.example.test' })).text);
  const busyPid = (await long).text;
  t.is(new Set(quick).size, 1, `pids of the quick requests: ${quick.join(', ')}`);
  t.not(quick[0], busyPid);
});
