/**
 * Waiting for health: event-driven readiness on top of the registry port's watch.
 */
import { TimeoutError } from '../errors.js';
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
  return new Promise((resolve, reject) => {
    let settled = false;
    const finish = (fn: () => void): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      unsubscribe();
      fn();
    };
    const check = async (): Promise<void> => {
      try {
        const matching = (await registry.instances(service)).filter((i) => instanceStatus(i) === wanted);
        if (matching.length >= count) finish(() => resolve(matching));
      } catch (error) {
        finish(() => reject(error instanceof Error ? error : new Error(String(error))));
      }
    };
    const timer = setTimeout(() => {
      finish(() => reject(new TimeoutError(`registry: ${service} did not reach ${count} ${wanted} instance(s) within ${timeoutMs}ms`)));
    }, timeoutMs);
    const unsubscribe = registry.watch((change) => {
      if (change.service === service) void check();
    });
    void check();
  });
}
