// tier: full
import fs from 'node:fs';
import path from 'node:path';
import test, { type ExecutionContext } from 'ava';
import YAML from 'yaml';
import {
  ALERT_RULES,
  HOST_GATEWAY,
  instanceTarget,
  metricsProcesses,
  renderAlertRules,
  renderScrapeConfig,
  RULES_FILE,
  scrapeAddressing,
  scrapeTargetGroups,
  splitHostPort,
  TOKEN_FILE,
  type ScrapeConfigInput,
} from '../../domain/observability/index.js';
import type { ServiceInstance } from '../../domain/registry/index.js';
import { validateInfraspec, type CanonicalAppSpec } from '../../domain/spec/index.js';
import { tempDir } from '../helpers/temp-dir.js';
import { promtool } from './promtool.js';
import { sourceDir } from '../helpers/repo.js';

const update = process.env.UPDATE_SNAPSHOTS === '1';
const snapshotDir = path.join(sourceDir(import.meta.dirname), '__snapshots__');

function snapshot(t: ExecutionContext, name: string, actual: string): void {
  const file = path.join(snapshotDir, name);
  if (update) fs.writeFileSync(file, actual);
  t.true(fs.existsSync(file), `${name} exists (run with UPDATE_SNAPSHOTS=1 to create it)`);
  t.is(actual, fs.readFileSync(file, 'utf8'));
}

function spec(yaml: string): CanonicalAppSpec {
  const result = validateInfraspec(yaml);
  if (!result.spec) throw new Error(result.findings.map((f) => f.message).join('; '));
  return result.spec;
}

function instance(
  service: string,
  port: number,
  status: 'passing' | 'warning' | 'critical' | 'none',
  address = '127.0.0.1',
): ServiceInstance {
  return {
    id: `alloc-${port}-${service}`,
    service,
    app: service.split('-')[0]!,
    process: 'web',
    allocationId: `alloc-${port}`,
    address,
    port,
    tags: [],
    checks: status === 'none' ? [] : [{ id: 'c', name: 'HTTP GET /healthz', status, output: '' }],
  };
}

const addressingCases: {
  title: string;
  bindHost: string;
  port: number;
  override?: string;
  target: string;
  alias: string;
}[] = [
  {
    title: 'an API on 127.0.0.1 is scraped at host.docker.internal',
    bindHost: '127.0.0.1',
    port: 8800,
    target: `${HOST_GATEWAY}:8800`,
    alias: HOST_GATEWAY,
  },
  {
    title: 'an API on localhost is scraped at host.docker.internal',
    bindHost: 'localhost',
    port: 8801,
    target: `${HOST_GATEWAY}:8801`,
    alias: HOST_GATEWAY,
  },
  {
    title: 'an API on ::1 is scraped at host.docker.internal',
    bindHost: '::1',
    port: 8800,
    target: `${HOST_GATEWAY}:8800`,
    alias: HOST_GATEWAY,
  },
  {
    title: 'an API on every interface is scraped at host.docker.internal',
    bindHost: '0.0.0.0',
    port: 8800,
    target: `${HOST_GATEWAY}:8800`,
    alias: HOST_GATEWAY,
  },
  {
    title: 'an API on a routable address is scraped there',
    bindHost: '10.0.0.4',
    port: 8800,
    target: '10.0.0.4:8800',
    alias: '10.0.0.4',
  },
  {
    title: 'an API on a routable IPv6 address is scraped in brackets',
    bindHost: 'fd00::4',
    port: 8800,
    target: '[fd00::4]:8800',
    alias: 'fd00::4',
  },
  {
    title: 'SVC_OBSERVABILITY_TARGET overrides a loopback bind',
    bindHost: '127.0.0.1',
    port: 8800,
    override: '127.0.0.1:9999',
    target: '127.0.0.1:9999',
    alias: '127.0.0.1',
  },
  {
    title: 'SVC_OBSERVABILITY_TARGET overrides a routable bind',
    bindHost: '10.0.0.4',
    port: 8800,
    override: 'svc.internal:8800',
    target: 'svc.internal:8800',
    alias: 'svc.internal',
  },
];

for (const c of addressingCases) {
  test(`scrape addressing: ${c.title}`, (t) => {
    const addressing = scrapeAddressing({ bindHost: c.bindHost, port: c.port, override: c.override });
    t.is(addressing.controlPlaneTarget, c.target);
    t.is(addressing.hostAlias, c.alias);
  });
}

test('instance targets rewrite loopback addresses to the host alias and keep others', (t) => {
  const addressing = scrapeAddressing({ bindHost: '127.0.0.1', port: 8800 });
  t.is(instanceTarget(addressing, '127.0.0.1', 4100), `${HOST_GATEWAY}:4100`);
  t.is(instanceTarget(addressing, '0.0.0.0', 4100), `${HOST_GATEWAY}:4100`);
  t.is(instanceTarget(addressing, '10.1.2.3', 4100), '10.1.2.3:4100');
});

test('splitHostPort accepts host:port and [v6]:port and refuses the rest', (t) => {
  t.deepEqual(splitHostPort('prom.example:9090'), { host: 'prom.example', port: 9090 });
  t.deepEqual(splitHostPort('[::1]:8800'), { host: '[::1]', port: 8800 });
  for (const bad of ['', 'host', ':80', 'host:0', 'host:70000', 'http://host:80', 'host:80/path', '-host:80'])
    t.is(splitHostPort(bad), undefined, bad);
});

test('metricsProcesses lists long-running processes with metrics.enabled, through the companion service for a separate metrics.port', (t) => {
  const app = spec(`name: shop
processes:
  web:
    port: 8080
    metrics: { enabled: true, path: /app-metrics }
  admin:
    port: 8081
  queue:
    command: node worker.mjs
    metrics: { enabled: true, port: 9400 }
  noport:
    command: node other.mjs
    metrics: { enabled: true }
  nightly:
    schedule: "0 2 * * *"
    command: node nightly.mjs
    metrics: { enabled: true }
  sidecar:
    port: 8082
    metrics: { enabled: true, port: 8082 }
`);
  t.deepEqual(metricsProcesses(app), [
    { app: 'shop', process: 'queue', service: 'shop-queue-metrics', metricsPath: '/metrics' },
    { app: 'shop', process: 'sidecar', service: 'shop-sidecar', metricsPath: '/metrics' },
    { app: 'shop', process: 'web', service: 'shop-web', metricsPath: '/app-metrics' },
  ]);
});

test('scrapeTargetGroups keeps processes with live instances and leaves out critical and absent ones', (t) => {
  const addressing = scrapeAddressing({ bindHost: '127.0.0.1', port: 8800 });
  const processes = [
    { app: 'alpha', process: 'web', service: 'alpha-web', metricsPath: '/metrics' },
    { app: 'beta', process: 'web', service: 'beta-web', metricsPath: '/m' },
    { app: 'gamma', process: 'web', service: 'gamma-web', metricsPath: '/metrics' },
    { app: 'delta', process: 'worker', service: 'delta-worker-metrics', metricsPath: '/metrics' },
  ];
  const instances = new Map<string, ServiceInstance[]>([
    [
      'alpha-web',
      [
        instance('alpha-web', 4002, 'passing'),
        instance('alpha-web', 4001, 'warning'),
        instance('alpha-web', 4003, 'critical'),
      ],
    ],
    ['beta-web', [instance('beta-web', 4100, 'critical')]],
    ['delta-worker-metrics', [instance('delta-worker-metrics', 4200, 'none')]],
  ]);
  t.deepEqual(scrapeTargetGroups(processes, instances, addressing), [
    {
      app: 'alpha',
      process: 'web',
      metricsPath: '/metrics',
      targets: [`${HOST_GATEWAY}:4001`, `${HOST_GATEWAY}:4002`],
    },
    { app: 'delta', process: 'worker', metricsPath: '/metrics', targets: [`${HOST_GATEWAY}:4200`] },
  ]);
});

const input: ScrapeConfigInput = {
  controlPlaneTarget: `${HOST_GATEWAY}:8800`,
  groups: [
    {
      app: 'alpha',
      process: 'web',
      metricsPath: '/metrics',
      targets: [`${HOST_GATEWAY}:4001`, `${HOST_GATEWAY}:4002`],
    },
    { app: 'delta', process: 'worker', metricsPath: '/custom', targets: [`${HOST_GATEWAY}:4200`] },
  ],
  environment: 'production',
  metricsNeedToken: false,
};

test('the scrape config of two processes matches __snapshots__/prometheus.yml', (t) => {
  snapshot(t, 'prometheus.yml', renderScrapeConfig(input));
});

test('the scrape config of a protected /metrics reads the token from a file and matches __snapshots__/prometheus.token.yml', (t) => {
  const yaml = renderScrapeConfig({ ...input, groups: [], metricsNeedToken: true });
  snapshot(t, 'prometheus.token.yml', yaml);
  const parsed = YAML.parse(yaml);
  t.deepEqual(parsed.scrape_configs[0].authorization, { type: 'Bearer', credentials_file: TOKEN_FILE });
  t.deepEqual(parsed.scrape_configs[1].static_configs, []);
});

async function checkConfig(t: ExecutionContext, yaml: string, withToken: boolean): Promise<void> {
  const dir = tempDir(t);
  fs.writeFileSync(path.join(dir, 'prometheus.yml'), yaml);
  fs.mkdirSync(path.join(dir, path.dirname(RULES_FILE)), { recursive: true });
  fs.writeFileSync(path.join(dir, RULES_FILE), renderAlertRules(ALERT_RULES));
  if (withToken) {
    fs.mkdirSync(path.join(dir, path.dirname(TOKEN_FILE)), { recursive: true });
    fs.writeFileSync(path.join(dir, TOKEN_FILE), 'a-scoped-token\n');
  }
  const run = await promtool(dir, 'check', 'config', 'prometheus.yml');
  t.is(run.code, 0, run.output);
  t.regex(run.output, /SUCCESS: 1 rule files found/);
}

test('promtool accepts the generated scrape config with its rules file', async (t) => {
  await checkConfig(t, renderScrapeConfig(input), false);
});

test('promtool accepts the generated scrape config of a protected /metrics once the token file exists', async (t) => {
  await checkConfig(t, renderScrapeConfig({ ...input, groups: [], metricsNeedToken: true }), true);
});
