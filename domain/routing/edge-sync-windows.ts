/**
 * The edge analytics sync's query windows: day-sized UTC windows back from now, clamped to the
 * lookback ceiling, so each query stays within what the analytics API serves per request.
 */

/** One analytics query window, `[start, end)`, ISO 8601. */
export interface SyncWindow {
  readonly start: string;
  readonly end: string;
}

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/**
 * Windows covering `lookbackMs` (clamped to `ceilingMs`) before `now`, at most one day each,
 * oldest first. The end is the start of the current hour: a running hour is not complete yet.
 */
export function edgeSyncWindows(now: Date, lookbackMs: number, ceilingMs: number): SyncWindow[] {
  const end = Math.floor(now.getTime() / HOUR_MS) * HOUR_MS;
  const span = Math.max(0, Math.min(lookbackMs, ceilingMs));
  const start = end - Math.ceil(span / HOUR_MS) * HOUR_MS;
  const windows: SyncWindow[] = [];
  for (let from = start; from < end; from += DAY_MS) {
    windows.push({ start: new Date(from).toISOString(), end: new Date(Math.min(from + DAY_MS, end)).toISOString() });
  }
  return windows;
}
