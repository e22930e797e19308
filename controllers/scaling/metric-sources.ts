/**
 * The autoscaler's exposition-format sources (ADR 0233): the consumer lag of a Kafka topic from the
 * exporter the platform names (`kafka_consumergroup_lag{consumergroup,topic,partition}`, summed over
 * the topic's partitions), and a custom metric from each allocation's metrics endpoint (the sum of
 * its series that carry the spec's labels, averaged over the allocations that answered).
 */
import { isLiveInstance, metricsProcesses } from '../../domain/observability/index.js';
import type { Registry } from '../../domain/registry/index.js';
import type { CanonicalAppSpec } from '../../domain/spec/index.js';
import { scrapeExposition, sumMetric, type Exposition } from '../../platform/metrics/exposition-reader.js';

/** The standard consumer-lag family of a Kafka exporter (danielqsj/kafka_exporter). */
export const KAFKA_LAG_METRIC = 'kafka_consumergroup_lag';

/** A sample of the autoscaler: the metric summed over `sampled` allocations, or why there is none. */
export interface MetricSample {
  readonly total: number | undefined;
  readonly sampled: number;
  readonly missing?: string;
}

/**
 * The lag of `group` (or of the one group the exporter reports) on `topic`, summed over its
 * partitions, spread over the `current` allocations that consume it.
 */
export async function kafkaLagSample(options: {
  readonly exporterUrl: string | undefined;
  readonly topic: string;
  readonly group: string | undefined;
  readonly current: number;
  readonly timeoutMs: number;
}): Promise<MetricSample> {
  const { exporterUrl, topic, group } = options;
  if (exporterUrl === undefined)
    return { total: undefined, sampled: 0, missing: 'no Kafka exporter is configured (SVC_KAFKA_EXPORTER_URL)' };
  let exposition: Exposition;
  try {
    exposition = await scrapeExposition(exporterUrl, options.timeoutMs);
  } catch (error) {
    return { total: undefined, sampled: 0, missing: `the Kafka exporter ${(error as Error).message}` };
  }
  let consumer = group;
  if (consumer === undefined) {
    const groups = new Set(
      (exposition.find((f) => f.name === KAFKA_LAG_METRIC)?.metrics ?? [])
        .filter((m) => m.labels?.topic === topic && m.labels.consumergroup !== undefined)
        .map((m) => m.labels!.consumergroup!),
    );
    if (groups.size > 1)
      return {
        total: undefined,
        sampled: 0,
        missing: `${groups.size} consumer groups read ${topic} (${[...groups].sort().join(', ')}): set scaling.auto.group`,
      };
    consumer = [...groups][0];
    if (consumer === undefined)
      return { total: undefined, sampled: 0, missing: `the Kafka exporter reports no consumer group on ${topic}` };
  }
  const reading = sumMetric(exposition, KAFKA_LAG_METRIC, { topic, consumergroup: consumer });
  if (reading.value === undefined)
    return { total: undefined, sampled: 0, missing: `the Kafka exporter has ${reading.missing}` };
  // Lag is negative only while an exporter reads offsets mid-commit: it is no backlog.
  return { total: Math.max(reading.value, 0), sampled: Math.max(options.current, 1) };
}

/** Custom metric `name` (series with `labels`) from the metrics endpoint of each live allocation of `process`. */
export async function customSample(options: {
  readonly registry: Registry;
  readonly spec: CanonicalAppSpec;
  readonly process: string;
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
}): Promise<MetricSample> {
  const { name, labels } = options;
  const endpoint = metricsProcesses(options.spec).find((p) => p.process === options.process);
  if (endpoint === undefined) return { total: undefined, sampled: 0, missing: 'the process has no metrics endpoint' };
  const instances = (await options.registry.instances(endpoint.service)).filter(isLiveInstance);
  if (instances.length === 0) return { total: undefined, sampled: 0, missing: 'no allocation serves metrics yet' };
  const readings = await Promise.all(
    instances.map(async (instance) => {
      try {
        const url = `http://${instance.address}:${instance.port}${endpoint.metricsPath}`;
        return sumMetric(await scrapeExposition(url, options.timeoutMs), name, labels);
      } catch (error) {
        return { missing: `its metrics endpoint ${(error as Error).message}` };
      }
    }),
  );
  const values = readings.flatMap((r) => (r.value === undefined ? [] : [r.value]));
  if (values.length === 0) {
    const first = readings.find((r) => r.value === undefined);
    return { total: undefined, sampled: 0, missing: `no allocation reports it (${first?.missing ?? 'no answer'})` };
  }
  return { total: values.reduce((sum, v) => sum + v, 0), sampled: values.length };
}
