/**
 * Access aggregates in control.db: counts per hostname, UTC hour, source and status bucket.
 */
import type { AccessBucket, AccessSource, StatusBucket } from '../../domain/routing/index.js';
import type { Db } from '../database.js';

/** One increment or replacement. */
export interface AccessCount {
  readonly hostname: string;
  readonly hour: string;
  readonly statusBucket: StatusBucket;
  readonly count: number;
}

/** Adds counts (gateway and log push observations) in one transaction. */
export function addAccessCounts(db: Db, source: AccessSource, counts: readonly AccessCount[], now = new Date()): void {
  const stmt =
    db.prepare(`INSERT INTO access_buckets (hostname, hour, source, status_bucket, count, updated_at) VALUES (?, ?, ?, ?, ?, ?)
    ON CONFLICT (hostname, hour, source, status_bucket) DO UPDATE SET count = count + excluded.count, updated_at = excluded.updated_at`);
  const at = now.toISOString();
  db.transaction(() => {
    for (const c of counts) if (c.count > 0) stmt.run(c.hostname, c.hour, source, c.statusBucket, c.count, at);
  })();
}

/** Sets counts (the edge analytics sync): a re-run replaces a bucket's value instead of adding to it. */
export function replaceAccessCounts(
  db: Db,
  source: AccessSource,
  counts: readonly AccessCount[],
  now = new Date(),
): void {
  const stmt =
    db.prepare(`INSERT INTO access_buckets (hostname, hour, source, status_bucket, count, updated_at) VALUES (?, ?, ?, ?, ?, ?)
    ON CONFLICT (hostname, hour, source, status_bucket) DO UPDATE SET count = excluded.count, updated_at = excluded.updated_at`);
  const at = now.toISOString();
  db.transaction(() => {
    for (const c of counts) stmt.run(c.hostname, c.hour, source, c.statusBucket, c.count, at);
  })();
}

/** Buckets at or after `since` (ISO 8601), optionally for one hostname. */
export function listAccessBuckets(
  db: Db,
  filter: { readonly since: string; readonly hostname?: string },
): AccessBucket[] {
  const rows = (
    filter.hostname === undefined
      ? db
          .prepare(
            'SELECT hostname, hour, source, status_bucket, count FROM access_buckets WHERE hour >= ? ORDER BY hostname, hour',
          )
          .all(filter.since)
      : db
          .prepare(
            'SELECT hostname, hour, source, status_bucket, count FROM access_buckets WHERE hour >= ? AND hostname = ? ORDER BY hour',
          )
          .all(filter.since, filter.hostname)
  ) as {
    hostname: string;
    hour: string;
    source: AccessSource;
    status_bucket: StatusBucket;
    count: number;
  }[];
  return rows.map((r) => ({
    hostname: r.hostname,
    hour: r.hour,
    source: r.source,
    statusBucket: r.status_bucket,
    count: r.count,
  }));
}

/**
 * Replaces a source's values for `hostnames` within `[start, end)`: rows of that window are
 * deleted and `counts` inserted, in one transaction (a re-run of the edge sync replaces, never adds).
 */
export function replaceAccessWindow(
  db: Db,
  source: AccessSource,
  hostnames: readonly string[],
  window: { readonly start: string; readonly end: string },
  counts: readonly AccessCount[],
  now = new Date(),
): void {
  const remove = db.prepare('DELETE FROM access_buckets WHERE source = ? AND hostname = ? AND hour >= ? AND hour < ?');
  db.transaction(() => {
    for (const hostname of hostnames) remove.run(source, hostname, window.start, window.end);
    replaceAccessCounts(db, source, counts, now);
  })();
}
