/**
 * The edge analytics sync: hourly request counts per mapped public hostname, read in day-sized
 * windows back to the configured lookback (clamped to its ceiling) and stored under source
 * `edge-graphql`, replacing what an earlier run stored for the same hours.
 */
import { edgeSyncWindows, type SyncWindow } from '../../domain/routing/index.js';
import { fetchHourlyCounts, type EdgeAnalyticsOptions } from '../../platform/edge/index.js';
import type { Logger } from '../../platform/logger.js';
import type { Db } from '../../store/database.js';
import { replaceAccessWindow } from '../../store/control/access-buckets.js';

export interface EdgeSyncOptions {
  readonly db: Db;
  readonly logger: Logger;
  /** Analytics API settings; undefined when `SVC_EDGE_API_TOKEN` or `SVC_EDGE_ZONE_ID` is unset. */
  readonly api: EdgeAnalyticsOptions | undefined;
  readonly lookbackMs: number;
  readonly lookbackMaxMs: number;
  /** Period of the sync; 0 disables it. */
  readonly intervalMs: number;
  /** Exact public hostnames currently mapped (wildcard endpoints cannot be queried by name). */
  readonly hostnames: () => readonly string[];
  readonly now?: () => Date;
}

/** Result of one run. */
export interface EdgeSyncResult {
  readonly windows: readonly SyncWindow[];
  readonly hostnames: readonly string[];
  readonly buckets: number;
  readonly requests: number;
}

/** Runs the sync now and on its period. */
export class EdgeSync {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<EdgeSyncResult> | undefined;
  lastResult: (EdgeSyncResult & { readonly at: string }) | undefined;
  lastError: string | undefined;

  constructor(private readonly options: EdgeSyncOptions) {}

  /** True when the analytics API is configured. */
  get configured(): boolean {
    return this.options.api !== undefined;
  }

  start(): void {
    if (!this.configured || this.options.intervalMs <= 0) return;
    this.timer = setInterval(() => void this.run().catch(() => undefined), this.options.intervalMs);
    this.timer.unref();
  }

  /** Stops the timer; resolves once a run in flight (which writes control.db) has ended. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running?.catch(() => undefined);
  }

  /** One run (concurrent callers share it). */
  run(): Promise<EdgeSyncResult> {
    this.running ??= this.runOnce().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async runOnce(): Promise<EdgeSyncResult> {
    const api = this.options.api;
    if (api === undefined) throw new Error('edge analytics is not configured');
    const now = (this.options.now ?? (() => new Date()))();
    const hostnames = [...new Set(this.options.hostnames().filter((h) => !h.startsWith('*.')))].sort();
    const windows = edgeSyncWindows(now, this.options.lookbackMs, this.options.lookbackMaxMs);
    let buckets = 0;
    let requests = 0;
    try {
      if (hostnames.length > 0) {
        for (const window of windows) {
          const counts = await fetchHourlyCounts(api, window, hostnames);
          const mapped = counts.filter(
            (c) => hostnames.includes(c.hostname) && c.hour >= window.start && c.hour < window.end,
          );
          replaceAccessWindow(
            this.options.db,
            'edge-graphql',
            hostnames,
            window,
            mapped.map((c) => ({ hostname: c.hostname, hour: c.hour, statusBucket: 'total', count: c.count })),
            now,
          );
          buckets += mapped.length;
          requests += mapped.reduce((n, c) => n + c.count, 0);
        }
      }
    } catch (error) {
      this.lastError = (error as Error).message;
      this.options.logger.warn({ err: error }, 'edge analytics sync failed');
      throw error;
    }
    const result = { windows, hostnames, buckets, requests };
    this.lastResult = { ...result, at: now.toISOString() };
    this.lastError = undefined;
    this.options.logger.info(
      { windows: windows.length, hostnames: hostnames.length, buckets },
      'edge analytics synced',
    );
    return result;
  }
}
