// tier: full
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { canonicalJson } from '../../domain/canonical-json.js';
import { instanceStatus } from '../../domain/registry/index.js';
import { request } from '../helpers/http-request.js';
import { waitForState } from '../routing/wake-harness.js';
import { startPlaneWithApps, ticks } from './observability-harness.js';
import { waitForChange } from '../helpers/wait-for.js';

test("tuning recommendations derive from the right-sizing classes and the spec's TuningPolicy, and never change a job or a spec", async (t) => {
  const { plane, config } = await startPlaneWithApps(
    t,
    [
      {
        name: 'roomy',
        spec: `name: roomy
deploy: true
processes:
  web:
    port: 8080
    health: { path: /healthz, interval: 50ms, timeout: 1s }
    resources: { cpu: 150, memory: 1024 }
    tuning:
      mode: advisory
      cooldown: 1h
      limits: { min: { memory: 200 } }
      signals:
        - { name: rss, source: nomad, metric: memory_rss, aggregate: max }
        - { name: p95, source: prometheus, metric: memory_max, aggregate: p95, window: 1h }
`,
      },
      // Declares a policy but never runs (no release).
      {
        name: 'dormant',
        spec: 'name: dormant\ndeploy: true\nprocesses:\n  web:\n    port: 8080\n    tuning: { mode: advisory }\n',
        release: false,
      },
    ],
    { SVC_AUTOSCALE_INTERVAL: 'off' },
  );
  await waitForState(
    plane,
    async () => (await plane.reconcilers.registry.instances('roomy-web')).some((i) => instanceStatus(i) === 'passing'),
    'roomy healthy',
  );
  const scheduler = await plane.reconcilers.targets.get();
  const jobsBefore = canonicalJson(await scheduler.listJobs());
  const specsBefore = ['roomy', 'dormant'].map((app) =>
    fs.readFileSync(path.join(config.appsDir, app, 'infraspec.yaml'), 'utf8'),
  );

  const suggestions = await request(`${plane.url}/api/resources/suggestions`);
  const response = await request(`${plane.url}/api/tuning/recommendations`);
  t.is(response.status, 200);
  t.is(response.body.mode, 'advisory');
  t.false(response.body.mutates);
  t.deepEqual(response.body.thresholds, suggestions.body.thresholds);
  t.is(response.body.recommendations.length, 1);
  const roomy = response.body.recommendations[0];
  const suggestion = suggestions.body.suggestions.find((s: { app: string }) => s.app === 'roomy');
  t.is(roomy.status, suggestion.status);
  t.is(roomy.status, 'overprovisioned');
  t.deepEqual(roomy.current, { cpu: 150, memory: 1024, scale: 1 });
  // The peak calls for far less than 200 MB; limits.min.memory holds it there.
  t.deepEqual(roomy.recommended, { cpu: 150, memory: 200, scale: 1, profile: null });
  t.is(roomy.action, 'lower_memory');
  t.false(roomy.applied);
  t.deepEqual(roomy.policy, { declared: true, mode: 'advisory', cooldown: '1h', profiles: [] });
  t.deepEqual(
    roomy.signals.map((s: { name: string; used: boolean; note: string }) => [s.name, s.used, s.note]),
    [
      ['rss', true, 'read as the peak RSS of the running allocations'],
      ['p95', false, 'signals are not sampled (SVC_AUTOSCALE_INTERVAL=off)'],
    ],
  );
  t.true(roomy.notes.some((n: string) => n.includes('limits.min.memory (200 MB)')));
  t.deepEqual(response.body.unobserved, [
    { app: 'dormant', process: 'web', reason: 'declares a tuning policy but has no running allocation' },
  ]);

  const filtered = await request(`${plane.url}/api/tuning/recommendations?app=roomy&status=at_risk`);
  t.deepEqual(filtered.body.recommendations, []);
  const onlyRoomy = await request(`${plane.url}/api/tuning/recommendations?app=roomy`);
  t.is(onlyRoomy.body.recommendations.length, 1);
  t.deepEqual(onlyRoomy.body.unobserved, []);

  t.is(canonicalJson(await scheduler.listJobs()), jobsBefore);
  t.deepEqual(
    ['roomy', 'dormant'].map((app) => fs.readFileSync(path.join(config.appsDir, app, 'infraspec.yaml'), 'utf8')),
    specsBefore,
  );
});

test('tuning signals of the prometheus and app sources are computed from the samples: cpu_percent as a p95 over its window, a metric the app exposes, memory as the driver reports it', async (t) => {
  const { plane } = await startPlaneWithApps(t, [
    {
      name: 'gauged',
      spec: `name: gauged
deploy: true
processes:
  web:
    port: 8080
    health: { path: /healthz, interval: 50ms, timeout: 1s }
    metrics: { enabled: true }
    resources: { cpu: 150, memory: 256 }
    tuning:
      signals:
        - { name: cpu, source: prometheus, metric: cpu_percent, window: 1h, aggregate: p95 }
        - { name: scrapes, source: app, metric: demo_scrapes_total, aggregate: max }
        - { name: rss, source: app, metric: memory_rss, window: 10m, aggregate: current }
        - { name: peak, source: prometheus, metric: memory_max, aggregate: max }
        - { name: odd, source: nomad, metric: demo_scrapes_total }
`,
    },
  ]);
  await waitForState(
    plane,
    async () => (await plane.reconcilers.registry.instances('gauged-web')).some((i) => instanceStatus(i) === 'passing'),
    'gauged healthy',
  );
  const signals = async () => {
    await plane.signals.tick();
    const response = await request(`${plane.url}/api/tuning/recommendations?app=gauged`);
    t.is(response.status, 200);
    return response.body.recommendations[0]?.signals as any[] | undefined;
  };
  // The driver samples CPU about once a second: sampled until every signal with a source has a value.
  const read = await waitForChange(
    [ticks(200)],
    async () => {
      const found = await signals();
      return found?.filter((s) => s.name !== 'odd').every((s) => s.used) ? found : undefined;
    },
    { what: 'every signal read', timeoutMs: 30_000 },
  );
  const byName = new Map(read.map((s) => [s.name, s]));
  t.like(byName.get('cpu'), {
    used: true,
    source: 'prometheus',
    metric: 'cpu_percent',
    aggregate: 'p95',
    window: '1h',
  });
  t.true(byName.get('cpu').value >= 0 && byName.get('cpu').value < 400, String(byName.get('cpu').value));
  t.regex(byName.get('cpu').note, /^p95 of cpu_percent over 1h \(\d+ samples from the driver's samples/);
  // The app's endpoint answers demo_scrapes_total{path="/metrics"} 1.
  t.like(byName.get('scrapes'), { used: true, value: 1 });
  t.regex(byName.get('scrapes').note, /metrics endpoint/);
  const rss = byName.get('rss').value;
  t.true(rss > 1 && rss < 256, `rss ${rss} MB`);
  t.true(byName.get('peak').value >= rss);
  t.like(byName.get('odd'), { used: false, value: null, note: 'the scheduler reports no live demo_scrapes_total' });
  // More samples: p95 and max are over every sample of the window.
  await signals();
  const again = new Map(((await signals()) ?? []).map((s) => [s.name, s]));
  t.true(again.get('cpu').samples > byName.get('cpu').samples);
});
