/**
 * The running event services as the API sees them: the event service, notification channels, the
 * outbox dispatcher, the watchers and the evidence-based reconcile. `wiring/control/event-services.ts`
 * builds them.
 */
import type { EventService } from './event-service.js';
import type { EventDispatcher } from './event-dispatcher.js';
import type { NotificationService } from './notification-service.js';
import type { AllocationWatcher } from './allocation-watcher.js';
import type { HealthWatcher } from './health-watcher.js';
import type { CronWatcher } from './cron-watcher.js';
import type { CapacityWatcher } from './capacity-watcher.js';
import type { reconcileEvents, ReconcileRequest } from './reconcile-events.js';
import type { SinkView } from './sink-view.js';

/** The running event services. */
export interface EventServices {
  readonly events: EventService;
  readonly notifications: NotificationService;
  readonly dispatcher: EventDispatcher;
  readonly allocations: AllocationWatcher | undefined;
  readonly health: HealthWatcher | undefined;
  readonly cron: CronWatcher | undefined;
  readonly capacityWatcher: CapacityWatcher | undefined;
  readonly hostId: string;
  reconcile(request: ReconcileRequest): ReturnType<typeof reconcileEvents>;
  /** Configured sinks with delivery counts (never the secret). */
  sinks(): SinkView[];
  /** Stops the watchers and the dispatcher, and resolves once none of them has work in flight. */
  close(): Promise<void>;
}
