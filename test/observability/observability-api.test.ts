// tier: full
import fs from 'node:fs';
import path from 'node:path';
import test, { type ExecutionContext } from 'ava';
import YAML from 'yaml';
import { VARIABLES, type SvcConfig } from '../../platform/config.js';
import { secretValues } from '../../wiring/control/observability.js';
import { HOST_GATEWAY, MARKER_FILE, MANAGED_SERVICE_NAMES } from '../../domain/observability/index.js';
import { validateInfraspec } from '../../domain/spec/index.js';
import { getApp } from '../../store/control/apps.js';
import { request, startTestControlPlane } from '../helpers/servers.js';
import { testConfig } from '../helpers/test-config.js';
import { tempDir } from '../helpers/temp-dir.js';
import { waitForReconciled } from '../helpers/wait-for.js';
import { promtool } from './promtool.js';

/** A distinct value for every secret configuration variable. */
function secretEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const spec of Object.values(VARIABLES)) {
    if (!('secret' in spec) || spec.secret !== true) continue;
    const value = `S3cr3t-${spec.name.toLowerCase().replace(/_/g, '-')}-7f3a9c`;
    env[spec.name] =
      spec.name === 'SVC_KNOWLEDGE_TOKENS'
        ? `team:read:${value}`
        : spec.name === 'SVC_KNOWLEDGE_ACQUISITION_CONNECTOR_TOKENS'
          ? `crawler:${value}`
          : value;
  }
  // A connector token names a configured connector.
  env.SVC_KNOWLEDGE_ACQUISITION_CONNECTORS = 'crawler=https://connector.example.test/run';
  return env;
}

const TOKEN = secretEnv().SVC_API_TOKEN!;
const auth = { authorization: `Bearer ${TOKEN}` };

function expectError(t: ExecutionContext, response: { status: number; body: any }, status: number, code: string): void {
  t.is(response.status, status, JSON.stringify(response.body));
  t.deepEqual(Object.keys(response.body.error ?? {}).sort(), ['code', 'details', 'message']);
  t.is(response.body.error.code, code);
}

function filesUnder(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name));
}

test('secretValues covers every secret configuration variable', (t) => {
  const config = testConfig(t, secretEnv());
  const values = secretValues(config);
  const secretNames = Object.values(VARIABLES)
    .filter((spec) => 'secret' in spec && spec.secret === true)
    .map((spec) => spec.name)
    .sort();
  t.deepEqual([...new Set(Object.keys(values).map((key) => key.split('#')[0]!))].sort(), secretNames);
  for (const name of secretNames) t.truthy(values[name], name);
});

test('no observability response and no installed file holds a secret value, and every route needs the control token', async (t) => {
  const env = { ...secretEnv(), SVC_REQUIRE_EXPLICIT_AUTH: 'true' };
  const config = testConfig(t, env);
  const plane = await startTestControlPlane(t, config);
  const secrets = Object.entries(env)
    .filter(([name, value]) => value !== 'true' && name !== 'SVC_KNOWLEDGE_ACQUISITION_CONNECTORS')
    .map(([, value]) => value);

  const routes: [string, string, unknown?][] = [
    ['GET', '/api/observability/scrape-config.yml'],
    ['GET', '/api/observability/alerts.yml'],
    ['GET', '/api/observability/bundle'],
    ['POST', '/api/observability/services/install', { dryRun: true }],
    ['POST', '/api/observability/services/install', {}],
    ['GET', '/api/tuning/recommendations'],
  ];
  const texts: string[] = [];
  for (const [method, route, json] of routes) {
    const anonymous = await request(`${plane.url}${route}`, { method, ...(json === undefined ? {} : { json }) });
    expectError(t, anonymous, 401, 'missing_credentials');
    const ok = await request(`${plane.url}${route}`, {
      method,
      headers: auth,
      ...(json === undefined ? {} : { json }),
    });
    t.is(ok.status, 200, `${method} ${route}: ${ok.text}`);
    texts.push(ok.text);
  }
  texts.push(...filesUnder(config.appsDir).map((file) => fs.readFileSync(file, 'utf8')));
  for (const secret of secrets)
    t.false(
      texts.some((text) => text.includes(secret)),
      `a response or file holds ${secret}`,
    );

  // /metrics needs a caller here, so the control plane job reads a token file the operator makes.
  const scrape = YAML.parse(texts[0]!);
  t.deepEqual(scrape.scrape_configs[0].authorization, {
    type: 'Bearer',
    credentials_file: 'secrets/svc-metrics-token',
  });
  const bundle = JSON.parse(texts[2]!);
  t.true(bundle.valueSafe);
  t.is(bundle.tokenFile, 'prometheus/secrets/svc-metrics-token');
  t.false(bundle.files.some((f: { path: string }) => f.path.includes('secrets/')));
});

test('the capability list advertises the observability routes', async (t) => {
  const plane = await startTestControlPlane(t);
  const caps = await request(`${plane.url}/api/v1/capabilities`);
  const observability = caps.body.capabilities.find((c: { name: string }) => c.name === 'observability');
  t.deepEqual(observability.routes, [
    'GET /api/observability/scrape-config.yml',
    'GET /api/observability/alerts.yml',
    'GET /api/observability/bundle',
    'POST /api/observability/services/install',
    'GET /api/tuning/recommendations',
  ]);
});

test('a control plane on loopback is scraped at host.docker.internal:<its port>, and /metrics exports the snapshot gauges the rules read', async (t) => {
  const plane = await startTestControlPlane(t);
  const port = new URL(plane.url).port;
  const scrape = YAML.parse((await request(`${plane.url}/api/observability/scrape-config.yml`)).text);
  t.deepEqual(scrape.scrape_configs[0].static_configs[0].targets, [`${HOST_GATEWAY}:${port}`]);
  t.is(scrape.scrape_configs[0].authorization, undefined);
  t.deepEqual(scrape.scrape_configs[1].static_configs, []);
  const names = plane.metrics.registry.getMetricsAsArray().map((m) => m.name);
  t.true(names.includes('svc_snapshot_over_limit_total'));
  t.true(names.includes('svc_snapshots_total'));
  const alerts = YAML.parse((await request(`${plane.url}/api/observability/alerts.yml`)).text);
  const alertNames = alerts.groups.flatMap((g: { rules: { alert: string }[] }) => g.rules.map((r) => r.alert));
  for (const name of [
    'SvcTaskOOMRisk',
    'SvcTaskRestartLoop',
    'SvcCronMissedRun',
    'SvcSnapshotsOverLimit',
    'SvcHostDiskHeadroomLow',
    'SvcDeployFailed',
    'SvcCronFailed',
    'SvcServiceHealthCritical',
  ]) {
    t.true(alertNames.includes(name), name);
  }
});

test("the bundle lists the spec's files, and its prometheus/ folder written to disk passes promtool with the rules path resolved", async (t) => {
  const plane = await startTestControlPlane(t);
  const response = await request(`${plane.url}/api/observability/bundle`);
  t.is(response.status, 200);
  const bundle = response.body as {
    files: { path: string; content: string; purpose: string }[];
    skippedAlertRules: unknown[];
  };
  t.deepEqual(
    bundle.files.map((f) => f.path),
    [
      'prometheus/prometheus.yml',
      'prometheus/rules/svc-alerts.yml',
      'grafana/provisioning/datasources/svc-metrics.json',
      'grafana/dashboards/svc-platform.json',
      'services/svc-metrics-store.infraspec.yaml',
      'services/svc-dashboard.infraspec.yaml',
      'services/svc-container-metrics.infraspec.yaml',
    ],
  );
  t.deepEqual(bundle.skippedAlertRules, []);
  for (const file of bundle.files) t.true(file.content.length > 0 && file.purpose.length > 0, file.path);
  t.is(bundle.files[1]!.content, (await request(`${plane.url}/api/observability/alerts.yml`)).text);
  const datasource = JSON.parse(bundle.files[2]!.content);
  t.is(datasource.datasources[0].url, `http://${HOST_GATEWAY}:9090`);
  t.is(JSON.parse(bundle.files[3]!.content).uid, 'svc-platform');
  for (const file of bundle.files.filter((f) => f.path.startsWith('services/'))) {
    t.true(validateInfraspec(file.content).valid, file.path);
  }

  const dir = tempDir(t);
  for (const file of bundle.files) {
    fs.mkdirSync(path.dirname(path.join(dir, file.path)), { recursive: true });
    fs.writeFileSync(path.join(dir, file.path), file.content);
  }
  const run = await promtool(path.join(dir, 'prometheus'), 'check', 'config', 'prometheus.yml');
  t.is(run.code, 0, run.output);
  t.regex(run.output, /SUCCESS: 1 rule files found/);
});

async function install(plane: { url: string }, json: unknown) {
  return request(`${plane.url}/api/observability/services/install`, { method: 'POST', json });
}

/** The findings of a managed service's spec: only the warning of its fixed host port (ADR 0160). */
const FIXED_PORT_ONLY = ['warning hostPort.noOverlap processes.web.hostPort'];
const summary = (findings: readonly { severity: string; rule: string; path: string }[]) =>
  findings.map((f) => `${f.severity} ${f.rule} ${f.path}`);

test('install writes the three managed app folders, whose specs validate and which the spec controller discovers with only the fixed-port warning', async (t) => {
  const config: SvcConfig = testConfig(t);
  const plane = await startTestControlPlane(t, config);
  const first = await install(plane, {});
  t.is(first.status, 200, first.text);
  t.deepEqual(
    first.body.services.map((s: { name: string; outcome: string }) => `${s.name}:${s.outcome}`),
    MANAGED_SERVICE_NAMES.map((n) => `${n}:created`),
  );
  for (const service of first.body.services) {
    t.true(service.spec.valid);
    t.deepEqual(summary(service.spec.findings), FIXED_PORT_ONLY);
  }

  for (const name of MANAGED_SERVICE_NAMES) {
    const dir = path.join(config.appsDir, name);
    const text = fs.readFileSync(path.join(dir, 'infraspec.yaml'), 'utf8');
    const validation = validateInfraspec(text, { fileName: `${name}/infraspec.yaml` });
    t.deepEqual(summary(validation.findings), FIXED_PORT_ONLY, name);
    t.true(fs.existsSync(path.join(dir, MARKER_FILE)));
    t.true(fs.existsSync(path.join(dir, 'Dockerfile')));
  }
  // No temporary folder is left behind.
  t.deepEqual(
    fs.readdirSync(config.appsDir).filter((n) => n.startsWith('.')),
    [],
  );
  // The metrics store's own folder passes promtool: prometheus.yml finds rules/svc-alerts.yml.
  const store = path.join(config.appsDir, 'svc-metrics-store');
  const run = await promtool(store, 'check', 'config', 'prometheus.yml');
  t.is(run.code, 0, run.output);
  const storeSpec = YAML.parse(fs.readFileSync(path.join(store, 'infraspec.yaml'), 'utf8'));
  t.regex(
    storeSpec.processes.web.command,
    /--storage\.tsdb\.retention\.time=30d .*--storage\.tsdb\.retention\.size=8GB/,
  );

  await waitForReconciled(
    [plane.reconcilers.specController],
    () => MANAGED_SERVICE_NAMES.every((name) => getApp(plane.db, name)?.generation != null),
    { what: 'the managed apps discovered' },
  );
  for (const name of MANAGED_SERVICE_NAMES)
    t.deepEqual(summary(getApp(plane.db, name)!.findings), FIXED_PORT_ONLY, name);
});

test('install is unchanged when run again, refuses an operator-edited folder with 409 writing nothing, and overwrites only with force', async (t) => {
  const config = testConfig(t);
  const plane = await startTestControlPlane(t, config);
  t.is((await install(plane, {})).status, 200);
  const again = await install(plane, {});
  t.deepEqual(
    again.body.services.map((s: { outcome: string }) => s.outcome),
    ['unchanged', 'unchanged', 'unchanged'],
  );

  const specFile = path.join(config.appsDir, 'svc-dashboard', 'infraspec.yaml');
  const edited = `${fs.readFileSync(specFile, 'utf8')}# tuned by hand\n`;
  fs.writeFileSync(specFile, edited);
  fs.rmSync(path.join(config.appsDir, 'svc-container-metrics'), { recursive: true });
  const refused = await install(plane, {});
  expectError(t, refused, 409, 'managed_folder_modified');
  t.deepEqual(refused.body.error.details.conflicts, [
    {
      service: 'svc-dashboard',
      folder: path.join(config.appsDir, 'svc-dashboard'),
      reason: 'modified',
      files: ['infraspec.yaml'],
    },
  ]);
  // All or nothing: the missing folder was not recreated either, and the edit stands.
  t.false(fs.existsSync(path.join(config.appsDir, 'svc-container-metrics')));
  t.is(fs.readFileSync(specFile, 'utf8'), edited);

  const dry = await install(plane, { force: true, dryRun: true });
  t.is(dry.status, 200);
  t.true(dry.body.dryRun);
  t.deepEqual(
    dry.body.services.map((s: { outcome: string }) => s.outcome),
    ['unchanged', 'updated', 'created'],
  );
  t.is(fs.readFileSync(specFile, 'utf8'), edited);

  // Only the services asked for are considered.
  const onlyStore = await install(plane, { services: ['svc-metrics-store'] });
  t.is(onlyStore.status, 200);
  t.deepEqual(
    onlyStore.body.services.map((s: { name: string }) => s.name),
    ['svc-metrics-store'],
  );

  const forced = await install(plane, { force: true });
  t.is(forced.status, 200);
  t.deepEqual(
    forced.body.services.map((s: { outcome: string }) => s.outcome),
    ['unchanged', 'updated', 'created'],
  );
  t.deepEqual(forced.body.services[1].overwritten, ['infraspec.yaml']);
  // The marker already lists what the install writes: only the edited file is replaced.
  t.deepEqual(forced.body.services[1].files, ['infraspec.yaml']);
  t.false(fs.readFileSync(specFile, 'utf8').includes('tuned by hand'));

  // A folder made by hand (no marker) is never written into without force.
  const mine = path.join(config.appsDir, 'svc-metrics-store');
  fs.rmSync(mine, { recursive: true });
  fs.mkdirSync(mine);
  fs.writeFileSync(path.join(mine, 'infraspec.yaml'), 'name: svc-metrics-store\nprocesses:\n  web:\n    port: 9090\n');
  const unmanaged = await install(plane, {});
  expectError(t, unmanaged, 409, 'managed_folder_modified');
  t.is(unmanaged.body.error.details.conflicts[0].reason, 'unmanaged');
});

test('bad input to the observability routes is a 4xx JSON error', async (t) => {
  const config = testConfig(t);
  const plane = await startTestControlPlane(t, config);
  expectError(t, await install(plane, { force: 'yes' }), 400, 'invalid_request');
  expectError(t, await install(plane, { services: ['svc-nope'] }), 400, 'invalid_request');
  expectError(t, await install(plane, { services: [] }), 400, 'invalid_request');
  expectError(t, await install(plane, { overwrite: true }), 400, 'invalid_request');
  expectError(t, await install(plane, ['svc-dashboard']), 400, 'invalid_request');
  const text = await request(`${plane.url}/api/observability/services/install`, {
    method: 'POST',
    body: 'force',
    headers: { 'content-type': 'text/plain' },
  });
  expectError(t, text, 400, 'invalid_request');
  const malformed = await request(`${plane.url}/api/observability/services/install`, {
    method: 'POST',
    body: '{"force":',
    headers: { 'content-type': 'application/json' },
  });
  t.is(malformed.status, 400);
  t.truthy(malformed.body.error.code);
  expectError(t, await request(`${plane.url}/api/tuning/recommendations?status=huge`), 400, 'invalid_request');
  expectError(t, await request(`${plane.url}/api/tuning/recommendations?app=a&app=b`), 400, 'invalid_request');
  expectError(t, await request(`${plane.url}/api/tuning/recommendations?colour=red`), 400, 'invalid_request');
  expectError(t, await request(`${plane.url}/api/tuning/recommendations?app=nobody`), 404, 'app_not_found');
  const wrongMethod = await request(`${plane.url}/api/observability/bundle`, { method: 'DELETE' });
  expectError(t, wrongMethod, 405, 'method_not_allowed');
  // Nothing was written by any refused request.
  t.false(MANAGED_SERVICE_NAMES.some((name) => fs.existsSync(path.join(config.appsDir, name))));
});
