// tier: full
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import YAML from 'yaml';
import { instanceStatus } from '../../domain/registry/index.js';
import { request } from '../helpers/http-request.js';
import { tempDir } from '../helpers/temp-dir.js';
import { freePort, waitForState } from '../routing/wake-harness.js';
import { startPlaneWithApps, startPrometheus } from './observability-harness.js';
import { promtool } from './promtool.js';

const web = (name: string, extra: string, processExtra = '') => `name: ${name}
deploy: true
processes:
  web:
    port: 8080
    health: { path: /healthz, interval: 50ms, timeout: 1s }
    resources: { memory: 128 }
${processExtra}${extra}`;

test('the scrape config lists exactly the metrics-enabled processes with live instances, and a real Prometheus scrapes them all', async (t) => {
  const port = await freePort();
  const { plane } = await startPlaneWithApps(
    t,
    [
      // Two live instances, metrics at a path of its own.
      {
        name: 'alpha',
        spec: web('alpha', '', '    metrics: { enabled: true, path: /app-metrics }\n    scaling: { min: 2 }\n'),
      },
      // No metrics.
      { name: 'beta', spec: web('beta', '') },
      // Metrics enabled, but never healthy: its instance stays critical.
      { name: 'gamma', spec: web('gamma', 'env:\n  NEVER_READY: "1"\n', '    metrics: { enabled: true }\n') },
      // A worker with a separate metrics port: the companion service <app>-<process>-metrics.
      {
        name: 'delta',
        spec: 'name: delta\ndeploy: true\nprocesses:\n  worker:\n    metrics: { enabled: true, port: 9400 }\n    resources: { memory: 128 }\n',
      },
      // Metrics enabled, but no release: no instance at all.
      { name: 'epsilon', spec: web('epsilon', '', '    metrics: { enabled: true }\n'), release: false },
    ],
    { SVC_PORT: String(port), SVC_OBSERVABILITY_TARGET: `127.0.0.1:${port}` },
  );
  const registry = plane.reconcilers.registry;
  const live = await waitForState(
    plane,
    async () => {
      const alpha = await registry.instances('alpha-web');
      const beta = await registry.instances('beta-web');
      const gamma = await registry.instances('gamma-web');
      const delta = await registry.instances('delta-worker-metrics');
      const passing = (list: typeof alpha) => list.filter((i) => instanceStatus(i) === 'passing');
      if (passing(alpha).length !== 2 || passing(beta).length !== 1 || gamma.length !== 1 || delta.length !== 1)
        return undefined;
      // gamma has been checked at least once (and failed), not merely registered.
      if (!gamma[0]!.checks.every((c) => c.lastCheckedAt !== undefined)) return undefined;
      return { alpha, delta, gamma };
    },
    'alpha x2, beta, gamma (checked) and delta registered',
  );
  t.is(instanceStatus(live.gamma[0]!), 'critical');

  const response = await request(`${plane.url}/api/observability/scrape-config.yml`);
  t.is(response.status, 200);
  t.regex(response.headers.get('content-type') ?? '', /^application\/yaml/);
  const config = YAML.parse(response.text);
  t.deepEqual(config.scrape_configs[0].static_configs, [
    { targets: [`127.0.0.1:${port}`], labels: { service: 'svc-control-plane' } },
  ]);
  t.deepEqual(config.scrape_configs[1].static_configs, [
    {
      targets: live.alpha.map((i) => `127.0.0.1:${i.port}`).sort(),
      labels: { app: 'alpha', process: 'web', __metrics_path__: '/app-metrics' },
    },
    {
      targets: [`127.0.0.1:${live.delta[0]!.port}`],
      labels: { app: 'delta', process: 'worker', __metrics_path__: '/metrics' },
    },
  ]);

  // Written next to the rules the API serves, the config passes promtool and a real Prometheus scrapes every target.
  const dir = tempDir(t, 'svc-prom-');
  fs.mkdirSync(path.join(dir, 'rules'));
  fs.writeFileSync(
    path.join(dir, 'rules', 'svc-alerts.yml'),
    (await request(`${plane.url}/api/observability/alerts.yml`)).text,
  );
  config.global.scrape_interval = '1s';
  config.global.evaluation_interval = '1s';
  fs.writeFileSync(path.join(dir, 'prometheus.yml'), YAML.stringify(config));
  const check = await promtool(dir, 'check', 'config', 'prometheus.yml');
  t.is(check.code, 0, check.output);

  const prometheus = await startPrometheus(t, path.join(dir, 'prometheus.yml'));
  const targets = await prometheus.until('all 4 targets up', async () => {
    const body = (await (await fetch(`${prometheus.url}/api/v1/targets?state=active`)).json()) as {
      data: { activeTargets: { labels: Record<string, string>; health: string; scrapeUrl: string }[] };
    };
    const active = body.data.activeTargets;
    return active.length === 4 && active.every((target) => target.health === 'up') ? active : undefined;
  });
  t.deepEqual(
    targets
      .map((target) => `${target.labels.job} ${target.labels.app ?? '-'} ${new URL(target.scrapeUrl).pathname}`)
      .sort(),
    [
      'svc-apps alpha /app-metrics',
      'svc-apps alpha /app-metrics',
      'svc-apps delta /metrics',
      'svc-control-plane - /metrics',
    ],
  );
  // Every alert rule loads and evaluates without error on the live series.
  const rules = await prometheus.until('every rule evaluated', async () => {
    const body = (await (await fetch(`${prometheus.url}/api/v1/rules`)).json()) as {
      data: { groups: { rules: { name: string; health: string; lastError?: string }[] }[] };
    };
    const all = body.data.groups.flatMap((g) => g.rules);
    return all.length > 0 && all.every((r) => r.health !== 'unknown') ? all : undefined;
  });
  t.deepEqual(
    rules.filter((r) => r.health !== 'ok').map((r) => `${r.name}: ${r.lastError}`),
    [],
  );
  t.true(rules.some((r) => r.name === 'SvcSnapshotsOverLimit'));

  // Scrapes reach the apps directly, not through the wake gateway: no access observation is recorded.
  const patterns = await request(`${plane.url}/api/access/patterns?hours=1`);
  t.is(patterns.status, 200);
  t.deepEqual(patterns.body.hostnames, []);
});
