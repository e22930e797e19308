/**
 * Allocation watcher: every period (60 s by default) and on every scheduler change, compares each
 * allocation's task state with what it saw last and emits restart, OOM, allocation failure and
 * periodic child outcome events. Restarts and OOM kills also feed the task metrics.
 */
import type { Logger } from '../../platform/logger.js';
import type { ControlMetrics } from '../../platform/metrics/control-metrics.js';
import type { EventEmitterPort, EventInput } from '../../domain/events/event-port.js';
import type { Clock } from '../../domain/events/clock.js';
import { CorrelationKey } from '../../domain/events/correlation.js';
import type { Allocation, AllocationStatus } from '../../domain/scheduler/index.js';
import type { Substrate } from './substrate-queries.js';

export interface AllocationWatcherOptions {
  readonly events: EventEmitterPort;
  readonly substrate: Substrate;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics?: ControlMetrics;
  /** Scan period. @default 60000 */
  readonly intervalMs?: number;
  /** A periodic child running longer than this is reported hung. @default 3600000 */
  readonly hungAfterMs?: number;
}

interface Seen {
  status: AllocationStatus;
  restarts: number;
  oomMark: string | undefined;
  lastEventType?: string;
}

/** Watches allocations and emits their events. */
export class AllocationWatcher {
  private readonly seen = new Map<string, Seen>();
  private readonly oomCounts = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private scanning: Promise<void> | undefined;
  private baselined = false;

  constructor(private readonly options: AllocationWatcherOptions) {}

  /** Records a baseline of what already exists (no events for the past), then scans periodically. */
  async start(): Promise<void> {
    await this.scan();
    this.baselined = true;
    this.timer = setInterval(() => void this.scan(), this.options.intervalMs ?? 60_000);
    this.timer.unref();
  }

  close(): void {
    clearInterval(this.timer);
  }

  /** Resolves when no scan is running (shutdown waits for it before the database closes). */
  idle(): Promise<void> {
    return this.scanning ?? Promise.resolve();
  }

  /** One pass over every allocation of every target. */
  scan(): Promise<void> {
    this.scanning ??= (async () => {
      try {
        for (const scheduler of await this.options.substrate.schedulers()) {
          for (const allocation of await scheduler.listAllocations({ includeTerminal: true }))
            await this.observe(allocation);
        }
      } catch (error) {
        this.options.logger.warn({ err: error }, 'allocation scan failed');
      } finally {
        this.scanning = undefined;
      }
    })();
    return this.scanning;
  }

  /** Compares one allocation with what was seen and emits what changed. */
  async observe(allocation: Allocation): Promise<void> {
    const before = this.seen.get(allocation.id);
    const task = allocation.task;
    const oomMark = task.oomKilled ? `${task.restarts}:${task.lastRestartAt ?? task.finishedAt ?? ''}` : undefined;
    const now: Seen = {
      status: allocation.status,
      restarts: task.restarts,
      oomMark,
      lastEventType: before?.lastEventType,
    };
    this.seen.set(allocation.id, now);
    const taskLabels = { app: allocation.app, process: allocation.taskGroup, task: task.name };
    this.options.metrics?.taskRestarts.set(taskLabels, task.restarts);
    // Every observed task has an OOM series from its first sight (0), so a first kill is an increase.
    const oomKey = `${allocation.app}/${allocation.taskGroup}/${task.name}`;
    if (!this.oomCounts.has(oomKey)) {
      this.oomCounts.set(oomKey, 0);
      this.options.metrics?.taskOomKills.set(taskLabels, 0);
    }
    if (!this.baselined && before === undefined) return;
    const emits: EventInput[] = [];
    const common = {
      allocationId: allocation.id,
      jobId: allocation.jobId,
      taskGroup: allocation.taskGroup,
      task: task.name,
      process: allocation.taskGroup,
      restartCount: task.restarts,
      lastMessage: task.lastEventMessage ?? null,
    };
    const restartKey = CorrelationKey.restarts(allocation.app, allocation.taskGroup, task.name);
    if (task.restarts > (before?.restarts ?? 0)) {
      emits.push({
        type: 'scheduler.task.restarted',
        severity: 'warning',
        app: allocation.app,
        title: `${allocation.app}/${allocation.taskGroup} task ${task.name} restarted (${task.restarts} restarts)`,
        body: `Allocation ${allocation.id} restarted task ${task.name}; last message: ${task.lastEventMessage ?? 'none'}`,
        dedupeKey: `${allocation.id}:restart:${task.restarts}`,
        metadata: { ...common, correlationKey: restartKey, previousEventType: before?.lastEventType ?? null },
      });
    }
    if (oomMark !== undefined && oomMark !== before?.oomMark) {
      this.oomCounts.set(oomKey, (this.oomCounts.get(oomKey) ?? 0) + 1);
      this.options.metrics?.taskOomKills.set(taskLabels, this.oomCounts.get(oomKey)!);
      emits.push({
        type: 'scheduler.task.oom_killed',
        severity: 'critical',
        app: allocation.app,
        title: `${allocation.app}/${allocation.taskGroup} task ${task.name} was OOM killed`,
        body: `Allocation ${allocation.id} exceeded its memory limit of ${Math.round(allocation.memory.limitBytes / 1048576)} MB; last message: ${task.lastEventMessage ?? 'none'}`,
        dedupeKey: `${allocation.id}:oom:${oomMark}`,
        metadata: { ...common, correlationKey: restartKey, previousEventType: before?.lastEventType ?? null },
      });
    }
    if (before !== undefined && before.status !== allocation.status)
      emits.push(...this.statusEvents(allocation, before.status, common));
    if (
      allocation.kind === 'periodic_child' &&
      allocation.status === 'running' &&
      task.startedAt !== undefined &&
      this.options.clock.now() - Date.parse(task.startedAt) > (this.options.hungAfterMs ?? 3_600_000)
    ) {
      emits.push({
        type: 'cron.hung',
        severity: 'critical',
        app: allocation.app,
        title: `${allocation.app}/${allocation.taskGroup} periodic run appears hung`,
        body: `Child ${allocation.id} has run since ${task.startedAt}`,
        dedupeKey: `${allocation.id}:hung`,
        metadata: {
          ...common,
          correlationKey: CorrelationKey.cron(allocation.app, allocation.taskGroup),
          previousState: allocation.status,
        },
      });
    }
    for (const input of emits) {
      try {
        await this.options.events.emit(input);
        now.lastEventType = input.type;
      } catch (error) {
        this.options.logger.warn({ err: error, type: input.type }, 'allocation event not recorded');
      }
    }
  }

  private statusEvents(
    allocation: Allocation,
    previous: AllocationStatus,
    common: Record<string, unknown>,
  ): EventInput[] {
    const status = allocation.status;
    const base = { app: allocation.app, dedupeKey: `${allocation.id}:status:${status}` };
    const message = allocation.task.lastEventMessage ?? allocation.statusDescription ?? 'none';
    if (allocation.kind === 'periodic_child') {
      const key = CorrelationKey.cron(allocation.app, allocation.taskGroup);
      const metadata = { ...common, correlationKey: key, previousState: previous };
      if (status === 'complete')
        return [
          {
            ...base,
            type: 'cron.succeeded',
            severity: 'info',
            title: `${allocation.app}/${allocation.taskGroup} periodic run succeeded`,
            body: `Child ${allocation.id} completed`,
            metadata,
          },
        ];
      if (status === 'failed')
        return [
          {
            ...base,
            type: 'cron.failed',
            severity: 'critical',
            title: `${allocation.app}/${allocation.taskGroup} periodic run failed`,
            body: `Child ${allocation.id} failed: ${message}`,
            metadata,
          },
        ];
      if (status === 'lost')
        return [
          {
            ...base,
            type: 'cron.lost',
            severity: 'critical',
            title: `${allocation.app}/${allocation.taskGroup} periodic run lost`,
            body: `Child ${allocation.id} was lost: ${message}`,
            metadata,
          },
        ];
      return [];
    }
    const metadata = {
      ...common,
      correlationKey: CorrelationKey.allocation(allocation.app, allocation.taskGroup),
      previousState: previous,
    };
    if (status === 'failed')
      return [
        {
          ...base,
          type: 'scheduler.allocation.failed',
          severity: 'critical',
          title: `${allocation.app}/${allocation.taskGroup} allocation failed`,
          body: `Allocation ${allocation.id} failed: ${message}`,
          metadata,
        },
      ];
    if (status === 'lost')
      return [
        {
          ...base,
          type: 'scheduler.allocation.lost',
          severity: 'critical',
          title: `${allocation.app}/${allocation.taskGroup} allocation lost`,
          body: `Allocation ${allocation.id} was lost: ${message}`,
          metadata,
        },
      ];
    return [];
  }
}
