/**
 * Idle scale-down: a gateway-managed process (`scaling.min: 0`) that served no gateway request for
 * the idle period is scaled back to zero, which closes the wake loop.
 */
import type { Logger } from '../../platform/logger.js';
import type { SchedulerTargets } from '../apps/scheduler-targets.js';
import type { GatewayScale } from './gateway-scale.js';
import type { WakeGateway } from './wake-gateway.js';

export interface IdleScalerOptions {
  readonly gateway: WakeGateway;
  readonly targets: SchedulerTargets;
  readonly scale: GatewayScale;
  readonly logger: Logger;
  /** Idle period; 0 disables scale-down. @default 15 minutes */
  readonly idleMs: number;
  /** True when the autoscaler runs: it then takes autoscaled processes to zero, and this scaler leaves them alone. */
  readonly autoscalerOwnsAutoscaled?: boolean;
  readonly now?: () => number;
}

/** Periodically scales idle gateway-managed processes to zero. */
export class IdleScaler {
  private timer: NodeJS.Timeout | undefined;
  /** First time a running process was seen without gateway activity (so it gets a full idle period). */
  private readonly firstSeen = new Map<string, number>();
  /** Processes scaled down so far (for tests and the operator view). */
  scaledDown = 0;

  constructor(private readonly options: IdleScalerOptions) {}

  /** Starts the periodic sweep (every quarter of the idle period, between 1 s and 30 s). */
  start(): void {
    if (this.options.idleMs <= 0) return;
    const period = Math.min(30_000, Math.max(1000, Math.floor(this.options.idleMs / 4)));
    this.timer = setInterval(
      () => void this.sweep().catch((err: unknown) => this.options.logger.warn({ err }, 'idle sweep failed')),
      period,
    );
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** One pass at `nowMs` (default: now); returns the processes (`app/process`) it scaled to zero. */
  async sweep(nowMs?: number): Promise<string[]> {
    if (this.options.idleMs <= 0) return [];
    const now = nowMs ?? (this.options.now ?? Date.now)();
    const done: string[] = [];
    const seen = new Set<string>();
    for (const target of this.options.gateway.targets()) {
      const key = `${target.app}/${target.process}`;
      // An autoscaled process goes to zero by the autoscaler's stabilization window instead.
      if (!target.gatewayManaged || (target.autoscaled && this.options.autoscalerOwnsAutoscaled) || seen.has(key))
        continue;
      seen.add(key);
      const count = await this.count(target.app, target.process);
      if (count === 0) {
        this.firstSeen.delete(key);
        continue;
      }
      const activity = this.options.gateway.activity(target.app, target.process);
      if (activity.inFlight > 0) continue;
      const since = activity.lastActivityMs ?? this.firstSeen.get(key) ?? now;
      if (!this.firstSeen.has(key)) this.firstSeen.set(key, now);
      if (now - since < this.options.idleMs) continue;
      this.options.scale.set(target.app, target.process, 0, {
        from: count,
        source: 'idle',
        reason: `no request through the wake gateway for ${Math.round((now - since) / 1000)} s (idle period ${Math.round(this.options.idleMs / 1000)} s)`,
      });
      this.firstSeen.delete(key);
      this.scaledDown += 1;
      done.push(key);
      this.options.logger.info(
        { app: target.app, process: target.process, idleMs: now - since },
        'idle: scaling to zero',
      );
    }
    return done;
  }

  private async count(app: string, process: string): Promise<number> {
    for (const { scheduler } of await this.options.targets.all()) {
      for (const job of await scheduler.listJobs({ app })) {
        const group =
          job.status === 'running' && job.spec.type === 'service'
            ? job.spec.taskGroups.find((g) => g.name === process)
            : undefined;
        if (group) return group.count;
      }
    }
    return 0;
  }
}
