/**
 * Waiting for health: event-driven readiness on top of the registry port's watch.
 */
import { TimeoutError } from '../errors.js';
import { waitForChange } from '../wait-for-change.js';
import { instanceStatus, type HealthStatus, type ServiceInstance } from './health.js';
import type { Registry } from './registry.js';

/** Options for {@link waitForHealthyInstances}. */
export interface WaitForHealthOptions {
  /** Instances that must be passing. @default 1 */
  readonly count?: number;
  /** Upper bound in milliseconds. @default 30000 */
  readonly timeoutMs?: number;
  /** Status awaited. @default passing */
  readonly status?: HealthStatus;
}

/**
 * Resolves with the matching instances once at least `count` instances of `service` have `status`,
 * re-checking on each registry change; rejects with `TimeoutError` after the timeout.
 */
export function waitForHealthyInstances(
  registry: Registry,
  service: string,
  options: WaitForHealthOptions = {},
): Promise<readonly ServiceInstance[]> {
  const count = options.count ?? 1;
  const wanted = options.status ?? 'passing';
  const timeoutMs = options.timeoutMs ?? 30_000;
  return waitForChange<readonly ServiceInstance[]>(
    [
      (listener) =>
        registry.watch((change) => {
          if (change.service === service) listener();
        }),
    ],
    async () => {
      const matching = (await registry.instances(service)).filter((i) => instanceStatus(i) === wanted);
      return matching.length >= count ? matching : undefined;
    },
    {
      timeoutMs,
      onTimeout: () =>
        new TimeoutError(`registry: ${service} did not reach ${count} ${wanted} instance(s) within ${timeoutMs}ms`),
    },
  );
}
