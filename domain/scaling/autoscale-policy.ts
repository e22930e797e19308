/**
 * The autoscaler's arithmetic, pure: the count a metric asks for, and the stabilization that turns
 * a stream of such recommendations into decisions that do not flap (ADR 0193).
 */

/** Metrics the autoscaler follows (the spec's `scaling.auto.metric` values this platform can read). */
export const AutoscaleMetric = {
  /** Percent of one core per allocation, sampled by the driver. */
  cpu: 'cpu',
  /** Percent of `resources.memory` per allocation (resident set size against the limit). */
  memory: 'memory',
  /** Average requests in flight per allocation, as the wake gateway forwards them. */
  requestsInFlight: 'requests_in_flight',
  /** Requests per second per allocation, as the wake gateway forwards them. */
  requestsPerSecond: 'requests_per_second',
  /** Consumer lag of `topic` (summed over its partitions) per allocation, from the Kafka exporter (ADR 0233). */
  kafkaLag: 'kafka_lag',
  /** A metric the process exposes on its metrics endpoint, averaged over the allocations (ADR 0233). */
  custom: 'custom',
} as const;
export type AutoscaleMetric = (typeof AutoscaleMetric)[keyof typeof AutoscaleMetric];

/** True for a metric the autoscaler follows. */
export function isAutoscaleMetric(value: unknown): value is AutoscaleMetric {
  return Object.values(AutoscaleMetric).includes(value as AutoscaleMetric);
}

/** True for metrics counted by the wake gateway. */
export function isRequestMetric(metric: AutoscaleMetric): boolean {
  return metric === AutoscaleMetric.requestsInFlight || metric === AutoscaleMetric.requestsPerSecond;
}

/** A deviation from the target this small (10 %) keeps the count: a metric at its target does not jitter. */
export const SCALE_TOLERANCE = 0.1;

/** What one evaluation of a process saw. */
export interface ScaleObservation {
  readonly metric: AutoscaleMetric;
  /** Target value per allocation. */
  readonly target: number;
  /** Desired count now. */
  readonly current: number;
  /** `scaling.min` (0: scaled to zero by the wake gateway when idle). */
  readonly min: number;
  /** Highest count (`scaling.max`, or `max(min, 1)` when unset). */
  readonly max: number;
  /** Sum of the metric over the allocations that reported it; undefined when none did yet. */
  readonly total: number | undefined;
  /** Allocations whose values make up `total`. */
  readonly sampled: number;
  /** No request reached the process through the gateway during the period, and none is in flight. */
  readonly idle: boolean;
  /** Why there is no sample, when `total` is undefined and the source said (an exporter unreachable, say). */
  readonly missing?: string | undefined;
}

/** The count one evaluation asks for, and why. */
export interface ScaleRecommendation {
  readonly count: number;
  /** Average per allocation, when there was a sample. */
  readonly perAllocation: number | undefined;
  readonly reason: string;
}

const round = (value: number): number => Math.round(value * 10) / 10;

/** The count `observation` asks for: `ceil(total / target)` between the bounds, the current count within the tolerance. */
export function recommendCount(observation: ScaleObservation): ScaleRecommendation {
  const { metric, target, current, min, max, total, sampled } = observation;
  if (min === 0 && observation.idle)
    return {
      count: 0,
      perAllocation: total === undefined ? undefined : 0,
      reason: 'no request through the wake gateway',
    };
  if (total === undefined || sampled === 0) {
    // Nothing to go by: the count stays (within the bounds).
    return {
      count: Math.min(Math.max(current, min), Math.max(max, min)),
      perAllocation: undefined,
      reason:
        observation.missing === undefined ? `no ${metric} sample yet` : `no ${metric} sample: ${observation.missing}`,
    };
  }
  // A process that serves a request keeps at least one allocation, even with min 0.
  const floor = Math.max(min, 1);
  const perAllocation = total / sampled;
  const withinTolerance = current > 0 && Math.abs(perAllocation / target - 1) <= SCALE_TOLERANCE;
  const wanted = withinTolerance ? current : Math.ceil(total / target);
  const count = Math.min(Math.max(wanted, floor), Math.max(max, floor));
  return {
    count,
    perAllocation,
    reason: `${metric} ${round(perAllocation)} per allocation over ${sampled} (target ${target})`,
  };
}

/** A change of count the stabilizer decided. */
export interface ScaleDecision {
  readonly from: number;
  readonly to: number;
  readonly direction: 'out' | 'in';
  readonly reason: string;
}

/**
 * Stabilization of one process: a higher recommendation scales out at once; a lower one scales in
 * only when every recommendation of the last `windowMs` was lower than the current count, and at
 * least `windowMs` after the previous change (and after the stabilizer first saw the process). It
 * then goes to the highest count the window asked for, so one quiet moment never scales in.
 */
export class ScaleStabilizer {
  private readonly history: { atMs: number; count: number }[] = [];
  private lastChangeMs: number | undefined;

  constructor(
    private readonly windowMs: number,
    private readonly sinceMs: number,
  ) {}

  /** Records `recommendation` at `nowMs` and returns the decision it leads to, if any. */
  decide(nowMs: number, current: number, recommendation: ScaleRecommendation): ScaleDecision | undefined {
    this.history.push({ atMs: nowMs, count: recommendation.count });
    while (this.history.length > 0 && this.history[0]!.atMs < nowMs - this.windowMs) this.history.shift();
    if (recommendation.count > current) {
      this.lastChangeMs = nowMs;
      return { from: current, to: recommendation.count, direction: 'out', reason: recommendation.reason };
    }
    if (recommendation.count === current) return undefined;
    const quietSince = Math.max(this.sinceMs, this.lastChangeMs ?? this.sinceMs);
    if (nowMs - quietSince < this.windowMs) return undefined;
    const highest = Math.max(...this.history.map((h) => h.count));
    if (highest >= current) return undefined;
    this.lastChangeMs = nowMs;
    const seconds = Math.round(this.windowMs / 100) / 10;
    return {
      from: current,
      to: highest,
      direction: 'in',
      reason:
        highest === 0
          ? `${recommendation.reason} for the stabilization window (${seconds} s)`
          : `${recommendation.reason}; the highest count asked for in the stabilization window (${seconds} s) was ${highest}`,
    };
  }

  /** Notes a change made by someone else (a wake from zero): scale-in waits a full window after it. */
  noteChange(nowMs: number): void {
    this.lastChangeMs = nowMs;
  }
}
