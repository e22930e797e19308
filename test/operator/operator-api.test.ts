// tier: full
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { formatSnapshotName } from '../../domain/snapshots/index.js';
import { startControlPlane } from '../../wiring/control-plane.js';
import { silentLogger } from '../../platform/logger.js';
import { request } from '../helpers/servers.js';
import { closePlaneAndStopApps } from '../helpers/stop-apps.js';
import { testConfig } from '../helpers/test-config.js';
import { tempDir } from '../helpers/temp-dir.js';
import { waitForChange } from '../helpers/wait-for.js';
import type { ControlPlane } from '../../wiring/control-plane.js';
import { git, initAppsRepo, pipelineConfig, startPlane, waitForApp } from '../pipeline/pipeline-fixture.js';

/** Secret values configured for the plane or stored for an app; none may appear in an operator answer. */
const SECRETS = {
  SVC_API_TOKEN: 'op-token-SECRET-0001',
  SVC_WEBHOOK_SECRET: 'webhook-SECRET-0002',
  SVC_EVENT_SINK_SECRET: 'sink-SECRET-0003',
  SVC_EDGE_LOGPUSH_TOKEN: 'logpush-SECRET-0004',
  SVC_S3_SECRET_KEY: 's3-SECRET-0005',
  SVC_EDGE_API_TOKEN: 'edge-SECRET-0006',
  SVC_KNOWLEDGE_TOKENS: 'tenant:read:knowledge-SECRET-0007',
};
const APP_SECRET_VALUE = 'app-file-SECRET-0008';
const ENV_SECRET_VALUE = 'env-committed-SECRET-0009';
const AUTH = { authorization: `Bearer ${SECRETS.SVC_API_TOKEN}` };

const OPERATOR_PATHS = [
  '/api/operator/inbox',
  '/api/operator/cron',
  '/api/operator/deploy-confidence',
  '/api/operator/auth-hints',
  '/api/operator/actions',
  '/api/ops/platform',
  '/api/secrets/migration-plan',
  '/api/v1/production/readiness',
  '/api/platform/releases',
];

/** Queues a deploy with the control token and waits for its operation to end. */
async function deployAndWait(
  plane: ControlPlane,
  app: string,
): Promise<{ operation: { id: string; status: string }; steps: unknown }> {
  const queued = await request(`${plane.url}/api/apps/${app}/deploy`, { method: 'POST', headers: AUTH, json: {} });
  if (queued.status !== 202) throw new Error(`deploy answered ${queued.status}: ${queued.text}`);
  const operation = await plane.deploys.worker.waitFor(queued.body.operation.id, 60_000);
  const steps = (await request(`${plane.url}/api/v1/deployments/${queued.body.deploymentId}/steps`, { headers: AUTH }))
    .body;
  return { operation, steps };
}

const REPORT_DOCKERFILE = 'FROM node:20-alpine\nWORKDIR /app\nCOPY . .\nCMD ["node", "report.mjs"]\n';

test('operator views show real incidents, failed operations, cron, deploy confidence, secrets and rollups without a secret value', async (t) => {
  const root = tempDir(t);
  const config = pipelineConfig(t, { ...SECRETS, SVC_SNAPSHOTS_DIR: path.join(root, 'snapshots') });
  initAppsRepo(config);
  // reports: a cron app built from its folder; shop: declares a secret without a value and its tests fail.
  fs.mkdirSync(path.join(config.appsDir, 'reports'));
  fs.writeFileSync(
    path.join(config.appsDir, 'reports', 'infraspec.yaml'),
    'name: reports\ndeploy: true\nprocesses:\n  nightly:\n    schedule: "0 3 * * *"\n    resources:\n      memory: 128\n',
  );
  fs.writeFileSync(path.join(config.appsDir, 'reports', 'Dockerfile'), REPORT_DOCKERFILE);
  fs.writeFileSync(path.join(config.appsDir, 'reports', 'report.mjs'), "console.log('report done');\n");
  fs.mkdirSync(path.join(config.appsDir, 'shop'));
  fs.writeFileSync(
    path.join(config.appsDir, 'shop', 'infraspec.yaml'),
    `name: shop\ndeploy: true\nbuild:\n  test: "exit 3"\nsecrets: [DB_PASSWORD, API_TOKEN]\nenv:\n  STRIPE_API_KEY: ${ENV_SECRET_VALUE}\ninfrastructure:\n  postgres:\n    database: shop\nsnapshots:\n  keep: 2\nprocesses:\n  web:\n    port: 8080\n`,
  );
  fs.writeFileSync(path.join(config.appsDir, 'shop', 'Dockerfile'), 'FROM node:20-alpine\nCMD ["node", "-e", "0"]\n');
  git(config.appsDir, 'add', '-A');
  git(config.appsDir, 'commit', '-q', '-m', 'apps');
  const secretsDir = path.join(config.dataDir, 'secrets', 'shop');
  fs.mkdirSync(secretsDir, { recursive: true });
  fs.writeFileSync(path.join(secretsDir, 'DB_PASSWORD'), APP_SECRET_VALUE, { mode: 0o600 });
  // Three local dumps of shop's database (keep 2): one over the limit.
  fs.mkdirSync(config.snapshotsDir, { recursive: true, mode: 0o700 });
  for (const day of [1, 2, 3])
    fs.writeFileSync(
      path.join(
        config.snapshotsDir,
        formatSnapshotName({ database: 'shop', kind: 'manual', at: new Date(Date.UTC(2025, 0, day)) }),
      ),
      'dump',
      { mode: 0o600 },
    );

  const plane = await startPlane(t, config);
  await waitForApp(plane, 'reports');
  await waitForApp(plane, 'shop');
  const get = (p: string, headers: Record<string, string> = AUTH) => request(`${plane.url}${p}`, { headers });
  const answers: string[] = [];
  const read = async (p: string) => {
    const answer = await get(p);
    t.is(answer.status, 200, `${p}: ${answer.text}`);
    t.is(answer.headers.get('cache-control'), 'no-store', p);
    answers.push(answer.text);
    return answer.body;
  };

  // Protected like every other route.
  t.is((await get('/api/operator/inbox', {})).status, 401);

  // Real state: a critical incident, a failed deploy (failed operation), a deployed cron app with a run.
  const incident = await request(`${plane.url}/api/events`, {
    method: 'POST',
    headers: AUTH,
    json: {
      type: 'app.disk_pressure',
      severity: 'critical',
      title: 'disk almost full',
      app: 'shop',
      metadata: { correlationKey: 'shop:disk' },
    },
  });
  t.is(incident.status, 201, incident.text);
  const failed = await deployAndWait(plane, 'shop');
  t.is(failed.operation.status, 'failed');
  const deployed = await deployAndWait(plane, 'reports');
  t.is(deployed.operation.status, 'succeeded', JSON.stringify(deployed.steps));
  const scheduler = await plane.reconcilers.targets.get();
  const trigger = await request(`${plane.url}/api/apps/reports/cron/trigger`, {
    method: 'POST',
    headers: AUTH,
    json: {},
  });
  t.is(trigger.status, 202, trigger.text);
  await waitForChange(
    [(listener) => scheduler.watch(() => listener())],
    async () => {
      const children = await scheduler.listAllocations({ jobId: 'reports-nightly', includeTerminal: true });
      return children.some((a) => a.kind === 'periodic_child' && a.status === 'complete');
    },
    { what: 'the triggered run to complete' },
  );

  // Inbox.
  const inbox = await read('/api/operator/inbox');
  t.true(
    inbox.incidents.items.some(
      (i: any) =>
        i.correlationKey === 'shop:disk' && i.severity === 'critical' && i.representative.title === 'disk almost full',
    ),
  );
  t.true(
    inbox.operations.failed.items.some(
      (o: any) => o.id === failed.operation.id && o.app === 'shop' && o.kind === 'app.deploy',
    ),
  );
  t.true(inbox.deployRisks.items.some((r: any) => r.app === 'shop' && r.code === 'deploy.last_failed'));
  t.like(inbox.snapshots, { databases: 1, overLimit: 1 });
  t.true(inbox.secrets['provide-value'] >= 1);
  t.true(inbox.wakeTargets.total >= 1);
  const shopOnly = await read('/api/operator/inbox?app=shop&limit=5');
  t.true(shopOnly.incidents.items.every((i: any) => i.app === 'shop'));

  // Cron: schedule, zone, next and last run, parent status, counters, action paths; then paused.
  let cron = await read('/api/operator/cron');
  let nightly = cron.processes.find((p: any) => p.app === 'reports' && p.process === 'nightly');
  t.like(nightly, { schedule: '0 3 * * *', timeZone: 'UTC', status: 'scheduled' });
  t.regex(nightly.nextRun.local, /^\d{4}-\d{2}-\d{2} 03:00 UTC$/);
  t.regex(nightly.nextRun.relative, /^in /);
  t.like(nightly.lastRun, { status: 'complete' });
  t.like(nightly.children, { complete: 1 });
  t.deepEqual(nightly.parents, [{ jobId: 'reports-nightly', region: 'local', status: 'running', paused: false }]);
  t.deepEqual(nightly.actions.pause, {
    method: 'POST',
    path: '/api/apps/reports/cron/pause',
    body: { process: 'nightly' },
  });
  t.is(
    (
      await request(`${plane.url}${nightly.actions.pause.path}`, {
        method: 'POST',
        headers: AUTH,
        json: nightly.actions.pause.body,
      })
    ).status,
    200,
  );
  cron = await read('/api/operator/cron?app=reports');
  nightly = cron.processes[0];
  t.is(nightly.status, 'paused');
  t.is(nightly.nextRun, null);
  t.true(nightly.risks.some((r: any) => r.code === 'cron.paused'));
  t.true(
    (await read('/api/operator/inbox')).cronRisks.items.some(
      (r: any) => r.app === 'reports' && r.code === 'cron.paused',
    ),
  );

  // Deploy confidence, then an uncommitted edit shows up as source-dirty evidence.
  let confidence = await read('/api/operator/deploy-confidence');
  const shop = confidence.apps.find((a: any) => a.app === 'shop');
  t.like(shop, { confidence: 'low', lastStatus: 'failed', deployPolicy: { autoRollback: true } });
  t.is(shop.latest.failedStep, 'test');
  const reports = confidence.apps.find((a: any) => a.app === 'reports');
  t.like(reports, {
    lastStatus: 'succeeded',
    source: { kind: 'apps-repository', folder: 'reports', dirty: false, undeployedCommits: 0 },
  });
  fs.writeFileSync(path.join(config.appsDir, 'reports', 'report.mjs'), "console.log('edited');\n");
  confidence = await read('/api/operator/deploy-confidence?app=reports&limit=2');
  t.like(confidence.apps[0], {
    app: 'reports',
    confidence: 'medium',
    source: { dirty: true, dirtyCount: 1, dirtyPaths: ['reports/report.mjs'] },
  });

  // Secrets plan: keys, locations, status and actions.
  const plan = await read('/api/secrets/migration-plan');
  const entry = (key: string) => plan.entries.find((e: any) => e.key === key);
  t.like(entry('DB_PASSWORD'), {
    app: 'shop',
    location: 'app-secret-file',
    present: true,
    protection: 'owner-only',
    action: 'none',
  });
  t.like(entry('API_TOKEN'), { app: 'shop', present: false, action: 'provide-value' });
  t.like(entry('STRIPE_API_KEY'), { app: 'shop', location: 'spec-env', committed: true, action: 'move-to-secrets' });
  t.like(entry('SVC_API_TOKEN'), { location: 'platform-environment', present: true });
  t.deepEqual(
    (await read('/api/secrets/migration-plan?app=shop')).entries.map((e: any) => e.app),
    ['shop', 'shop', 'shop'],
  );

  // Platform rollup, readiness, releases, auth hints and actions.
  const platform = await read('/api/ops/platform');
  t.deepEqual(platform.snapshots.apps, [
    { app: 'shop', database: 'shop', snapshots: 3, keep: 2, overLimit: 1, latestAt: '2025-01-03T00:00:00.000Z' },
  ]);
  t.like(platform.snapshots.totals, { snapshots: 3, keep: 2, overLimit: 1, appsOverLimit: 1 });
  t.like(platform.apps, { total: 2 });
  t.true(platform.incidents.active >= 1);
  const readiness = await read('/api/v1/production/readiness');
  t.false(readiness.ready);
  const status = (id: string) => readiness.checks.find((c: any) => c.id === id)?.status;
  t.deepEqual(
    [
      status('profile'),
      status('auth.token'),
      status('auth.explicit'),
      status('backups.snapshots'),
      status('secrets.values'),
    ],
    ['fail', 'pass', 'fail', 'pass', 'fail'],
  );
  const releases = await read('/api/platform/releases');
  t.is(releases.releases.length, 1);
  t.like(releases.releases[0], { current: true, starts: 1 });
  t.is(releases.current.version, releases.releases[0].version);
  const hints = await read('/api/operator/auth-hints');
  t.is(hints.mode, 'protected');
  t.like(
    hints.mechanisms.find((m: any) => m.id === 'control-token'),
    { configured: true, howToPass: 'Authorization: Bearer <token>' },
  );
  t.true(hints.routes.public.includes('GET /api/health'));
  t.false(hints.routes.public.includes('GET /api/operator/inbox'));
  const actions = await read('/api/operator/actions');
  t.like(
    actions.actions.find((a: any) => a.id === 'app.deploy'),
    { risk: 'high', confirmation: { required: true } },
  );
  t.like(
    actions.actions.find((a: any) => a.id === 'cron.pause'),
    { risk: 'medium', path: '/api/apps/{id}/cron/pause' },
  );
  t.deepEqual(
    (await read('/api/operator/actions?risk=low')).actions.map((a: any) => a.id),
    ['incident.acknowledge', 'incident.snooze', 'incident.resolve', 'app.preflight', 'snapshot.take'],
  );
  // The descriptor's schema is the route's own: a body it allows is accepted by the route.
  const ack = actions.actions.find((a: any) => a.id === 'incident.acknowledge');
  const acked = await request(`${plane.url}${ack.path}`, {
    method: ack.method,
    headers: AUTH,
    json: { ...inbox.incidents.items[0].action.body, action: 'acknowledge', by: 'ops' },
  });
  t.is(acked.status, 200, acked.text);

  const capabilities = (await get('/api/v1/capabilities')).body.capabilities.flatMap((c: any) => c.routes);
  for (const p of OPERATOR_PATHS) t.true(capabilities.includes(`GET ${p}`), p);

  // Bad input is a 4xx with the error shape, never a 500.
  for (const p of OPERATOR_PATHS) {
    const bad = await get(`${p}?bogus=1`);
    t.is(bad.status, 400, p);
    t.is(bad.body.error.code, 'invalid_query', p);
    t.truthy(bad.body.error.message, p);
    t.truthy(bad.body.error.details, p);
    answers.push(bad.text);
  }
  for (const [p, code, httpStatus] of [
    ['/api/operator/inbox?limit=0', 'invalid_query', 400],
    ['/api/operator/inbox?limit=abc', 'invalid_query', 400],
    ['/api/operator/inbox?limit=1&limit=2', 'invalid_query', 400],
    ['/api/operator/cron?app=..%2Fetc', 'invalid_query', 400],
    ['/api/operator/deploy-confidence?limit=51', 'invalid_query', 400],
    ['/api/operator/actions?risk=extreme', 'invalid_query', 400],
    ['/api/operator/actions?mobileReady=maybe', 'invalid_query', 400],
    ['/api/platform/releases?limit=99999999', 'invalid_query', 400],
    ['/api/operator/cron?app=nope', 'app_not_found', 404],
    ['/api/secrets/migration-plan?app=nope', 'app_not_found', 404],
  ] as const) {
    const bad = await get(p);
    t.is(bad.status, httpStatus, `${p}: ${bad.text}`);
    t.is(bad.body.error.code, code, p);
    answers.push(bad.text);
  }

  // No configured secret, stored app secret or committed env value appears in any answer.
  const everything = answers.join('\n');
  for (const secret of [...Object.values(SECRETS), 'knowledge-SECRET-0007', APP_SECRET_VALUE, ENV_SECRET_VALUE])
    t.false(everything.includes(secret), secret);
});

test('platform releases record the running build at every start of the same data folder', async (t) => {
  const config = testConfig(t);
  const first = await startControlPlane(config, silentLogger());
  await closePlaneAndStopApps(first, config);
  const plane = await startControlPlane(config, silentLogger());
  t.teardown(() => closePlaneAndStopApps(plane, config));
  const releases = (await request(`${plane.url}/api/platform/releases?limit=10`)).body;
  t.is(releases.recentStarts.length, 2);
  t.is(releases.releases.length, 1);
  t.like(releases.releases[0], {
    starts: 2,
    current: true,
    version: releases.current.version,
    commit: releases.current.commit,
  });
  t.deepEqual(releases.operations, []);
  t.is(releases.current.startedAt, releases.recentStarts[0].startedAt);
});
