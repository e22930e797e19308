/**
 * The managed observability apps: the metrics store, the dashboard and the container-metrics
 * collector, each an app folder (`infraspec.yaml`, a `Dockerfile` and its configuration) written
 * under the apps folder by `POST /api/observability/services/install`.
 *
 * They are built like any app without `repo.url`: from their folder in the apps repository, natively
 * on the host (the Dockerfile's FROM is a note there; the spec's command runs the host's binary).
 */
import YAML from 'yaml';
import { RULES_FILE } from './scrape-config.js';

/** Names of the managed apps (their folders under the apps folder). */
export const ManagedServiceName = {
  metricsStore: 'svc-metrics-store',
  dashboard: 'svc-dashboard',
  containerMetrics: 'svc-container-metrics',
} as const;
export type ManagedServiceName = (typeof ManagedServiceName)[keyof typeof ManagedServiceName];

/** Every managed app, in install order. */
export const MANAGED_SERVICE_NAMES: readonly ManagedServiceName[] = [
  ManagedServiceName.metricsStore,
  ManagedServiceName.dashboard,
  ManagedServiceName.containerMetrics,
];

/** Retention of the managed metrics store: whichever limit is reached first drops the oldest blocks. */
export const METRICS_RETENTION = { time: '30d', size: '8GB' } as const;

/** Fixed host ports of the managed apps, so the dashboard and a generated scrape config can name them. */
export const MANAGED_PORTS: Readonly<Record<ManagedServiceName, number>> = {
  'svc-metrics-store': 9090,
  'svc-dashboard': 3000,
  // Clear of 8080, where cAdvisor listens by default and many apps (the sample hello-web) do too.
  'svc-container-metrics': 9338,
};

/** One file of a managed app folder, by path relative to the folder. */
export interface ManagedFile {
  readonly path: string;
  readonly content: string;
}

/** One managed app: its spec (as written) and every file of its folder. */
export interface ManagedService {
  readonly name: ManagedServiceName;
  readonly purpose: string;
  /** The infraspec as an object (the same document as the `infraspec.yaml` file). */
  readonly spec: Record<string, unknown>;
  readonly files: readonly ManagedFile[];
}

/** What the managed apps are generated from. */
export interface ManagedServicesInput {
  /** The scrape config (`prometheus.yml`) the metrics store loads. */
  readonly scrapeConfigYaml: string;
  /** The alert rules it loads from {@link RULES_FILE}. */
  readonly alertRulesYaml: string;
  /** The starter dashboard, Grafana JSON. */
  readonly dashboardJson: string;
  /** The datasource provisioning document (the same content as the bundle's JSON file). */
  readonly datasource: Record<string, unknown>;
}

/** The file name of a spec in an app folder. */
export const SPEC_FILE = 'infraspec.yaml';

function renderSpec(spec: Record<string, unknown>, header: string): string {
  const doc = new YAML.Document(spec);
  doc.commentBefore = ` ${header}\n Written by svc (POST /api/observability/services/install); commit it, then deploy it like any app.`;
  return doc.toString({ lineWidth: 0 });
}

function dockerfile(name: string, image: string, dir: string): string {
  return [
    `# ${name}: on the local driver the host is the base image (FROM and COPY are notes) and the`,
    "# spec's command runs the binary installed on the host; a container engine builds this folder on",
    '# the upstream image instead.',
    `FROM ${image}`,
    `WORKDIR ${dir}`,
    `COPY . ${dir}/`,
    '',
  ].join('\n');
}

function metricsStore(input: ManagedServicesInput): ManagedService {
  const name = ManagedServiceName.metricsStore;
  const port = MANAGED_PORTS[name];
  const spec = {
    name,
    deploy: true,
    processes: {
      web: {
        port,
        hostPort: port,
        command: [
          'prometheus',
          '--config.file=prometheus.yml',
          '--storage.tsdb.path="$HOME/.local/share/svc-metrics-store"',
          `--storage.tsdb.retention.time=${METRICS_RETENTION.time}`,
          `--storage.tsdb.retention.size=${METRICS_RETENTION.size}`,
          '--web.listen-address="127.0.0.1:$PORT"',
        ].join(' '),
        health: { path: '/-/healthy', interval: '10s', timeout: '5s' },
        metrics: { enabled: true, path: '/metrics' },
        drain: { signal: 'SIGTERM', timeout: '30s' },
        resources: { cpu: 500, memory: 1024 },
        tuning: { mode: 'advisory', limits: { min: { memory: 512 }, max: { memory: 4096 } } },
      },
    },
  };
  return {
    name,
    purpose: `Metrics store (Prometheus): scrapes the control plane and metrics-enabled processes, evaluates the svc alert rules; keeps ${METRICS_RETENTION.time} and at most ${METRICS_RETENTION.size}.`,
    spec,
    files: [
      {
        path: SPEC_FILE,
        content: renderSpec(
          spec,
          'svc-metrics-store: the managed metrics store (Prometheus), 30-day and 8 GB retention.',
        ),
      },
      { path: 'Dockerfile', content: dockerfile(name, 'prom/prometheus:v2.53.0', '/etc/prometheus') },
      { path: 'prometheus.yml', content: input.scrapeConfigYaml },
      { path: RULES_FILE, content: input.alertRulesYaml },
      // A scrape token, when /metrics needs one, lives next to prometheus.yml and is never committed.
      { path: '.gitignore', content: 'secrets/\n' },
    ],
  };
}

function dashboard(input: ManagedServicesInput): ManagedService {
  const name = ManagedServiceName.dashboard;
  const port = MANAGED_PORTS[name];
  const spec = {
    name,
    deploy: true,
    processes: {
      web: {
        port,
        hostPort: port,
        command: [
          'grafana server',
          '--homepath="${GF_PATHS_HOME:-/usr/share/grafana}"',
          'cfg:default.server.http_addr=127.0.0.1',
          'cfg:default.server.http_port="$PORT"',
          'cfg:default.paths.provisioning="$PWD/provisioning"',
          'cfg:default.paths.data="$HOME/.local/share/svc-dashboard"',
        ].join(' '),
        health: { path: '/api/health', interval: '10s', timeout: '5s' },
        metrics: { enabled: true, path: '/metrics' },
        resources: { cpu: 200, memory: 256 },
      },
    },
  };
  const provider = {
    apiVersion: 1,
    providers: [{ name: 'svc', type: 'file', disableDeletion: false, options: { path: '$PWD/dashboards' } }],
  };
  return {
    name,
    purpose: 'Dashboard (Grafana) with the metrics store as its datasource and the svc platform dashboard.',
    spec,
    files: [
      {
        path: SPEC_FILE,
        content: renderSpec(spec, 'svc-dashboard: the managed dashboard (Grafana) reading svc-metrics-store.'),
      },
      { path: 'Dockerfile', content: dockerfile(name, 'grafana/grafana-oss:11.1.0', '/etc/grafana') },
      {
        path: 'provisioning/datasources/svc-metrics.yaml',
        content: YAML.stringify(input.datasource, { lineWidth: 0 }),
      },
      { path: 'provisioning/dashboards/svc.yaml', content: YAML.stringify(provider, { lineWidth: 0 }) },
      { path: 'dashboards/svc-platform.json', content: input.dashboardJson },
    ],
  };
}

function containerMetrics(): ManagedService {
  const name = ManagedServiceName.containerMetrics;
  const port = MANAGED_PORTS[name];
  const spec = {
    name,
    deploy: true,
    processes: {
      web: {
        port,
        hostPort: port,
        command:
          'cadvisor -listen_ip=127.0.0.1 -port="$PORT" -housekeeping_interval=30s -docker_only=false -store_container_labels=false',
        health: { path: '/healthz', interval: '10s', timeout: '5s' },
        metrics: { enabled: true, path: '/metrics' },
        resources: { cpu: 200, memory: 256 },
      },
    },
  };
  return {
    name,
    purpose:
      "Container-metrics collector (cAdvisor): per-cgroup CPU, memory and I/O of the host's processes and containers.",
    spec,
    files: [
      {
        path: SPEC_FILE,
        content: renderSpec(spec, 'svc-container-metrics: the managed container-metrics collector (cAdvisor).'),
      },
      { path: 'Dockerfile', content: dockerfile(name, 'gcr.io/cadvisor/cadvisor:v0.49.1', '/srv/cadvisor') },
    ],
  };
}

/** The three managed apps with every file of their folders. */
export function managedServices(input: ManagedServicesInput): ManagedService[] {
  return [metricsStore(input), dashboard(input), containerMetrics()];
}
