/**
 * Trace marks of one operation, for a bench that follows it end to end (ADR 0201): each step on a
 * cold wake's path calls {@link traceMark}; nothing happens unless a bench installed a sink
 * (`bench/wake.ts` with `BENCH_TRACE=1`). The marks cost one call and one check when no sink is set.
 */
let sink: ((label: string) => void) | undefined;

/** Records that the step `label` is reached now, when a sink is installed. */
export function traceMark(label: string): void {
  if (sink !== undefined) sink(label);
}

/** Installs (or, with undefined, removes) the sink the marks go to; for benches only. */
export function setTraceSink(next: ((label: string) => void) | undefined): void {
  sink = next;
}
