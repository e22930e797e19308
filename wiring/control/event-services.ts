/**
 * Starts the event services: the event service, outbox dispatcher, notification channels,
 * watchers (allocations, health, cron, capacity) and metrics, over control.db and the substrate.
 */
import type { Db } from '../../store/database.js';
import type { Logger } from '../../platform/logger.js';
import type { ControlMetrics } from '../../platform/metrics/control-metrics.js';
import type { SinkConfig } from '../../platform/notifications/event-sink.js';
import type { OutboundPolicy } from '../../platform/outbound/outbound-guard.js';
import { systemClock, type Clock } from '../../domain/events/clock.js';
import type { Registry } from '../../domain/registry/index.js';
import type { Scheduler } from '../../domain/scheduler/index.js';
import { SINK_TARGET } from '../../store/control/event-outbox.js';
import { hostCapacitySample } from '../../platform/host/host-probes.js';
import { resolveHostId } from '../../controllers/events/host-id.js';
import { sinkViews } from '../../controllers/events/sink-view.js';
import { EventService } from '../../controllers/events/event-service.js';
import { EventDispatcher } from '../../controllers/events/event-dispatcher.js';
import { NotificationService } from '../../controllers/events/notification-service.js';
import { AllocationWatcher } from '../../controllers/events/allocation-watcher.js';
import { HealthWatcher } from '../../controllers/events/health-watcher.js';
import { CronWatcher } from '../../controllers/events/cron-watcher.js';
import {
  CapacityWatcher,
  type CapacityMinimums,
  type CapacitySample,
} from '../../controllers/events/capacity-watcher.js';
import { reconcileEvents } from '../../controllers/events/reconcile-events.js';
import type { Substrate } from '../../controllers/events/substrate-queries.js';
import type { EventServices } from '../../controllers/events/event-services.js';

export type { EventServices };

export interface EventServicesOptions {
  readonly db: Db;
  readonly logger: Logger;
  readonly metrics: ControlMetrics;
  readonly clock?: Clock;
  readonly source: string;
  readonly environment: string;
  readonly sink: SinkConfig | undefined;
  readonly outbound: OutboundPolicy;
  /** Scheduler targets and registry; absent runs the event service without watchers. */
  readonly substrate?: {
    schedulers(): Promise<readonly Scheduler[]>;
    registry: Registry;
    watchSchedulers?: (listener: Parameters<Scheduler['watch']>[0]) => () => void;
  };
  readonly allocationWatchIntervalMs?: number;
  readonly capacity?: {
    readonly intervalMs: number;
    readonly minimums: CapacityMinimums;
    readonly hostId: string | undefined;
    readonly dataDir: string;
    readonly probe?: () => Promise<CapacitySample>;
    readonly eventEnvironment?: string;
  };
  /** Dispatcher retry base delay. @default 500 */
  readonly retryBaseMs?: number;
}

/** Starts the event services and its watchers. */
export async function startEventServices(options: EventServicesOptions): Promise<EventServices> {
  const clock = options.clock ?? systemClock;
  const log = options.logger.child({ component: 'events' });
  const notifications = new NotificationService(
    options.db,
    clock,
    options.outbound,
    options.source,
    options.environment,
  );
  const hostId = resolveHostId(options.db, options.capacity?.hostId, new Date(clock.now()).toISOString());
  // Set when a commit queued an outbox row; the next batch published after it (at the latest its
  // own) kicks the dispatcher. A commit that queued none needs no pass (ADR 0200): retries have
  // the dispatcher's own timer.
  let deliveriesQueued = false;
  const events = new EventService({
    db: options.db,
    clock,
    source: options.source,
    environment: options.environment,
    hostId,
    logger: log,
    deliveryTargets: (row) => {
      const targets = [...(options.sink ? [SINK_TARGET] : []), ...notifications.targetsFor(row.severity)];
      if (targets.length > 0) deliveriesQueued = true;
      return targets;
    },
  });
  const dispatcher = new EventDispatcher({
    db: options.db,
    clock,
    logger: log,
    sink: options.sink,
    outbound: options.outbound,
    retryBaseMs: options.retryBaseMs,
  });
  events.subscribe((changes) => {
    for (const change of changes)
      if (change.kind === 'recorded')
        options.metrics.recordEvent(change.event.type, change.event.severity, change.event.occurredAt);
    if (deliveriesQueued) {
      deliveriesQueued = false;
      dispatcher.kick();
    }
  });
  dispatcher.start();

  const timers: NodeJS.Timeout[] = [];
  const unsubscribes: (() => void)[] = [];
  // Work the watchers started and have not finished; `close` waits for it.
  const inFlight = new Set<Promise<void>>();
  const track = (work: Promise<unknown>): void => {
    const settled = work.then(
      () => undefined,
      (error: unknown) => log.warn({ err: error }, 'event watcher work failed'),
    );
    inFlight.add(settled);
    void settled.finally(() => inFlight.delete(settled));
  };
  let allocations: AllocationWatcher | undefined;
  let health: HealthWatcher | undefined;
  let cron: CronWatcher | undefined;
  let capacityWatcher: CapacityWatcher | undefined;
  const substrate: Substrate | undefined = options.substrate
    ? { schedulers: () => options.substrate!.schedulers(), registry: options.substrate.registry }
    : undefined;
  if (options.substrate && substrate) {
    allocations = new AllocationWatcher({
      events,
      substrate,
      clock,
      logger: log,
      metrics: options.metrics,
      intervalMs: options.allocationWatchIntervalMs,
    });
    await allocations.start();
    const watcher = allocations;
    if (options.substrate.watchSchedulers)
      unsubscribes.push(options.substrate.watchSchedulers((change) => track(watcher.observe(change.allocation))));
    health = new HealthWatcher(options.substrate.registry, events, log);
    health.start();
    cron = new CronWatcher({ events, substrate, clock, logger: log, metrics: options.metrics });
    const cronWatcher = cron;
    const cronTimer = setInterval(
      () => track(cronWatcher.check().catch((error: unknown) => log.warn({ err: error }, 'missed-run check failed'))),
      Math.min(options.allocationWatchIntervalMs ?? 60_000, 60_000),
    );
    cronTimer.unref();
    timers.push(cronTimer);
  }
  if (options.capacity && options.capacity.intervalMs > 0) {
    const capacity = options.capacity;
    const probe = capacity.probe ?? (() => hostCapacitySample(capacity.dataDir));
    const sampled = async (): Promise<CapacitySample> => {
      const sample = await probe();
      options.metrics.hostDiskFree.set(sample.freeDiskBytes);
      if (sample.totalDiskBytes !== undefined) options.metrics.hostDiskTotal.set(sample.totalDiskBytes);
      return sample;
    };
    capacityWatcher = new CapacityWatcher({
      db: options.db,
      events,
      clock,
      logger: log,
      hostId,
      minimums: capacity.minimums,
      probe: sampled,
      source: options.source,
      eventEnvironment: capacity.eventEnvironment,
    });
    const watcher = capacityWatcher;
    const run = () =>
      track(watcher.check().catch((error: unknown) => log.warn({ err: error }, 'capacity check failed')));
    const capacityTimer = setInterval(run, capacity.intervalMs);
    capacityTimer.unref();
    timers.push(capacityTimer);
    run();
  }
  return {
    events,
    notifications,
    dispatcher,
    allocations,
    health,
    cron,
    capacityWatcher,
    hostId,
    reconcile: (request) => reconcileEvents({ db: options.db, clock, events, substrate }, request),
    sinks: () => sinkViews(options.db, options.sink, options.environment, options.source),
    async close() {
      for (const timer of timers) clearInterval(timer);
      for (const unsubscribe of unsubscribes) unsubscribe();
      allocations?.close();
      health?.close();
      dispatcher.close();
      // A check, scan or health change begun before the close still reads and writes control.db:
      // the caller closes the database only after they end.
      await Promise.allSettled([...inFlight, allocations?.idle(), health?.idle()]);
    },
  };
}
