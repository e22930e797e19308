/**
 * Autoscaling rules of an app spec: a metric this platform can read (a custom metric on a process
 * with a metrics endpoint, Kafka lag when the control plane has an exporter), requests metrics only
 * on the process the wake gateway serves, autoscaling only for long-running processes, fields of
 * another metric warned about, and room between `scaling.min` and `scaling.max` (ADR 0193, ADR 0233).
 */
import { describeValue, FindingSeverity, type PathSegment } from '../finding.js';
import type { RawFinding } from '../raw-finding.js';
import { SpecRule } from './spec-rule.js';
import { type Fields, isInteger, recordAt } from '../raw-fields.js';

/** Metrics counted by the wake gateway: only the process that receives the app's public endpoints has them. */
const REQUEST_METRICS: ReadonlySet<unknown> = new Set(['requests_in_flight', 'requests_per_second']);

/** Metrics the autoscaler follows. */
const FOLLOWED_METRICS: ReadonlySet<unknown> = new Set(['cpu', 'memory', 'kafka_lag', 'custom', ...REQUEST_METRICS]);

/** Fields of `scaling.auto` that only one metric reads. */
const METRIC_FIELDS: ReadonlyArray<{ readonly field: string; readonly metric: string }> = [
  { field: 'topic', metric: 'kafka_lag' },
  { field: 'group', metric: 'kafka_lag' },
  { field: 'name', metric: 'custom' },
  { field: 'labels', metric: 'custom' },
];

/** What the autoscaling rules know of the platform that will run the spec. */
export interface AutoscaleContext {
  /** False when the control plane has no Kafka exporter to read lag from; undefined when not known (offline). */
  readonly kafkaLagSource?: boolean | undefined;
}

/** Why `metric` has no source for `process`, or undefined when it has one (or it is not known). */
function missingSource(metric: unknown, process: Fields, context: AutoscaleContext): string | undefined {
  if (metric === 'kafka_lag' && context.kafkaLagSource === false)
    return 'this control plane reads no Kafka consumer lag: set SVC_KAFKA_EXPORTER_URL to the metrics URL of a Kafka exporter (kafka_consumergroup_lag), or scale on cpu or memory instead';
  if (metric === 'custom') {
    const metrics = recordAt(process, 'metrics');
    if (metrics?.enabled !== true)
      return "a custom metric is read from the process's metrics endpoint, and the process exposes none: set metrics.enabled: true";
    if (metrics.port === undefined && process.port === undefined)
      return "a custom metric is read from the process's metrics endpoint, and the process has neither a port nor metrics.port: set metrics.port";
  }
  return undefined;
}

/** The process that receives the public endpoints, as `publicProcess` picks it on a canonical spec: `web` with a port, else the first by name with one. */
function publicProcessOf(processes: ReadonlyArray<[string, Fields]>): string | undefined {
  const withPort = processes
    .filter(([, p]) => p.port !== undefined)
    .map(([name]) => name)
    .sort();
  return withPort.includes('web') ? 'web' : withPort[0];
}

/** Autoscaling findings of every process of `spec`. */
export function checkAutoscaling(
  spec: Fields,
  processes: ReadonlyArray<[string, Fields]>,
  out: RawFinding[],
  context: AutoscaleContext = {},
): void {
  const hasEndpoints = Array.isArray(spec.endpoints) && spec.endpoints.length > 0;
  const served = hasEndpoints ? publicProcessOf(processes) : undefined;
  for (const [name, process] of processes) {
    const at: PathSegment[] = ['processes', name, 'scaling'];
    const scaling = recordAt(process, 'scaling');
    if (scaling === undefined) continue;
    const min = isInteger(scaling.min) ? scaling.min : 1;
    const max = isInteger(scaling.max) ? scaling.max : undefined;
    const auto = recordAt(scaling, 'auto');
    if (auto === undefined) {
      if (max !== undefined && max > min)
        out.push({
          path: [...at, 'max'],
          rule: SpecRule.autoscaleRange,
          severity: FindingSeverity.warning,
          detail: `${max} takes effect only with scaling.auto (the metric to scale on); without it the process keeps ${min} allocation(s): add scaling.auto or remove max`,
        });
      continue;
    }
    const metric = auto.metric;
    if (process.schedule !== undefined || process.function !== undefined) {
      out.push({
        path: [...at, 'auto'],
        rule: SpecRule.autoscaleLongRunning,
        detail: `applies to long-running processes; this ${process.schedule !== undefined ? 'scheduled' : 'function'} process runs once per ${process.schedule !== undefined ? 'schedule' : 'call'}: remove scaling.auto`,
      });
      continue;
    }
    if (metric === 'custom' && auto.name === undefined) {
      out.push({
        path: [...at, 'auto'],
        rule: SpecRule.autoscaleCustomName,
        detail:
          'follows a custom metric and names none: set name to the metric the process exposes on its metrics endpoint',
      });
      continue;
    }
    const missing = missingSource(metric, process, context);
    if (missing !== undefined) {
      out.push({
        path: [...at, 'auto', 'metric'],
        rule: SpecRule.autoscaleMetricSource,
        detail: `${describeValue(metric)} cannot be followed: ${missing}`,
      });
      continue;
    }
    if (REQUEST_METRICS.has(metric) && served !== name) {
      const why = !hasEndpoints
        ? 'the app declares no endpoints'
        : served === undefined
          ? 'no process has a port'
          : `the app's endpoints are served by processes.${served}`;
      out.push({
        path: [...at, 'auto', 'metric'],
        rule: SpecRule.autoscaleRequestMetric,
        detail: `${describeValue(metric)} counts the requests the wake gateway forwards to this process, and it forwards none (${why}); scale on cpu or memory instead`,
      });
      continue;
    }
    // An unknown metric is the schema's to report; a sourceless one was refused above.
    if (!FOLLOWED_METRICS.has(metric)) continue;
    for (const { field, metric: reader } of METRIC_FIELDS)
      if (auto[field] !== undefined && metric !== reader)
        out.push({
          path: [...at, 'auto', field],
          rule: SpecRule.fieldInert,
          severity: FindingSeverity.warning,
          detail: `is read only by the ${reader} metric; ${describeValue(metric)} ignores it: remove ${field}`,
        });
    const ceiling = max ?? Math.max(min, 1);
    if (ceiling <= min)
      out.push({
        path: max === undefined ? [...at, 'auto'] : [...at, 'max'],
        rule: SpecRule.autoscaleRange,
        severity: FindingSeverity.warning,
        detail:
          max === undefined
            ? `has no room: scaling.max is not set, so the process keeps ${min} allocation(s); set scaling.max above scaling.min`
            : `${max} leaves the autoscaler no room above scaling.min (${min}); set scaling.max above scaling.min`,
      });
  }
}
