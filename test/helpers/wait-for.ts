/**
 * Waits for a condition that changes when a controller reconciles: re-checked after every
 * reconcile (no fixed sleeps), bounded by a timeout.
 */
import type { Controller } from '../../controllers/runtime/controller.js';

/** Resolves with the first truthy value of `check`, evaluated now and after each reconcile of `controllers`. */
export async function waitForReconciled<T>(controllers: readonly Controller[], check: () => Promise<T | undefined | false> | T | undefined | false, options: { timeoutMs?: number; what?: string } = {}): Promise<T> {
  const first = await check();
  if (first) return first;
  return new Promise<T>((resolve, reject) => {
    let busy = false;
    let again = false;
    const unsubscribes: (() => void)[] = [];
    const finish = (fn: () => void) => {
      clearTimeout(timer);
      for (const unsubscribe of unsubscribes) unsubscribe();
      fn();
    };
    const timer = setTimeout(() => finish(() => reject(new Error(`timed out after ${options.timeoutMs ?? 20_000} ms waiting for ${options.what ?? 'a condition'}`))), options.timeoutMs ?? 20_000);
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
        } while (again);
      } catch (error) {
        finish(() => reject(error instanceof Error ? error : new Error(String(error))));
      } finally {
        busy = false;
      }
    };
    for (const controller of controllers) unsubscribes.push(controller.onReconciled(() => void probe()));
  });
}
