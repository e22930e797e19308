/**
 * Waiting on allocations: event-driven readiness on top of the scheduler port's watch, with a
 * timeout as an upper bound only.
 */
import { TimeoutError } from '../errors.js';
import type { Allocation } from './allocation.js';
import type { AllocationFilter, Scheduler } from './scheduler.js';

/** Options for {@link waitForAllocations}. */
export interface WaitForAllocationsOptions {
  readonly filter?: AllocationFilter;
  /** Upper bound in milliseconds. @default 30000 */
  readonly timeoutMs?: number;
  /** Names the awaited condition in the timeout message. */
  readonly description?: string;
}

/**
 * Resolves with the allocations once `predicate` holds for the filtered list, re-checking on every
 * allocation change; rejects with `TimeoutError` after the timeout.
 */
export function waitForAllocations(
  scheduler: Scheduler,
  predicate: (allocations: readonly Allocation[]) => boolean,
  options: WaitForAllocationsOptions = {},
): Promise<readonly Allocation[]> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  return new Promise((resolve, reject) => {
    let settled = false;
    let checking = false;
    let again = false;
    const finish = (fn: () => void): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      unsubscribe();
      fn();
    };
    const check = async (): Promise<void> => {
      if (checking) {
        again = true;
        return;
      }
      checking = true;
      try {
        do {
          again = false;
          const allocations = await scheduler.listAllocations(options.filter);
          if (predicate(allocations)) {
            finish(() => resolve(allocations));
            return;
          }
        } while (again && !settled);
      } catch (error) {
        finish(() => reject(error instanceof Error ? error : new Error(String(error))));
      } finally {
        checking = false;
      }
    };
    const timer = setTimeout(() => {
      finish(() =>
        reject(new TimeoutError(`allocations: ${options.description ?? 'condition'} not reached within ${timeoutMs}ms`)),
      );
    }, timeoutMs);
    const unsubscribe = scheduler.watch(() => void check());
    void check();
  });
}
