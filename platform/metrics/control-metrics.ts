/**
 * Control plane metrics: one prom-client registry served by `GET /metrics` and `GET /api/metrics`.
 * Labels stay low cardinality (type, severity, app, process, task; never ids).
 */
import { Counter, Gauge, Registry } from 'prom-client';

/** The control plane's metric registry and the event services' metrics. */
export class ControlMetrics {
  readonly registry = new Registry();
  readonly eventsTotal: Counter<'type' | 'severity'>;
  readonly eventLastOccurred: Gauge<'type' | 'severity'>;
  readonly taskRestarts: Gauge<'app' | 'process' | 'task'>;
  readonly taskOomKills: Gauge<'app' | 'process' | 'task'>;
  readonly cronMissedRuns: Gauge<'app' | 'process'>;
  readonly hostDiskTotal: Gauge;
  readonly hostDiskFree: Gauge;

  constructor() {
    this.eventsTotal = new Counter({ name: 'svc_events_total', help: 'Events recorded by the event surface, by type and severity', labelNames: ['type', 'severity'], registers: [this.registry] });
    this.eventLastOccurred = new Gauge({ name: 'svc_event_last_occurred_timestamp_seconds', help: 'When the latest event of each type and severity occurred (Unix seconds)', labelNames: ['type', 'severity'], registers: [this.registry] });
    this.taskRestarts = new Gauge({ name: 'svc_task_restarts_total', help: 'Current restart count of each task', labelNames: ['app', 'process', 'task'], registers: [this.registry] });
    this.taskOomKills = new Gauge({ name: 'svc_task_oom_kills_total', help: 'OOM kills observed per task', labelNames: ['app', 'process', 'task'], registers: [this.registry] });
    this.hostDiskTotal = new Gauge({ name: 'svc_host_disk_total_bytes', help: 'Size of the file system holding the data folder (bytes), sampled by the capacity check', registers: [this.registry] });
    this.hostDiskFree = new Gauge({ name: 'svc_host_disk_free_bytes', help: 'Free bytes of the file system holding the data folder, sampled by the capacity check', registers: [this.registry] });
    this.cronMissedRuns = new Gauge({ name: 'svc_cron_missed_runs_total', help: '1 while the latest expected run of a periodic process was missed, else 0', labelNames: ['app', 'process'], registers: [this.registry] });
  }

  /** Counts one recorded event. */
  recordEvent(type: string, severity: string, occurredAt: string): void {
    this.eventsTotal.inc({ type, severity });
    const seconds = Date.parse(occurredAt) / 1000;
    if (Number.isFinite(seconds)) this.eventLastOccurred.set({ type, severity }, seconds);
  }

  /** The text exposition of every metric. */
  async text(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
