/**
 * Access observations as aggregates: per hostname, per UTC hour, per status bucket, per source.
 * Only counts are kept, never request bodies, headers or client identities.
 */

/** Where an observation came from. */
export const AccessSource = {
  /** Requests seen by the wake gateway. */
  gateway: 'gateway',
  /** Edge log push batches. */
  logpush: 'logpush',
  /** The edge analytics sync; its values replace earlier ones for the same hour. */
  edgeGraphql: 'edge-graphql',
} as const;
export type AccessSource = (typeof AccessSource)[keyof typeof AccessSource];

/** Status buckets: `1xx` … `5xx`, `total` for sources that report only counts, `other` for anything else. */
export type StatusBucket = '1xx' | '2xx' | '3xx' | '4xx' | '5xx' | 'total' | 'other';

/** One stored aggregate. */
export interface AccessBucket {
  readonly hostname: string;
  /** Start of the UTC hour, ISO 8601 (`2026-01-02T03:00:00.000Z`). */
  readonly hour: string;
  readonly source: AccessSource;
  readonly statusBucket: StatusBucket;
  readonly count: number;
}

/** The status bucket of an HTTP status. */
export function statusBucket(status: number): StatusBucket {
  if (!Number.isInteger(status) || status < 100 || status > 599) return 'other';
  return `${Math.floor(status / 100)}xx` as StatusBucket;
}

/** The start of the UTC hour containing `at`, ISO 8601. */
export function hourOf(at: Date): string {
  const d = new Date(at.getTime());
  d.setUTCMinutes(0, 0, 0);
  return d.toISOString();
}

/** One hostname's pattern in `GET /api/access/patterns`. */
export interface HostnamePattern {
  readonly hostname: string;
  readonly total: number;
  readonly statusBuckets: Readonly<Record<string, number>>;
  readonly sources: Readonly<Record<string, number>>;
  /** Hourly totals, oldest first. */
  readonly hours: readonly {
    readonly hour: string;
    readonly count: number;
    readonly statusBuckets: Readonly<Record<string, number>>;
  }[];
}

/**
 * Folds buckets into per-hostname patterns. For one hostname and hour, the edge's view (analytics
 * or log push) and the gateway's view count the same requests when traffic passes both, so the
 * hour's count is the largest source total rather than the sum; status buckets come from the
 * source that has them.
 */
export function accessPatterns(buckets: readonly AccessBucket[]): HostnamePattern[] {
  const byHost = new Map<string, AccessBucket[]>();
  for (const b of buckets) {
    const list = byHost.get(b.hostname) ?? [];
    list.push(b);
    byHost.set(b.hostname, list);
  }
  const out: HostnamePattern[] = [];
  for (const [hostname, list] of [...byHost].sort(([a], [b]) => a.localeCompare(b))) {
    const hours = new Map<string, AccessBucket[]>();
    for (const b of list) hours.set(b.hour, [...(hours.get(b.hour) ?? []), b]);
    const sources: Record<string, number> = {};
    for (const b of list) sources[b.source] = (sources[b.source] ?? 0) + b.count;
    const hourRows = [...hours]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([hour, rows]) => {
        const perSource = new Map<string, number>();
        for (const r of rows) perSource.set(r.source, (perSource.get(r.source) ?? 0) + r.count);
        const count = Math.max(0, ...perSource.values());
        const detailed = [...perSource].filter(([source]) =>
          rows.some((r) => r.source === source && r.statusBucket !== 'total'),
        );
        const best = detailed.sort((a, b) => b[1] - a[1])[0]?.[0];
        const statusBuckets: Record<string, number> = {};
        for (const r of rows)
          if (r.source === best && r.statusBucket !== 'total')
            statusBuckets[r.statusBucket] = (statusBuckets[r.statusBucket] ?? 0) + r.count;
        return { hour, count, statusBuckets };
      });
    const statusBuckets: Record<string, number> = {};
    for (const h of hourRows)
      for (const [k, v] of Object.entries(h.statusBuckets)) statusBuckets[k] = (statusBuckets[k] ?? 0) + v;
    out.push({ hostname, total: hourRows.reduce((n, h) => n + h.count, 0), statusBuckets, sources, hours: hourRows });
  }
  return out;
}
