// tier: full
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { canonicalJson } from '../../domain/canonical-json.js';
import { instanceStatus } from '../../domain/registry/index.js';
import { request } from '../helpers/http-request.js';
import { waitForState } from '../routing/wake-harness.js';
import { startPlaneWithApps } from './observability-harness.js';

test("tuning recommendations derive from the right-sizing classes and the spec's TuningPolicy, and never change a job or a spec", async (t) => {
  const { plane, config } = await startPlaneWithApps(t, [
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
  ]);
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
    roomy.signals.map((s: { name: string; used: boolean }) => [s.name, s.used]),
    [
      ['rss', true],
      ['p95', false],
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
