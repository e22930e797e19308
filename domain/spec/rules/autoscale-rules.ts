/**
 * Autoscaling rules of an app spec: a metric this platform can read, requests metrics only on the
 * process the wake gateway serves, autoscaling only for long-running processes, and room between
 * `scaling.min` and `scaling.max` (ADR 0193).
 */
import { describeValue, FindingSeverity, type PathSegment } from '../finding.js';
import type { RawFinding } from '../raw-finding.js';
import { SpecRule } from './spec-rule.js';
import { type Fields, isInteger, recordAt } from '../raw-fields.js';

/** Metrics counted by the wake gateway: only the process that receives the app's public endpoints has them. */
const REQUEST_METRICS: ReadonlySet<unknown> = new Set(['requests_in_flight', 'requests_per_second']);

/** Metrics the autoscaler follows. */
const FOLLOWED_METRICS: ReadonlySet<unknown> = new Set(['cpu', 'memory', ...REQUEST_METRICS]);

/** Metrics whose source this platform cannot read (no Kafka client, no custom metric source). */
const SOURCELESS_METRICS: Readonly<Record<string, string>> = {
  kafka_lag:
    'this platform reads no Kafka consumer lag (no Kafka source can be configured in this build); scale on cpu, memory, requests_in_flight or requests_per_second instead',
  custom:
    'this platform has no custom metric source (none can be configured in this build); scale on cpu, memory, requests_in_flight or requests_per_second instead',
};

/** The process that receives the public endpoints, as `publicProcess` picks it on a canonical spec: `web` with a port, else the first by name with one. */
function publicProcessOf(processes: ReadonlyArray<[string, Fields]>): string | undefined {
  const withPort = processes
    .filter(([, p]) => p.port !== undefined)
    .map(([name]) => name)
    .sort();
  return withPort.includes('web') ? 'web' : withPort[0];
}

/** Autoscaling findings of every process of `spec`. */
export function checkAutoscaling(spec: Fields, processes: ReadonlyArray<[string, Fields]>, out: RawFinding[]): void {
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
    // kafka_lag without a topic is already refused by autoscale.kafkaTopic.
    if (
      typeof metric === 'string' &&
      metric in SOURCELESS_METRICS &&
      !(metric === 'kafka_lag' && auto.topic === undefined)
    ) {
      out.push({
        path: [...at, 'auto', 'metric'],
        rule: SpecRule.autoscaleMetricSource,
        detail: `${describeValue(metric)} cannot be followed: ${SOURCELESS_METRICS[metric]}`,
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
    if (auto.topic !== undefined)
      out.push({
        path: [...at, 'auto', 'topic'],
        rule: SpecRule.fieldInert,
        severity: FindingSeverity.warning,
        detail: `is read only by the kafka_lag metric; ${describeValue(metric)} ignores it: remove topic`,
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
