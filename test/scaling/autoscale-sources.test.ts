// tier: full
/**
 * The autoscaler on the metrics an app does not get from the driver: `kafka_lag` read from a
 * stand-in Kafka exporter (a real HTTP server serving `kafka_consumergroup_lag`), summed over the
 * topic's partitions for the spec's consumer group; and `custom`, a metric each allocation exposes on
 * its metrics endpoint, only the series with the spec's labels. Seen through the app view.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import test, { type ExecutionContext } from 'ava';
import type { ControlPlane } from '../../wiring/control-plane.js';
import { startPlaneWithApps } from '../helpers/plane-with-apps.js';
import { request } from '../helpers/servers.js';
import { waitForChange } from '../helpers/wait-for.js';
import { waitForState } from '../routing/wake-harness.js';

const INTERVAL_MS = 200;
const WINDOW_MS = 2000;

/** The apps' server: health, and a metrics endpoint with a queue depth per queue (`QUEUE_DEPTH` for `outbound`). */
const SERVER = `import http from 'node:http';
const server = http.createServer((req, res) => {
  if (req.url === '/healthz') { res.end('ok'); return; }
  if (req.url === '/metrics') {
    res.setHeader('content-type', 'text/plain; version=0.0.4');
    res.end('# HELP queue_depth Jobs waiting.\\n# TYPE queue_depth gauge\\n'
      + 'queue_depth{queue="outbound"} ' + Number(process.env.QUEUE_DEPTH ?? 0) + '\\n'
      + 'queue_depth{queue="inbound"} 1000\\n');
    return;
  }
  res.end(String(process.pid));
});
server.keepAliveTimeout = 1000;
server.listen(Number(process.env.PORT), '127.0.0.1');
process.on('SIGTERM', () => { server.close(() => process.exit(0)); server.closeIdleConnections(); });
`;

const process_ = (lines: string) => `    port: 8080
    health:
      path: /healthz
      interval: 100ms
      timeout: 1s
    drain:
      timeout: 2s
    resources:
      memory: 96
${lines}`;

const LAGGED = `name: lagged
deploy: true
processes:
  consumer:
${process_(`    scaling:
      min: 1
      max: 4
      auto:
        metric: kafka_lag
        target: 100
        topic: orders
        group: lagged-consumer
`)}`;

const SHARED = `name: shared
deploy: true
processes:
  consumer:
${process_(`    scaling:
      min: 1
      max: 4
      auto:
        metric: kafka_lag
        target: 100
        topic: orders
`)}`;

const QUEUED = `name: queued
deploy: true
env:
  QUEUE_DEPTH: "25"
processes:
  web:
${process_(`    metrics:
      enabled: true
    scaling:
      min: 1
      max: 3
      auto:
        metric: custom
        name: queue_depth
        labels:
          queue: outbound
        target: 10
`)}`;

/** A stand-in Kafka exporter: serves `kafka_consumergroup_lag` per partition, and reports each scrape. */
async function kafkaExporter(t: ExecutionContext) {
  const lag: Record<string, Record<string, number[]>> = {
    'lagged-consumer': { orders: [120, 80, 50], payments: [7000] },
    audit: { orders: [9000, 9000, 9000] },
  };
  const listeners = new Set<() => void>();
  const server = http.createServer((req, res) => {
    const lines = [
      '# HELP kafka_consumergroup_lag Current Approximate Lag of a ConsumerGroup at Topic/Partition',
      '# TYPE kafka_consumergroup_lag gauge',
    ];
    for (const [group, topics] of Object.entries(lag))
      for (const [topic, partitions] of Object.entries(topics))
        partitions.forEach((value, partition) =>
          lines.push(
            `kafka_consumergroup_lag{consumergroup="${group}",partition="${partition}",topic="${topic}"} ${value}`,
          ),
        );
    lines.push(
      '# HELP kafka_brokers Number of Brokers in the Kafka Cluster.',
      '# TYPE kafka_brokers gauge',
      'kafka_brokers 3',
    );
    res.setHeader('content-type', 'text/plain; version=0.0.4');
    res.end(`${lines.join('\n')}\n`, () => {
      for (const listener of listeners) listener();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`,
    lag,
    /** A change source: each scrape the exporter answered. */
    scraped: (listener: () => void) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

async function jobCount(plane: ControlPlane, app: string, process: string): Promise<number> {
  const scheduler = await plane.reconcilers.targets.get();
  const job = (await scheduler.listJobs({ app })).find((j) => j.status === 'running');
  return job?.spec.taskGroups.find((g) => g.name === process)?.count ?? 0;
}

async function scalingOf(plane: ControlPlane, app: string, process: string): Promise<any> {
  const view = await request(`${plane.url}/api/apps/${app}`);
  return view.body.scaling.find((s: any) => s.process === process);
}

test('kafka_lag follows the consumer group lag of a topic from the exporter, summed over its partitions; custom follows the labelled series of a metric the app exposes', async (t) => {
  const exporter = await kafkaExporter(t);
  const { plane } = await startPlaneWithApps(t, {
    server: SERVER,
    apps: [
      { name: 'lagged', spec: LAGGED },
      { name: 'shared', spec: SHARED },
      { name: 'queued', spec: QUEUED },
    ],
    env: {
      SVC_AUTOSCALE_INTERVAL: `${INTERVAL_MS}ms`,
      SVC_AUTOSCALE_WINDOW: `${WINDOW_MS / 1000}s`,
      SVC_KAFKA_EXPORTER_URL: exporter.url,
    },
  });

  // kafka_lag: 120 + 80 + 50 behind on orders for lagged-consumer (not audit's, not payments'),
  // target 100 per allocation: 3 allocations.
  await waitForState(plane, async () => (await jobCount(plane, 'lagged', 'consumer')) === 3, 'lagged at 3', 30_000);
  const out = plane.autoscaler.lastChange('lagged', 'consumer')!;
  t.like(out, { source: 'autoscaler', from: 1, to: 3, metric: 'kafka_lag', target: 100, value: 250 });
  t.regex(out.reason, /^scale out: kafka_lag 250 per allocation over 1 \(target 100\)$/);
  const lagged = await scalingOf(plane, 'lagged', 'consumer');
  t.like(lagged, {
    mode: 'autoscaled',
    auto: { metric: 'kafka_lag', target: 100, topic: 'orders', group: 'lagged-consumer' },
  });

  // Two groups read orders and the spec names neither: no sample, and the view says what to set.
  const shared = await waitForChange(
    [exporter.scraped],
    async () => {
      const view = await scalingOf(plane, 'shared', 'consumer');
      return view?.reason?.includes('consumer groups') ? view : undefined;
    },
    { what: 'the shared consumer evaluated' },
  );
  t.is(
    shared.reason,
    'no kafka_lag sample: 2 consumer groups read orders (audit, lagged-consumer): set scaling.auto.group',
  );
  t.is(shared.value, null);
  t.is(await jobCount(plane, 'shared', 'consumer'), 1);

  // custom: each allocation exposes queue_depth{queue="outbound"} 25 (and inbound 1000, which the
  // labels leave out); target 10 per allocation: up to max, 3.
  await waitForState(plane, async () => (await jobCount(plane, 'queued', 'web')) === 3, 'queued at 3', 30_000);
  const custom = plane.autoscaler.lastChange('queued', 'web')!;
  t.like(custom, { source: 'autoscaler', to: 3, metric: 'custom', target: 10, value: 25 });
  t.like(await scalingOf(plane, 'queued', 'web'), {
    auto: { metric: 'custom', target: 10, name: 'queue_depth', labels: { queue: 'outbound' } },
  });

  // The lag is worked off: one window later the consumer is back at its minimum.
  exporter.lag['lagged-consumer']!.orders = [0, 0, 0];
  await waitForState(
    plane,
    async () => (await jobCount(plane, 'lagged', 'consumer')) === 1,
    'lagged back at 1',
    30_000,
  );
  const back = plane.autoscaler.lastChange('lagged', 'consumer')!;
  t.like(back, { source: 'autoscaler', to: 1, metric: 'kafka_lag', value: 0 });
});
