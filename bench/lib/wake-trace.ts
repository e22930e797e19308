/**
 * The cold wake trace of bench/wake (BENCH_TRACE=1, ADR 0201): each wake's trace marks and the
 * app's own moments, printed per mark as its offset from the request's send and its step from the
 * mark above.
 */
import { percentile } from './bench-args.js';

/** One wake: when its request was sent, the trace marks on its path, and the app's moments (epoch ms). */
export interface WakeTrace {
  readonly sentAt: number;
  readonly marks: [string, number][];
  readonly app: Record<string, number>;
}

/** Prints the trace of the wakes. */
export function printWakeTrace(traces: readonly WakeTrace[]): void {
  // Per mark, its offset from the request's send (p50, p10-p90, over the wakes; a mark seen more
  // than once in a wake counts at its first), in that order, and the step from the mark above.
  const firsts = traces.map((t) => {
    const at = new Map<string, number>();
    const app = Object.entries(t.app).map(([label, ms]) => [`app:${label}`, ms] as const);
    for (const [label, ms] of [...t.marks, ...app]) if (!at.has(label)) at.set(label, ms - t.sentAt);
    return at;
  });
  const labels = [...new Set(firsts.flatMap((at) => [...at.keys()]))];
  const offsets = new Map(labels.map((label) => [label, firsts.flatMap((at) => at.get(label) ?? [])]));
  labels.sort((a, b) => percentile(offsets.get(a)!, 50) - percentile(offsets.get(b)!, 50));
  console.log(
    'cold wake trace (ms after the request was sent; app marks are whole ms): p50 (p10-p90), step from the mark above',
  );
  labels.forEach((label, i) => {
    const xs = offsets.get(label)!;
    const above = labels[i - 1];
    const steps =
      above === undefined
        ? []
        : firsts.flatMap((at) => (at.has(label) && at.has(above) ? [at.get(label)! - at.get(above)!] : []));
    console.log(
      `  ${label.padEnd(24)} ${percentile(xs, 50).toFixed(2).padStart(7)} (${percentile(xs, 10).toFixed(1)}-${percentile(xs, 90).toFixed(1)})  step ${steps.length > 0 ? percentile(steps, 50).toFixed(2) : '-'}`,
    );
  });
}
