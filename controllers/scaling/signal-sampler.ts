/**
 * Samples of the tuning signals (`tuning.signals`), taken on the autoscaler's period from the same
 * sources the autoscaler reads: the driver's CPU and memory of the running allocations
 * (`cpu_percent`, `memory_rss`, `memory_max`) and, for any other metric of an `app` or `prometheus`
 * signal, the process's metrics endpoint. Kept in memory, aggregated over each signal's window on
 * request (ADR 0233).
 */
import { BUILT_IN_SIGNAL_METRICS, SignalHistory, type SignalRead } from '../../domain/observability/index.js';
import type { Registry } from '../../domain/registry/index.js';
import type { Allocation } from '../../domain/scheduler/index.js';
import { parseGoDuration, type CanonicalAppSpec } from '../../domain/spec/index.js';
import type { Logger } from '../../platform/logger.js';
import type { Db } from '../../store/database.js';
import { listApps } from '../../store/control/apps.js';
import type { SchedulerTargets } from '../apps/scheduler-targets.js';
import { customSample } from './metric-sources.js';

const MB = 1024 * 1024;

export interface SignalSamplerOptions {
  readonly db: Db;
  readonly targets: SchedulerTargets;
  readonly registry: Registry;
  readonly logger: Logger;
  /** Period between samples; 0 disables sampling. */
  readonly intervalMs: number;
  /** Longest wait for a metrics endpoint. @default 2000 */
  readonly scrapeTimeoutMs?: number;
  readonly now?: () => number;
}

/** Reads the tuning signals of a process, aggregated over their windows. */
export interface SignalReader {
  /** Each signal of `process`'s policy by name: its aggregate, or why there is none. */
  readings(app: string, process: string, spec: CanonicalAppSpec): ReadonlyMap<string, SignalRead>;
}

/** Samples every process that declares tuning signals. */
export class SignalSampler implements SignalReader {
  private readonly history = new SignalHistory();
  /** Why the last pass had no sample of `<app>/<process>/<metric>`. */
  private readonly missing = new Map<string, string>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();
  private readonly now: () => number;

  constructor(private readonly options: SignalSamplerOptions) {
    this.now = options.now ?? Date.now;
  }

  start(): void {
    if (this.options.intervalMs <= 0) return;
    this.timer = setInterval(() => {
      this.running = this.tick().catch((err: unknown) =>
        this.options.logger.warn({ err }, 'tuning signal sampling failed'),
      );
    }, this.options.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }

  /** One sample of every signal of every running process that declares some. */
  async tick(): Promise<void> {
    const nowMs = this.now();
    const keep = new Set<string>();
    for (const app of listApps(this.options.db)) {
      const spec = app.spec;
      if (!spec || app.release === null || app.deletedAt !== null) continue;
      for (const [process, definition] of Object.entries(spec.processes)) {
        const signals = definition.tuning?.signals ?? [];
        if (signals.length === 0) continue;
        const metrics = new Set(signals.map((s) => s.metric));
        for (const metric of metrics) keep.add(`${spec.name}/${process}/${metric}`);
        await this.sample(spec, process, signals, metrics, nowMs);
      }
    }
    this.history.retain(keep);
  }

  readings(app: string, process: string, spec: CanonicalAppSpec): ReadonlyMap<string, SignalRead> {
    const out = new Map<string, SignalRead>();
    const nowMs = this.now();
    for (const signal of spec.processes[process]?.tuning?.signals ?? []) {
      const key = `${app}/${process}/${signal.metric}`;
      const windowMs = signal.window === undefined ? undefined : parseGoDuration(signal.window).milliseconds;
      const read = this.history.read(key, signal.aggregate ?? 'current', windowMs, nowMs);
      out.set(
        signal.name,
        read ?? {
          missing:
            this.options.intervalMs <= 0
              ? 'signals are not sampled (SVC_AUTOSCALE_INTERVAL=off)'
              : (this.missing.get(key) ?? `no ${signal.metric} sample yet`),
        },
      );
    }
    return out;
  }

  private async sample(
    spec: CanonicalAppSpec,
    process: string,
    signals: NonNullable<CanonicalAppSpec['processes'][string]['tuning']>['signals'] & {},
    metrics: ReadonlySet<string>,
    nowMs: number,
  ): Promise<void> {
    const record = (metric: string, value: number | undefined, missing: string) => {
      const key = `${spec.name}/${process}/${metric}`;
      if (value === undefined) this.missing.set(key, missing);
      else {
        this.missing.delete(key);
        this.history.record(key, nowMs, value);
      }
    };
    if ([...metrics].some((m) => BUILT_IN_SIGNAL_METRICS.has(m))) {
      const allocations = await this.runningAllocations(spec.name, process);
      const cpu = allocations.flatMap((a) => (a.cpu === undefined ? [] : [a.cpu.percent]));
      const rss = allocations.flatMap((a) => (a.memory.sampledAt === undefined ? [] : [a.memory.currentRssBytes / MB]));
      const none = allocations.length === 0 ? 'no running allocation' : 'the driver has no sample yet';
      record('cpu_percent', cpu.length === 0 ? undefined : average(cpu), none);
      record('memory_rss', rss.length === 0 ? undefined : average(rss), none);
      record('memory_max', rss.length === 0 ? undefined : Math.max(...rss), none);
    }
    for (const metric of metrics) {
      if (BUILT_IN_SIGNAL_METRICS.has(metric)) continue;
      // A `nomad` signal of another metric has no source; `app` and `prometheus` read the endpoint.
      if (!signals.some((s) => s.metric === metric && s.source !== 'nomad')) continue;
      const sample = await customSample({
        registry: this.options.registry,
        spec,
        process,
        name: metric,
        labels: {},
        timeoutMs: this.options.scrapeTimeoutMs ?? 2000,
      });
      record(
        metric,
        sample.total === undefined ? undefined : sample.total / sample.sampled,
        sample.missing ?? 'no sample',
      );
    }
  }

  private async runningAllocations(app: string, process: string): Promise<Allocation[]> {
    const out: Allocation[] = [];
    for (const { scheduler } of await this.options.targets.all())
      for (const a of await scheduler.listAllocations({ app, taskGroup: process, usage: true }))
        if (a.kind === 'group' && a.status === 'running' && a.desiredStatus === 'run') out.push(a);
    return out;
  }
}

function average(values: readonly number[]): number {
  return values.reduce((sum, v) => sum + v, 0) / values.length;
}
