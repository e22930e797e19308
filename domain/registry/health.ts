/**
 * Health: the registry's verdict on an instance or service, from its checks.
 */

/** Check status, worst last: passing, warning, critical. */
export const HealthStatus = { passing: 'passing', warning: 'warning', critical: 'critical' } as const;
export type HealthStatus = (typeof HealthStatus)[keyof typeof HealthStatus];

const RANK: Record<HealthStatus, number> = { passing: 0, warning: 1, critical: 2 };

/** The worst of several statuses; no statuses at all is passing. */
export function worstStatus(statuses: Iterable<HealthStatus>): HealthStatus {
  let worst: HealthStatus = HealthStatus.passing;
  for (const status of statuses) if (RANK[status] > RANK[worst]) worst = status;
  return worst;
}

/** One health check of an instance and its latest result. */
export interface HealthCheck {
  readonly id: string;
  readonly name: string;
  readonly status: HealthStatus;
  /** What the check saw (status line, body excerpt or error). */
  readonly output: string;
  /** ISO 8601 UTC of the latest run; absent before the first run. */
  readonly lastCheckedAt?: string;
  /**
   * True while the instance is inside its start-up window: it has not passed yet, and a failing
   * probe is expected rather than news. Such an instance is not routed to and raises no health event.
   */
  readonly starting?: boolean;
}

/** One registered instance of a service. */
export interface ServiceInstance {
  /** Unique across the registry, e.g. `<allocation-id>-<service>`. */
  readonly id: string;
  readonly service: string;
  readonly app: string;
  readonly process: string;
  readonly allocationId: string;
  readonly address: string;
  readonly port: number;
  readonly tags: readonly string[];
  readonly checks: readonly HealthCheck[];
}

/** Status of an instance: the worst of its checks (passing when it has none). */
export function instanceStatus(instance: ServiceInstance): HealthStatus {
  return worstStatus(instance.checks.map((c) => c.status));
}

/** What operators see of an instance: `starting` inside its start-up window, else its status. */
export type InstanceHealth = HealthStatus | 'starting';

/** True while any check of the instance is still in its start-up window (and none failed after it). */
export function isStarting(instance: ServiceInstance): boolean {
  return instance.checks.some((c) => c.starting === true);
}

/** The instance's health as operators see it: `starting` inside the start-up window, else {@link instanceStatus}. */
export function instanceHealth(instance: ServiceInstance): InstanceHealth {
  return isStarting(instance) ? 'starting' : instanceStatus(instance);
}

/** A change in an instance's health (or its registration), delivered to watchers. */
export interface HealthChange {
  readonly service: string;
  readonly instanceId: string;
  /** The instance after the change; absent when it was deregistered. */
  readonly instance?: ServiceInstance;
  readonly previousStatus?: HealthStatus;
  readonly status?: HealthStatus;
  readonly kind: 'registered' | 'updated' | 'deregistered';
}
