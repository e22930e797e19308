/**
 * Samples of the tuning signals over time, per process and metric, and their aggregates over a
 * window (`current`: the latest; `max`; `p95`: the nearest-rank 95th percentile). Pure: the caller
 * records samples with their time and asks at a time.
 */

/** How long samples are kept: the longest window a signal may ask for is read from this much history. */
export const SIGNAL_HISTORY_MS = 24 * 60 * 60_000;
/** Most samples kept per process and metric (a day at one sample every ~9 s). */
export const SIGNAL_HISTORY_SAMPLES = 10_000;

/** An aggregate of a signal's samples. */
export type SignalAggregate = 'current' | 'max' | 'p95';

/** What an aggregate over a window found. */
export interface SignalReading {
  readonly value: number;
  /** Samples in the window. */
  readonly samples: number;
}

/** The nearest-rank `q` quantile (0..1] of `values` (not empty). */
export function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length, Math.max(1, Math.ceil(q * sorted.length))) - 1]!;
}

/** Timestamped samples by key (`<app>/<process>/<metric>`). */
export class SignalHistory {
  private readonly series = new Map<string, { atMs: number; value: number }[]>();

  record(key: string, atMs: number, value: number): void {
    let samples = this.series.get(key);
    if (samples === undefined) this.series.set(key, (samples = []));
    samples.push({ atMs, value });
    while (
      samples.length > SIGNAL_HISTORY_SAMPLES ||
      (samples[0] !== undefined && samples[0].atMs < atMs - SIGNAL_HISTORY_MS)
    )
      samples.shift();
  }

  /** The aggregate of `key`'s samples in the last `windowMs` (all kept samples when undefined); undefined without a sample. */
  read(
    key: string,
    aggregate: SignalAggregate,
    windowMs: number | undefined,
    nowMs: number,
  ): SignalReading | undefined {
    const samples = this.series.get(key) ?? [];
    const inWindow = samples.filter((s) => windowMs === undefined || s.atMs >= nowMs - windowMs).map((s) => s.value);
    if (inWindow.length === 0) return undefined;
    const value =
      aggregate === 'current'
        ? inWindow[inWindow.length - 1]!
        : aggregate === 'max'
          ? Math.max(...inWindow)
          : quantile(inWindow, 0.95);
    return { value, samples: inWindow.length };
  }

  /** Forgets every key not in `keep`. */
  retain(keep: ReadonlySet<string>): void {
    for (const key of this.series.keys()) if (!keep.has(key)) this.series.delete(key);
  }
}
