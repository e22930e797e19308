/**
 * Waits for a condition that changes when something reports a change: re-checked at once and after
 * every notification from `sources` (no fixed sleeps), bounded by a timeout.
 */
import type { Controller } from '../../controllers/runtime/controller.js';
import { waitForChange as waitForDomainChange, type ChangeSource } from '../../domain/wait-for-change.js';

export type { ChangeSource };

/** Resolves with the first truthy value of `check`, evaluated now and after each change reported by `sources`. */
export function waitForChange<T>(
  sources: readonly ChangeSource[],
  check: () => Promise<T | undefined | false> | T | undefined | false,
  options: { timeoutMs?: number; what?: string } = {},
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 20_000;
  return waitForDomainChange<T>(sources, async () => (await check()) || undefined, {
    timeoutMs,
    onTimeout: () => new Error(`timed out after ${timeoutMs} ms waiting for ${options.what ?? 'a condition'}`),
  });
}

/** `waitForChange` driven by the reconciles of `controllers`. */
export function waitForReconciled<T>(
  controllers: readonly Controller[],
  check: () => Promise<T | undefined | false> | T | undefined | false,
  options: { timeoutMs?: number; what?: string } = {},
): Promise<T> {
  return waitForChange(
    controllers.map(
      (controller): ChangeSource =>
        (listener) =>
          controller.onReconciled(() => listener()),
    ),
    check,
    options,
  );
}
