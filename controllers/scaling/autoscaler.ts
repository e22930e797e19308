/**
 * The autoscaler: every interval, for each deployed process with `scaling.auto`, reads its metric
 * (CPU and memory per allocation from the driver, requests from the wake gateway, Kafka consumer lag
 * from the platform's exporter, a custom metric from the allocations' metrics endpoints), asks the pure
 * policy for a count, stabilizes it, and records the decision in {@link GatewayScale} with its
 * reason, so the app controller stays the only writer of jobs (ADR 0091, ADR 0193, ADR 0233).
 */
import { instanceStatus, processServiceName, type Registry } from '../../domain/registry/index.js';
import { publicProcess } from '../../domain/routing/index.js';
import {
  AutoscaleMetric,
  isAutoscaleMetric,
  isRequestMetric,
  recommendCount,
  ScaleStabilizer,
  type ScaleRecommendation,
} from '../../domain/scaling/index.js';
import type { Allocation } from '../../domain/scheduler/index.js';
import type { CanonicalAppSpec } from '../../domain/spec/index.js';
import type { Logger } from '../../platform/logger.js';
import type { Db } from '../../store/database.js';
import { listApps } from '../../store/control/apps.js';
import type { SchedulerTargets } from '../apps/scheduler-targets.js';
import type { GatewayScale, ScaleChange } from '../routing/gateway-scale.js';
import type { WakeGateway } from '../routing/wake-gateway.js';
import type { ProcessTraffic } from '../routing/process-traffic.js';
import type { ScalingReadModel } from './scaling-view.js';
import { customSample, kafkaLagSample, type MetricSample } from './metric-sources.js';

type AutoScale = NonNullable<CanonicalAppSpec['processes'][string]['scaling']['auto']>;

export interface AutoscalerOptions {
  readonly db: Db;
  readonly targets: SchedulerTargets;
  readonly registry: Registry;
  readonly gateway: WakeGateway;
  readonly scale: GatewayScale;
  readonly logger: Logger;
  /** Period between evaluations; 0 disables the autoscaler. @default 15 s */
  readonly intervalMs: number;
  /** Stabilization window: how long every recommendation must stay lower before a scale-in. @default 5 min */
  readonly windowMs: number;
  /** Metrics URL of the Kafka exporter `kafka_lag` reads; unset: kafka_lag has no sample, and says why. */
  readonly kafkaExporterUrl?: string | undefined;
  /** Longest wait for an exposition (the exporter, a metrics endpoint). @default 2000 */
  readonly scrapeTimeoutMs?: number;
  readonly now?: () => number;
}

/** The autoscaler's view of one process, for the app page and `svc status`. */
export interface ProcessScalingStatus {
  readonly process: string;
  readonly metric: AutoscaleMetric;
  readonly target: number;
  readonly min: number;
  readonly max: number;
  /** Count the autoscaler last saw as desired. */
  readonly current: number;
  /** Average per allocation at the last evaluation (null before the first sample). */
  readonly value: number | null;
  /** Count the last evaluation asked for, before stabilization. */
  readonly recommended: number;
  readonly reason: string;
  /** ISO 8601 of the last evaluation. */
  readonly evaluatedAt: string;
}

interface Tracked {
  readonly stabilizer: ScaleStabilizer;
  traffic: (ProcessTraffic & { readonly atMs: number }) | undefined;
  status: ProcessScalingStatus | undefined;
  /** Why the last evaluation had no sample (logged once per reason). */
  missing: string | undefined;
}

/** Scales autoscaled processes between `scaling.min` and `scaling.max`. */
export class Autoscaler implements ScalingReadModel {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();
  private readonly tracked = new Map<string, Tracked>();
  /** The last change of each process's count (any source), by `<app>/<process>`. */
  private readonly lastChanges = new Map<string, ScaleChange>();
  private readonly unsubscribe: () => void;
  private readonly now: () => number;

  constructor(private readonly options: AutoscalerOptions) {
    this.now = options.now ?? Date.now;
    this.unsubscribe = options.scale.onScaleChange((change) => {
      const key = `${change.app}/${change.process}`;
      this.lastChanges.set(key, change);
      // A wake from zero is a change too: scale-in waits a full window after it.
      if (change.source !== 'autoscaler') this.tracked.get(key)?.stabilizer.noteChange(this.now());
    });
  }

  get windowMs(): number {
    return this.options.windowMs;
  }

  get intervalMs(): number {
    return this.options.intervalMs;
  }

  /** Starts the periodic evaluation. */
  start(): void {
    if (this.options.intervalMs <= 0) return;
    this.timer = setInterval(() => {
      this.running = this.tick().catch((err: unknown) => this.options.logger.warn({ err }, 'autoscaler pass failed'));
    }, this.options.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.unsubscribe();
    await this.running;
  }

  /** The autoscaler's view of an app's autoscaled processes. */
  status(app: string): ProcessScalingStatus[] {
    const out: ProcessScalingStatus[] = [];
    for (const [key, tracked] of this.tracked)
      if (key.startsWith(`${app}/`) && tracked.status !== undefined) out.push(tracked.status);
    return out.sort((a, b) => a.process.localeCompare(b.process));
  }

  /** The last change of a process's count (wake, idle or autoscaler) since this API process started. */
  lastChange(app: string, process: string): ScaleChange | undefined {
    return this.lastChanges.get(`${app}/${process}`);
  }

  /** One evaluation of every autoscaled process; returns the changes it decided. */
  async tick(): Promise<ScaleChange[]> {
    const nowMs = this.now();
    const changes: ScaleChange[] = [];
    const seen = new Set<string>();
    for (const app of listApps(this.options.db)) {
      const spec = app.spec;
      if (!spec || !spec.deploy || app.release === null || app.deletedAt !== null) continue;
      for (const [process, definition] of Object.entries(spec.processes)) {
        const auto = definition.scaling.auto;
        if (
          auto === undefined ||
          !isAutoscaleMetric(auto.metric) ||
          (definition.type !== 'service' && definition.type !== 'worker')
        )
          continue;
        const key = `${spec.name}/${process}`;
        seen.add(key);
        const change = await this.evaluate(spec, process, auto, nowMs);
        if (change) changes.push(change);
      }
    }
    for (const key of this.tracked.keys()) if (!seen.has(key)) this.tracked.delete(key);
    return changes;
  }

  private async evaluate(
    spec: CanonicalAppSpec,
    process: string,
    auto: AutoScale,
    nowMs: number,
  ): Promise<ScaleChange | undefined> {
    const metric = auto.metric;
    const target = auto.target;
    const key = `${spec.name}/${process}`;
    const scaling = spec.processes[process]!.scaling;
    const live = await this.liveCount(spec.name, process);
    if (live === undefined) return undefined; // not running as a service job (yet)
    let tracked = this.tracked.get(key);
    if (!tracked) {
      tracked = {
        stabilizer: new ScaleStabilizer(this.options.windowMs, nowMs),
        traffic: undefined,
        status: undefined,
        missing: undefined,
      };
      this.tracked.set(key, tracked);
    }
    const min = scaling.min;
    const max = Math.max(scaling.max ?? Math.max(min, 1), min);
    // The app controller clamps a run-time count to the spec's bounds (a spec change may have moved them).
    const current = Math.min(Math.max(this.options.scale.get(spec.name, process) ?? live, min), Math.max(max, 1));
    const served = publicProcess(spec) === process && (spec.endpoints ?? []).length > 0;
    const traffic = served ? this.options.gateway.trafficOf(spec.name, process, nowMs) : undefined;
    const previous = tracked.traffic;
    tracked.traffic = traffic === undefined ? undefined : { ...traffic, atMs: nowMs };
    const period =
      traffic !== undefined && previous !== undefined && nowMs > previous.atMs
        ? {
            seconds: (nowMs - previous.atMs) / 1000,
            requests: traffic.requests - previous.requests,
            inFlightMs: traffic.inFlightMs - previous.inFlightMs,
          }
        : undefined;
    const idle = period !== undefined && period.requests === 0 && traffic!.inFlight === 0;
    const sample = await this.sample(spec, process, auto, current, period);
    if (sample.missing !== tracked.missing && sample.missing !== undefined)
      this.options.logger.warn({ app: spec.name, process, metric, reason: sample.missing }, 'autoscaler: no sample');
    tracked.missing = sample.missing;
    const recommendation: ScaleRecommendation = recommendCount({
      metric,
      target,
      current,
      min,
      max,
      total: sample.total,
      sampled: sample.sampled,
      idle,
      missing: sample.missing,
    });
    const decision = tracked.stabilizer.decide(nowMs, current, recommendation);
    tracked.status = {
      process,
      metric,
      target,
      min,
      max,
      current: decision?.to ?? current,
      value: recommendation.perAllocation === undefined ? null : Math.round(recommendation.perAllocation * 10) / 10,
      recommended: recommendation.count,
      reason: recommendation.reason,
      evaluatedAt: new Date(nowMs).toISOString(),
    };
    if (!decision) return undefined;
    if (decision.to === 0) {
      // A request may have arrived while this pass read the driver: never scale it away under that request.
      const activity = this.options.gateway.activity(spec.name, process);
      if (activity.inFlight > 0 || (activity.lastActivityMs ?? 0) > nowMs) return undefined;
    }
    const why = {
      from: decision.from,
      source: 'autoscaler' as const,
      reason: `${decision.direction === 'out' ? 'scale out' : decision.to === 0 ? 'scale to zero' : 'scale in'}: ${decision.reason}`,
      at: new Date(nowMs).toISOString(),
      metric,
      target,
      ...(recommendation.perAllocation === undefined ? {} : { value: tracked.status.value! }),
    };
    this.options.logger.info(
      { app: spec.name, process, from: decision.from, to: decision.to, reason: why.reason },
      'autoscaler: count changed',
    );
    this.options.scale.set(spec.name, process, decision.to, why);
    return { ...why, app: spec.name, process, to: decision.to };
  }

  /** The metric of `auto` for `process`, from its source. */
  private async sample(
    spec: CanonicalAppSpec,
    process: string,
    auto: AutoScale,
    current: number,
    period: { seconds: number; requests: number; inFlightMs: number } | undefined,
  ): Promise<MetricSample> {
    const metric = auto.metric;
    const timeoutMs = this.options.scrapeTimeoutMs ?? 2000;
    if (isRequestMetric(metric)) return this.requestSample(spec.name, process, metric, period);
    if (metric === AutoscaleMetric.kafkaLag)
      return kafkaLagSample({
        exporterUrl: this.options.kafkaExporterUrl,
        topic: auto.topic ?? '',
        group: auto.group,
        current,
        timeoutMs,
      });
    if (metric === AutoscaleMetric.custom) {
      const labels = Object.entries(auto.labels ?? {}).filter((e): e is [string, string] => e[1] !== undefined);
      return customSample({
        registry: this.options.registry,
        spec,
        process,
        name: auto.name ?? '',
        labels: Object.fromEntries(labels),
        timeoutMs,
      });
    }
    return this.allocationSample(spec.name, process, metric);
  }

  /** CPU or memory of the allocations that run and sampled it. */
  private async allocationSample(
    app: string,
    process: string,
    metric: AutoscaleMetric,
  ): Promise<{ total: number | undefined; sampled: number }> {
    const allocations = await this.runningAllocations(app, process);
    const values = allocations
      .map((a) =>
        metric === AutoscaleMetric.cpu
          ? a.cpu?.percent
          : a.memory.sampledAt !== undefined && a.memory.limitBytes > 0
            ? (a.memory.currentRssBytes / a.memory.limitBytes) * 100
            : undefined,
      )
      .filter((v): v is number => v !== undefined);
    return { total: values.length === 0 ? undefined : values.reduce((s, v) => s + v, 0), sampled: values.length };
  }

  /** Requests over the last period, spread over the passing instances the gateway balances across. */
  private async requestSample(
    app: string,
    process: string,
    metric: AutoscaleMetric,
    period: { seconds: number; requests: number; inFlightMs: number } | undefined,
  ): Promise<{ total: number | undefined; sampled: number }> {
    if (period === undefined) return { total: undefined, sampled: 0 };
    const instances = await this.options.registry.instances(processServiceName(app, process));
    const passing = instances.filter((i) => instanceStatus(i) === 'passing').length;
    const total =
      metric === AutoscaleMetric.requestsPerSecond
        ? period.requests / period.seconds
        : period.inFlightMs / (period.seconds * 1000);
    // With nothing passing (scaled to zero, starting), the whole load would fall on one allocation.
    return { total, sampled: Math.max(passing, 1) };
  }

  private async runningAllocations(app: string, process: string): Promise<Allocation[]> {
    const out: Allocation[] = [];
    for (const { scheduler } of await this.options.targets.all())
      for (const a of await scheduler.listAllocations({ app, taskGroup: process, usage: true }))
        if (a.kind === 'group' && a.status === 'running' && a.desiredStatus === 'run') out.push(a);
    return out;
  }

  /** The count of the process's service job(s) in the scheduler; undefined when none runs. */
  private async liveCount(app: string, process: string): Promise<number | undefined> {
    let found: number | undefined;
    for (const { scheduler } of await this.options.targets.all()) {
      for (const job of await scheduler.listJobs({ app })) {
        if (job.status !== 'running' || job.spec.type !== 'service') continue;
        const group = job.spec.taskGroups.find((g) => g.name === process);
        if (group) found = Math.max(found ?? 0, group.count);
      }
    }
    return found;
  }
}
