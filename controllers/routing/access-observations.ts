/**
 * Access observations: the gateway's per-request counts (kept in memory, flushed to control.db in
 * batches so the proxy path never waits on SQLite), log push batches, and the patterns read model.
 */
import {
  accessPatterns,
  aggregateLogpush,
  hourOf,
  logpushRecords,
  statusBucket,
  type HostnamePattern,
  type LogpushAggregate,
  type StatusBucket,
} from '../../domain/routing/index.js';
import type { Logger } from '../../platform/logger.js';
import type { Db } from '../../store/database.js';
import { addAccessCounts, listAccessBuckets, type AccessCount } from '../../store/control/access-buckets.js';

export interface AccessObservationsOptions {
  readonly db: Db;
  readonly logger: Logger;
  /** Hostname patterns that may be recorded (the declared public endpoints). */
  readonly mappedHostnames: () => readonly string[];
  /** Flush period of gateway counts. @default 1000 */
  readonly flushMs?: number;
  readonly now?: () => Date;
}

/** Query of `GET /api/access/patterns`. */
export interface PatternsQuery {
  /** Hours back from now. @default 24 */
  readonly hours?: number;
  readonly hostname?: string;
}

/** Records and reads access aggregates. */
export class AccessObservations {
  private pending = new Map<string, { -readonly [K in keyof AccessCount]: AccessCount[K] }>();
  private currentHour = '';
  private hourEndsMs = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: AccessObservationsOptions) {}

  /** Starts the periodic flush. */
  start(): void {
    this.timer = setInterval(() => this.flush(), this.options.flushMs ?? 1000);
    this.timer.unref();
  }

  /** Flushes and stops. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.flush();
  }

  /** Counts one gateway request for `hostname` that ended with `status`. */
  recordGateway(hostname: string, status: number): void {
    const nowMs = this.now().getTime();
    if (nowMs >= this.hourEndsMs || nowMs < this.hourEndsMs - 3_600_000) {
      this.currentHour = hourOf(new Date(nowMs));
      this.hourEndsMs = Date.parse(this.currentHour) + 3_600_000;
    }
    const hour = this.currentHour;
    const bucket: StatusBucket = statusBucket(status);
    const key = `${hostname}\u0000${hour}\u0000${bucket}`;
    const previous = this.pending.get(key);
    if (previous === undefined) this.pending.set(key, { hostname, hour, statusBucket: bucket, count: 1 });
    else previous.count += 1;
  }

  /** Writes pending gateway counts. */
  flush(): void {
    if (this.pending.size === 0) return;
    const counts = [...this.pending.values()];
    this.pending = new Map();
    try {
      addAccessCounts(this.options.db, 'gateway', counts, this.now());
    } catch (err) {
      this.options.logger.warn({ err }, 'access counts could not be written');
    }
  }

  /** Reduces a log push body to counts for mapped hostnames and stores them (source `logpush`). */
  ingestLogpush(body: unknown): LogpushAggregate {
    const aggregate = aggregateLogpush(logpushRecords(body), this.options.mappedHostnames());
    addAccessCounts(this.options.db, 'logpush', aggregate.counts, this.now());
    return aggregate;
  }

  /** Per-hostname hourly counts and status buckets over the last `hours`. */
  patterns(query: PatternsQuery = {}): { since: string; hostnames: HostnamePattern[] } {
    this.flush();
    const hours = query.hours ?? 24;
    const since = hourOf(new Date(this.now().getTime() - (hours - 1) * 3_600_000));
    const buckets = listAccessBuckets(this.options.db, {
      since,
      ...(query.hostname === undefined ? {} : { hostname: query.hostname }),
    });
    return { since, hostnames: accessPatterns(buckets) };
  }

  private now(): Date {
    return (this.options.now ?? (() => new Date()))();
  }
}
