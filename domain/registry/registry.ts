/**
 * Registry port: where running instances are listed with their health, read by the control plane
 * and written by the substrate driver.
 */
import type { HealthChange, HealthStatus, ServiceInstance } from './health.js';

/** Removes a listener. */
export type Unsubscribe = () => void;

/** Read side of the registry, what controllers consume. */
export interface Registry {
  /** Names of services with at least one instance. */
  listServices(): Promise<readonly string[]>;
  /** Instances of a service (empty when unknown). */
  instances(service: string): Promise<readonly ServiceInstance[]>;
  /** Calls `listener` on every registration, check result change or deregistration. */
  watch(listener: (change: HealthChange) => void): Unsubscribe;
  /**
   * Says that a caller holds requests until `service` has a passing instance (a cold wake): the
   * driver's checks of its instances that have not passed yet look for the port eagerly instead of
   * on their start-up backoff, until every caller has called the returned function (ADR 0163).
   * Optional: a registry fed by checks it does not run ignores it.
   */
  markAwaited?(service: string): Unsubscribe;
}

/** A check result reported by a health checker. */
export interface CheckUpdate {
  readonly instanceId: string;
  readonly checkId: string;
  readonly status: HealthStatus;
  readonly output: string;
  readonly checkedAt: string;
  /** True while the instance is still in its start-up window (see `HealthCheck.starting`). */
  readonly starting?: boolean;
}

/** Write side of the registry, used by drivers that run their own checks. */
export interface RegistryWriter {
  register(instance: ServiceInstance): void;
  deregister(instanceId: string): void;
  updateCheck(update: CheckUpdate): void;
  /** True while some caller waits for a passing instance of `service` ({@link Registry.markAwaited}). */
  isAwaited?(service: string): boolean;
  /** Calls `listener` when `service` becomes awaited; returns an unsubscribe. */
  onAwaited?(service: string, listener: () => void): Unsubscribe;
}
