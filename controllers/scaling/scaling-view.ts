/**
 * How each process of an app scales, as the app page and `svc status` show it: its bounds from the
 * spec, the autoscaler's last evaluation, and the last change of its count with the reason.
 */
import type { CanonicalAppSpec } from '../../domain/spec/index.js';
import { isGatewayManaged } from '../../domain/routing/index.js';
import type { ScaleChange } from '../routing/gateway-scale.js';
import type { ProcessScalingStatus } from './autoscaler.js';

/** What the scaling view reads at run time (the autoscaler implements it). */
export interface ScalingReadModel {
  status(app: string): readonly ProcessScalingStatus[];
  lastChange(app: string, process: string): ScaleChange | undefined;
  /** Stabilization window, in ms. */
  readonly windowMs: number;
  /** Period between evaluations, in ms (0: the autoscaler is off). */
  readonly intervalMs: number;
}

/** One long-running process's scaling. */
export interface ProcessScalingView {
  readonly process: string;
  /** fixed: min allocations; scale_to_zero: 0 to 1 through the wake gateway; autoscaled: min to max on a metric. */
  readonly mode: 'fixed' | 'scale_to_zero' | 'autoscaled';
  readonly min: number;
  readonly max: number | null;
  readonly per_region: number | null;
  /** The policy: its metric and target, and where the metric is read (topic and group of kafka_lag; name and labels of custom). */
  readonly auto: {
    readonly metric: string;
    readonly target: number;
    readonly topic?: string;
    readonly group?: string;
    readonly name?: string;
    readonly labels?: Readonly<Record<string, string>>;
  } | null;
  /** The metric's average per allocation at the last evaluation. */
  readonly value: number | null;
  /** The count the last evaluation asked for (before the stabilization window). */
  readonly recommended: number | null;
  readonly reason: string | null;
  readonly evaluatedAt: string | null;
  readonly windowMs: number | null;
  /** The last change of the count since the API started (wake, idle scale-down or autoscaler). */
  readonly lastChange: {
    readonly at: string;
    readonly from: number;
    readonly to: number;
    readonly source: string;
    readonly reason: string;
  } | null;
}

type AutoScale = NonNullable<CanonicalAppSpec['processes'][string]['scaling']['auto']>;

/** The policy as the spec sets it (validation warns about a field its metric does not read). */
function autoView(auto: AutoScale): NonNullable<ProcessScalingView['auto']> {
  const labels = Object.entries(auto.labels ?? {}).filter((e): e is [string, string] => e[1] !== undefined);
  return {
    metric: auto.metric,
    target: auto.target,
    ...(auto.topic !== undefined ? { topic: auto.topic } : {}),
    ...(auto.group !== undefined ? { group: auto.group } : {}),
    ...(auto.name !== undefined ? { name: auto.name } : {}),
    ...(labels.length > 0 ? { labels: Object.fromEntries(labels) } : {}),
  };
}

/** The scaling of every long-running process of `spec`. */
export function scalingViews(spec: CanonicalAppSpec, model: ScalingReadModel | undefined): ProcessScalingView[] {
  const statuses = model?.status(spec.name) ?? [];
  const out: ProcessScalingView[] = [];
  for (const [process, definition] of Object.entries(spec.processes).sort(([a], [b]) => a.localeCompare(b))) {
    if (definition.type !== 'service' && definition.type !== 'worker') continue;
    const scaling = definition.scaling;
    const status = statuses.find((s) => s.process === process);
    const change = model?.lastChange(spec.name, process);
    const autoscaled = scaling.auto !== undefined && (model?.intervalMs ?? 0) > 0;
    out.push({
      process,
      mode: autoscaled ? 'autoscaled' : isGatewayManaged(spec, process) ? 'scale_to_zero' : 'fixed',
      min: scaling.min,
      max: scaling.max ?? null,
      per_region: scaling.per_region ?? null,
      auto: scaling.auto ? autoView(scaling.auto) : null,
      value: status?.value ?? null,
      recommended: status?.recommended ?? null,
      reason:
        status?.reason ??
        (scaling.auto !== undefined && !autoscaled ? 'the autoscaler is off (SVC_AUTOSCALE_INTERVAL=off)' : null),
      evaluatedAt: status?.evaluatedAt ?? null,
      windowMs: autoscaled ? (model?.windowMs ?? null) : null,
      lastChange: change
        ? { at: change.at, from: change.from, to: change.to, source: change.source, reason: change.reason }
        : null,
    });
  }
  return out;
}
