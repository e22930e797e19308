// tier: full
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { startControlPlane } from '../../wiring/control-plane.js';
import { silentLogger } from '../../platform/logger.js';
import { CONTROL_PLANE_FAMILIES, DASHBOARD_PANELS } from '../../domain/observability/index.js';
import { closePlaneAndStopApps } from '../helpers/stop-apps.js';
import { request } from '../helpers/servers.js';
import { tempDir } from '../helpers/temp-dir.js';
import {
  commitApp,
  deployAndWait,
  git,
  initAppsRepo,
  pipelineConfig,
  startPlane,
  waitForApp,
} from '../pipeline/pipeline-fixture.js';
import { parseExposition, samplesOf } from './exposition.js';
import { promtoolCheckMetrics } from './promtool.js';

/** A web process, a periodic one, and two buckets. */
const SHOP_EXTRA = `  nightly:
    schedule: "0 3 * * *"
    command: node server.mjs
infrastructure:
  objectStorage:
    provider: MinIO
    buckets:
      - name: shop-uploads
      - name: shop-exports`;

/** An app with a database (snapshot gauges) that is not deployed. */
const LEDGER =
  'name: ledger\ndeploy: false\nprocesses:\n  api:\n    port: 8080\ninfrastructure:\n  postgres:\n    database: ledger\n';

async function scrape(url: string) {
  const response = await request(`${url}/metrics`);
  if (response.status !== 200) throw new Error(`/metrics answered ${response.status}`);
  return { text: response.text, families: parseExposition(response.text) };
}

function value(
  families: ReturnType<typeof parseExposition>,
  family: string,
  labels: Record<string, string> = {},
): number | undefined {
  return samplesOf(families, family, labels)[0]?.value;
}

test("GET /metrics serves every family of the spec's table with its type and labels, live, and a deploy moves svc_deploys_total and the duration sum", async (t) => {
  const config = pipelineConfig(t);
  initAppsRepo(config);
  commitApp(config.appsDir, 'shop', { extra: SHOP_EXTRA });
  fs.mkdirSync(path.join(config.appsDir, 'ledger'));
  fs.writeFileSync(path.join(config.appsDir, 'ledger', 'infraspec.yaml'), LEDGER);
  git(config.appsDir, 'add', '-A');
  git(config.appsDir, 'commit', '-q', '-m', 'ledger');
  const plane = await startPlane(t, config);
  await waitForApp(plane, 'shop');
  await waitForApp(plane, 'ledger');

  const before = await scrape(plane.url);
  t.is(value(before.families, 'svc_deploys_total', { app: 'shop', status: 'succeeded' }), undefined);
  t.is(samplesOf(before.families, 'svc_deploy_duration_seconds', { app: 'shop' }).length, 0);

  const started = Date.now();
  const { operation, steps } = await deployAndWait(plane, 'shop');
  const wallSeconds = (Date.now() - started) / 1000;
  t.is(operation.status, 'succeeded', operation.lastError ?? '');
  // The watchers run on their timers; run them once now rather than wait.
  await plane.eventServices.allocations?.scan();
  await plane.eventServices.cron?.check();
  t.is((await request(`${plane.url}/api/apps/nope`)).status, 404);

  const { text, families } = await scrape(plane.url);
  for (const expected of CONTROL_PLANE_FAMILIES) {
    const family = families.get(expected.name);
    if (family === undefined) {
      t.fail(`${expected.name} is not served`);
      continue;
    }
    t.is(family.type, expected.type, `${expected.name} type`);
    t.true(family.samples.length > 0, `${expected.name} has a sample`);
    t.deepEqual(family.labelNames, [...expected.labels].sort(), `${expected.name} labels`);
  }

  // Deploys: counted from the deployment record, with its duration.
  t.is(value(families, 'svc_deploys_total', { app: 'shop', status: 'succeeded' }), 1);
  const [duration] = samplesOf(families, 'svc_deploy_duration_seconds', { app: 'shop', status: 'succeeded' });
  t.is(duration?.count, 1);
  t.true(
    duration!.sum! > 0 && duration!.sum! <= wallSeconds,
    `duration ${duration?.sum} within the ${wallSeconds} s the deploy took`,
  );
  t.is(
    value(families, 'svc_deploy_last_started_timestamp_seconds', { app: 'shop' }),
    Date.parse(steps.deployment.startedAt) / 1000,
  );

  // Apps: shop is deployable, ledger is not; their metadata and processes.
  t.is(value(families, 'svc_apps_total'), 1);
  t.is(
    value(families, 'svc_app_info', { app: 'shop', deploy: 'true', valid: 'true', public: 'false', node_pool: 'none' }),
    1,
  );
  t.is(value(families, 'svc_app_info', { app: 'ledger', deploy: 'false' }), 1);
  t.is(
    value(families, 'svc_process_info', { app: 'shop', process: 'web', type: 'service', metrics_enabled: 'false' }),
    1,
  );
  t.is(value(families, 'svc_process_info', { app: 'shop', process: 'nightly', type: 'periodic' }), 1);
  t.is(value(families, 'svc_object_storage_buckets', { app: 'shop', provider: 'minio' }), 2);

  // Health from the service manifest: one series per app and per service, its state in the status label.
  t.is(value(families, 'svc_app_health', { app: 'shop', status: 'passing' }), 1);
  t.deepEqual(
    samplesOf(families, 'svc_app_health', { app: 'shop' }).map((s) => s.labels.status),
    ['passing'],
  );
  t.is(
    value(families, 'svc_service_status', { app: 'shop', process: 'web', service: 'shop-web', status: 'passing' }),
    1,
  );
  t.is(
    value(families, 'svc_service_status', { app: 'ledger', process: 'api', service: 'ledger-api', status: 'none' }),
    1,
  );

  // Snapshots, events, tasks, cron, disk.
  t.is(value(families, 'svc_snapshots_total', { app: 'ledger', database: 'ledger' }), 0);
  t.true(value(families, 'svc_events_total', { type: 'deploy.succeeded', severity: 'info' })! >= 1);
  t.is(value(families, 'svc_task_restarts_total', { app: 'shop', process: 'web', task: 'web' }), 0);
  t.is(value(families, 'svc_task_oom_kills_total', { app: 'shop', process: 'web', task: 'web' }), 0);
  t.is(value(families, 'svc_cron_missed_runs_total', { app: 'shop', process: 'nightly' }), 0);
  t.true(value(families, 'svc_host_disk_free_bytes')! > 0);
  t.true(value(families, 'svc_host_disk_total_bytes')! >= value(families, 'svc_host_disk_free_bytes')!);

  // Recent access events: the 404 is there; scrapes themselves are never counted.
  t.true(value(families, 'svc_access_events_recent_total', { status: '4xx' })! >= 1);
  const again = await scrape(plane.url);
  for (const status of ['2xx', '4xx']) {
    t.is(
      value(again.families, 'svc_access_events_recent_total', { status }),
      value(families, 'svc_access_events_recent_total', { status }),
      `${status} unchanged by a scrape`,
    );
  }

  // The starter dashboard the bundle serves reads only series this scrape has, and leaves no panel out.
  const served = new Set(
    [...families.values()].flatMap((f) =>
      f.type === 'summary' || f.type === 'histogram' ? [`${f.name}_sum`, `${f.name}_count`] : [f.name],
    ),
  );
  const bundle = (await request(`${plane.url}/api/observability/bundle`)).body as {
    files: { path: string; content: string }[];
  };
  const dashboard = JSON.parse(
    bundle.files.find((f) => f.path === 'grafana/dashboards/svc-platform.json')!.content,
  ) as { panels: { title: string; targets: { expr: string }[] }[] };
  t.deepEqual(
    dashboard.panels.map((p) => p.title),
    DASHBOARD_PANELS.map((p) => p.title),
  );
  for (const panel of dashboard.panels) {
    for (const target of panel.targets) {
      for (const name of target.expr.match(/svc_[a-z_]+/g) ?? [])
        t.true(served.has(name), `${panel.title} reads ${name}, which the scrape does not have`);
    }
  }

  // The exposition passes Prometheus's own linter.
  const check = await promtoolCheckMetrics(tempDir(t), text);
  t.is(check.code, 0, check.output);
});

test('svc_deploys_total and the duration summary survive a restart of the control plane and keep counting after it', async (t) => {
  const config = pipelineConfig(t);
  initAppsRepo(config);
  commitApp(config.appsDir, 'keep');
  const first = await startControlPlane(config, silentLogger());
  let closed = false;
  t.teardown(async () => {
    if (!closed) await closePlaneAndStopApps(first, config);
  });
  await waitForApp(first, 'keep');
  t.is((await deployAndWait(first, 'keep')).operation.status, 'succeeded');
  const beforeRestart = (await scrape(first.url)).families;
  const [duration] = samplesOf(beforeRestart, 'svc_deploy_duration_seconds', { app: 'keep', status: 'succeeded' });
  t.is(value(beforeRestart, 'svc_deploys_total', { app: 'keep', status: 'succeeded' }), 1);
  await first.close();
  closed = true;

  const second = await startPlane(t, config);
  const afterRestart = (await scrape(second.url)).families;
  t.is(value(afterRestart, 'svc_deploys_total', { app: 'keep', status: 'succeeded' }), 1);
  t.deepEqual(
    samplesOf(afterRestart, 'svc_deploy_duration_seconds', { app: 'keep', status: 'succeeded' })[0],
    duration,
  );
  t.is(
    value(afterRestart, 'svc_deploy_last_started_timestamp_seconds', { app: 'keep' }),
    value(beforeRestart, 'svc_deploy_last_started_timestamp_seconds', { app: 'keep' }),
  );

  await waitForApp(second, 'keep');
  t.is((await deployAndWait(second, 'keep')).operation.status, 'succeeded');
  const afterDeploy = (await scrape(second.url)).families;
  t.is(value(afterDeploy, 'svc_deploys_total', { app: 'keep', status: 'succeeded' }), 2);
  const [grown] = samplesOf(afterDeploy, 'svc_deploy_duration_seconds', { app: 'keep', status: 'succeeded' });
  t.is(grown?.count, 2);
  t.true(grown!.sum! > duration!.sum!);
  t.true(
    value(afterDeploy, 'svc_deploy_last_started_timestamp_seconds', { app: 'keep' })! >
      value(afterRestart, 'svc_deploy_last_started_timestamp_seconds', { app: 'keep' })!,
  );
});
