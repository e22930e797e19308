/**
 * Service health watcher: follows registry health changes and emits service.health.warning,
 * service.health.critical and service.health.recovered on each service's transitions.
 */
import type { Logger } from '../../platform/logger.js';
import type { EventEmitterPort } from '../../domain/events/event-port.js';
import { CorrelationKey } from '../../domain/events/correlation.js';
import {
  instanceStatus,
  isStarting,
  worstStatus,
  type HealthChange,
  type HealthStatus,
  type Registry,
} from '../../domain/registry/index.js';

interface ServiceState {
  status: HealthStatus;
  app: string;
  process: string;
  lastEventType: string | null;
}

/** Emits health transition events per registry service. */
export class HealthWatcher {
  private readonly state = new Map<string, ServiceState>();
  private chain: Promise<void> = Promise.resolve();
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly registry: Registry,
    private readonly events: EventEmitterPort,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.unsubscribe = this.registry.watch((change) => {
      this.chain = this.chain
        .then(() => this.onChange(change))
        .catch((error: unknown) => this.logger.warn({ err: error }, 'health event not recorded'));
    });
  }

  close(): void {
    this.unsubscribe?.();
  }

  /** Resolves when every change seen so far was handled (tests). */
  idle(): Promise<void> {
    return this.chain;
  }

  private async onChange(change: HealthChange): Promise<void> {
    // This instance as it was at the change (later changes are handled in turn), the others as they are now.
    const current = await this.registry.instances(change.service);
    const others = current.filter((i) => i.id !== change.instanceId);
    const all = change.instance ? [...others, change.instance] : others;
    // An instance in its start-up window is expected to fail its first probes: it has no say yet.
    const instances = all.filter((i) => !isStarting(i));
    const known = this.state.get(change.service);
    const app = change.instance?.app ?? all[0]?.app ?? known?.app;
    const process = change.instance?.process ?? all[0]?.process ?? known?.process;
    if (app === undefined || process === undefined) return;
    if (instances.length === 0) return; // deregistered or all starting: no verdict, keep the last one
    const status = worstStatus(instances.map(instanceStatus));
    const previous = known?.status ?? 'passing';
    const state: ServiceState = known ?? { status, app, process, lastEventType: null };
    state.status = status;
    this.state.set(change.service, state);
    if (status === previous) return;
    const type =
      status === 'passing'
        ? 'service.health.recovered'
        : status === 'warning'
          ? 'service.health.warning'
          : 'service.health.critical';
    const severity = status === 'passing' ? 'info' : status;
    const failing = instances.flatMap((i) =>
      i.checks.filter((c) => c.status !== 'passing').map((c) => `${i.id}: ${c.output}`),
    );
    await this.events.emit({
      type,
      severity,
      app,
      title: `${change.service} is ${status}`,
      body:
        status === 'passing'
          ? `${change.service} returned to passing from ${previous}`
          : `Failing checks: ${failing.join('; ').slice(0, 2000)}`,
      metadata: {
        correlationKey: CorrelationKey.health(app, process),
        previousState: previous,
        previousEventType: state.lastEventType,
        service: change.service,
        process,
      },
    });
    state.lastEventType = type;
  }
}
