/**
 * Local registry: the in-process registry of the embedded default, fed by the local driver's
 * health checks and read by controllers through the registry port.
 */
import { EventEmitter } from 'node:events';
import {
  instanceStatus,
  type CheckUpdate,
  type HealthChange,
  type Registry,
  type RegistryWriter,
  type ServiceInstance,
  type Unsubscribe,
} from '../../domain/registry/index.js';

/** An in-memory registry; instances are re-registered by the driver when it (re)starts. */
export class LocalRegistry implements Registry, RegistryWriter {
  readonly #instances = new Map<string, ServiceInstance>();
  readonly #events = new EventEmitter();
  /** Callers waiting for a passing instance, by service (ADR 0163). */
  readonly #awaited = new Map<string, number>();
  readonly #awaitedEvents = new EventEmitter();

  constructor() {
    this.#events.setMaxListeners(0);
    this.#awaitedEvents.setMaxListeners(0);
  }

  /** Registers or replaces an instance. */
  register(instance: ServiceInstance): void {
    const previous = this.#instances.get(instance.id);
    this.#instances.set(instance.id, instance);
    this.#emit({
      service: instance.service,
      instanceId: instance.id,
      instance,
      kind: previous ? 'updated' : 'registered',
      status: instanceStatus(instance),
      ...(previous ? { previousStatus: instanceStatus(previous) } : {}),
    });
  }

  /** Removes an instance; unknown ids are ignored. */
  deregister(instanceId: string): void {
    const previous = this.#instances.get(instanceId);
    if (!previous) return;
    this.#instances.delete(instanceId);
    this.#emit({
      service: previous.service,
      instanceId,
      kind: 'deregistered',
      previousStatus: instanceStatus(previous),
    });
  }

  /** Records a check result; emits only when the status or output changed. */
  updateCheck(update: CheckUpdate): void {
    const instance = this.#instances.get(update.instanceId);
    if (!instance) return;
    const check = instance.checks.find((c) => c.id === update.checkId);
    if (!check) return;
    const starting = update.starting === true;
    const changed =
      check.status !== update.status || check.output !== update.output || (check.starting === true) !== starting;
    const next: ServiceInstance = {
      ...instance,
      checks: instance.checks.map((c) =>
        c.id === update.checkId
          ? {
              id: c.id,
              name: c.name,
              status: update.status,
              output: update.output,
              lastCheckedAt: update.checkedAt,
              ...(starting ? { starting } : {}),
            }
          : c,
      ),
    };
    this.#instances.set(instance.id, next);
    if (changed) {
      this.#emit({
        service: next.service,
        instanceId: next.id,
        instance: next,
        kind: 'updated',
        previousStatus: instanceStatus(instance),
        status: instanceStatus(next),
      });
    }
  }

  async listServices(): Promise<readonly string[]> {
    return [...new Set([...this.#instances.values()].map((i) => i.service))].sort();
  }

  async instances(service: string): Promise<readonly ServiceInstance[]> {
    return [...this.#instances.values()].filter((i) => i.service === service).sort((a, b) => a.id.localeCompare(b.id));
  }

  /** Synchronous read of one instance, for the driver. */
  instance(instanceId: string): ServiceInstance | undefined {
    return this.#instances.get(instanceId);
  }

  watch(listener: (change: HealthChange) => void): Unsubscribe {
    this.#events.on('change', listener);
    return () => this.#events.off('change', listener);
  }

  markAwaited(service: string): Unsubscribe {
    const count = this.#awaited.get(service) ?? 0;
    this.#awaited.set(service, count + 1);
    if (count === 0) this.#awaitedEvents.emit(service);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.#awaited.get(service) ?? 1) - 1;
      if (left > 0) this.#awaited.set(service, left);
      else this.#awaited.delete(service);
    };
  }

  isAwaited(service: string): boolean {
    return this.#awaited.has(service);
  }

  onAwaited(service: string, listener: () => void): Unsubscribe {
    this.#awaitedEvents.on(service, listener);
    return () => this.#awaitedEvents.off(service, listener);
  }

  #emit(change: HealthChange): void {
    this.#events.emit('change', change);
  }
}
