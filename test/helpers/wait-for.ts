/**
 * Waits for a condition that changes when something reports a change: re-checked at once and after
 * every notification from `sources` (no fixed sleeps), bounded by a timeout.
 */
import type { Controller } from '../../controllers/runtime/controller.js';

/** Something that calls `listener` on every change and returns an unsubscribe function. */
export type ChangeSource = (listener: () => void) => () => void;

/** Resolves with the first truthy value of `check`, evaluated now and after each change reported by `sources`. */
export async function waitForChange<T>(sources: readonly ChangeSource[], check: () => Promise<T | undefined | false> | T | undefined | false, options: { timeoutMs?: number; what?: string } = {}): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 20_000;
  return new Promise<T>((resolve, reject) => {
    let done = false;
    let busy = false;
    let again = false;
    const unsubscribes: (() => void)[] = [];
    const finish = (fn: () => void) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      for (const unsubscribe of unsubscribes) unsubscribe();
      fn();
    };
    const timer = setTimeout(() => finish(() => reject(new Error(`timed out after ${timeoutMs} ms waiting for ${options.what ?? 'a condition'}`))), timeoutMs);
    const probe = async () => {
      if (busy) {
        again = true;
        return;
      }
      busy = true;
      try {
        do {
          again = false;
          const value = await check();
          if (value) return finish(() => resolve(value));
        } while (again && !done);
      } catch (error) {
        finish(() => reject(error instanceof Error ? error : new Error(String(error))));
      } finally {
        busy = false;
      }
    };
    for (const source of sources) unsubscribes.push(source(() => void probe()));
    void probe();
  });
}

/** `waitForChange` driven by the reconciles of `controllers`. */
export function waitForReconciled<T>(controllers: readonly Controller[], check: () => Promise<T | undefined | false> | T | undefined | false, options: { timeoutMs?: number; what?: string } = {}): Promise<T> {
  return waitForChange(controllers.map((controller): ChangeSource => (listener) => controller.onReconciled(() => listener())), check, options);
}
