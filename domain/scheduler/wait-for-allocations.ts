/**
 * Waiting on allocations: event-driven readiness on top of the scheduler port's watch, with a
 * timeout as an upper bound only.
 */
import { TimeoutError } from '../errors.js';
import { waitForChange } from '../wait-for-change.js';
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
  return waitForChange<readonly Allocation[]>(
    [(listener) => scheduler.watch(listener)],
    async () => {
      const allocations = await scheduler.listAllocations(options.filter);
      return predicate(allocations) ? allocations : undefined;
    },
    {
      timeoutMs,
      onTimeout: () =>
        new TimeoutError(`allocations: ${options.description ?? 'condition'} not reached within ${timeoutMs}ms`),
    },
  );
}
