/**
 * Snapshot metrics of the spec's list, `svc_snapshots_total` and `svc_snapshot_over_limit_total`
 * (by app and database), read from the snapshot inventory at each scrape; the snapshot-pressure
 * alert reads the second. Both can fall (retention), so they are untyped despite `_total`.
 */
import type { Registry } from 'prom-client';
import { ScrapeTimeFamily } from '../../platform/metrics/scrape-time-family.js';

/** One app-owned database's local dumps, as the snapshot readiness view reports them. */
export interface SnapshotCounts {
  readonly app: string;
  readonly database: string;
  readonly snapshots: number;
  readonly overLimit: number;
}

/** Names of the gauges this module registers. */
export const SNAPSHOT_METRICS = { total: 'svc_snapshots_total', overLimit: 'svc_snapshot_over_limit_total' } as const;

/**
 * Registers the two gauges on `registry`, each filled from `read()` when scraped. A gauge of the
 * same name registered elsewhere first is left in place (this module then adds nothing for it).
 */
export function registerSnapshotMetrics(
  registry: Registry,
  read: () => readonly SnapshotCounts[],
  onError: (error: unknown) => void = () => {},
): void {
  // Both families read one sample per scrape: prom-client runs every family's collection in the
  // same tick, so the sample is kept until the next microtask.
  let current: readonly SnapshotCounts[] | undefined;
  const sample = (): readonly SnapshotCounts[] => {
    if (current !== undefined) return current;
    try {
      current = read();
    } catch (error) {
      onError(error);
      current = [];
    }
    queueMicrotask(() => (current = undefined));
    return current;
  };
  if (registry.getSingleMetric(SNAPSHOT_METRICS.total) === undefined) {
    new ScrapeTimeFamily({
      name: SNAPSHOT_METRICS.total,
      help: 'Local snapshot dumps per app-owned database',
      labelNames: ['app', 'database'],
      registry,
      type: 'untyped',
      read: () => sample().map((row) => ({ labels: { app: row.app, database: row.database }, value: row.snapshots })),
    });
  }
  if (registry.getSingleMetric(SNAPSHOT_METRICS.overLimit) === undefined) {
    new ScrapeTimeFamily({
      name: SNAPSHOT_METRICS.overLimit,
      help: 'Local snapshot dumps above snapshots.keep per app-owned database',
      labelNames: ['app', 'database'],
      registry,
      type: 'untyped',
      read: () => sample().map((row) => ({ labels: { app: row.app, database: row.database }, value: row.overLimit })),
    });
  }
}
