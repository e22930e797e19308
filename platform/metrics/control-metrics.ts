/**
 * Control plane metrics: one prom-client registry served by `GET /metrics` and `GET /api/metrics`.
 * Labels stay low cardinality (type, severity, app, process, task; never ids). The families read
 * from the apps, the registry, deployments and the access ring at scrape time are registered on
 * the same registry by `controllers/observability/` (docs/observability.md lists every family).
 */
import { Counter, Gauge, Registry } from 'prom-client';
import { ObservedCounter } from './observed-counter.js';
import { UntypedGauge } from './untyped-gauge.js';

/** Options of {@link ControlMetrics}. */
export interface ControlMetricsOptions {
  /**
   * Reads the data folder's file system at each scrape (`svc_host_disk_*`); unset, the disk gauges
   * hold what the capacity check last sampled. A throwing read keeps the previous values.
   */
  readonly disk?: () => { readonly totalBytes: number; readonly freeBytes: number };
}

/** Distinct event types the event families label by name (the catalogue has about 50). */
export const MAX_EVENT_TYPES = 200;
/** The `type` label of events past {@link MAX_EVENT_TYPES}. */
export const OTHER_EVENT_TYPE = 'other';

/** The control plane's metric registry and the event services' metrics. */
export class ControlMetrics {
  readonly #eventTypes = new Set<string>();
  readonly registry = new Registry();
  readonly eventsTotal: Counter<'type' | 'severity'>;
  readonly eventLastOccurred: Gauge<'type' | 'severity'>;
  /** Restart count of each task as the scheduler reports it (a new task starts again at 0: a counter reset). */
  readonly taskRestarts: ObservedCounter<'app' | 'process' | 'task'>;
  /** OOM kills per task counted by the allocation watcher since the control plane started. */
  readonly taskOomKills: ObservedCounter<'app' | 'process' | 'task'>;
  /** 1 while the latest expected run was missed, else 0: can fall, so untyped despite `_total`. */
  readonly cronMissedRuns: UntypedGauge<'app' | 'process'>;
  readonly hostDiskTotal: Gauge;
  readonly hostDiskFree: Gauge;

  constructor(options: ControlMetricsOptions = {}) {
    const disk = options.disk;
    let sample: { totalBytes: number; freeBytes: number } | undefined;
    // Each disk gauge reads at scrape time (a statfs takes microseconds).
    const read = () => {
      if (disk === undefined) return undefined;
      try {
        sample = disk();
      } catch {
        // Keep the previous sample: a transient failure must not drop the series.
      }
      return sample;
    };
    this.eventsTotal = new Counter({
      name: 'svc_events_total',
      help: 'Events recorded by the event surface, by type and severity',
      labelNames: ['type', 'severity'],
      registers: [this.registry],
    });
    this.eventLastOccurred = new Gauge({
      name: 'svc_event_last_occurred_timestamp_seconds',
      help: 'When the latest event of each type and severity occurred (Unix seconds)',
      labelNames: ['type', 'severity'],
      registers: [this.registry],
    });
    this.taskRestarts = new ObservedCounter({
      name: 'svc_task_restarts_total',
      help: 'Current restart count of each task',
      labelNames: ['app', 'process', 'task'],
      registry: this.registry,
    });
    this.taskOomKills = new ObservedCounter({
      name: 'svc_task_oom_kills_total',
      help: 'OOM kills observed per task',
      labelNames: ['app', 'process', 'task'],
      registry: this.registry,
    });
    this.hostDiskTotal = new Gauge({
      name: 'svc_host_disk_total_bytes',
      help: 'Size of the file system holding the data folder (bytes), read at each scrape',
      registers: [this.registry],
      collect() {
        const now = read();
        if (now !== undefined) this.set(now.totalBytes);
      },
    });
    this.hostDiskFree = new Gauge({
      name: 'svc_host_disk_free_bytes',
      help: 'Free bytes of the file system holding the data folder, read at each scrape',
      registers: [this.registry],
      collect() {
        const now = read();
        if (now !== undefined) this.set(now.freeBytes);
      },
    });
    this.cronMissedRuns = new UntypedGauge({
      name: 'svc_cron_missed_runs_total',
      help: '1 while the latest expected run of a periodic process was missed, else 0',
      labelNames: ['app', 'process'],
      registers: [this.registry],
    });
  }

  /** Counts one recorded event; past {@link MAX_EVENT_TYPES} distinct types, new ones count as `other`. */
  recordEvent(eventType: string, severity: string, occurredAt: string): void {
    // Callers may post their own event types: the label set stays bounded whatever they send.
    if (!this.#eventTypes.has(eventType) && this.#eventTypes.size < MAX_EVENT_TYPES) this.#eventTypes.add(eventType);
    const type = this.#eventTypes.has(eventType) ? eventType : OTHER_EVENT_TYPE;
    this.eventsTotal.inc({ type, severity });
    const seconds = Date.parse(occurredAt) / 1000;
    if (Number.isFinite(seconds)) this.eventLastOccurred.set({ type, severity }, seconds);
  }

  /** The text exposition of every metric. */
  async text(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
