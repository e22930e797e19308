/**
 * The one wait for a condition that changes when something reports a change (a scheduler's or a
 * registry's watch, a controller's reconcile): the condition is checked at once and after every
 * change (checks never overlap: a change during a check runs one more), optionally on a period,
 * and the wait ends at a timeout or an abort. No fixed sleeps.
 */

/** Something that calls `listener` on every change and returns an unsubscribe function. */
export type ChangeSource = (listener: () => void) => () => void;

/** Options of {@link waitForChange}. */
export interface WaitForChangeOptions<T> {
  readonly timeoutMs: number;
  /** What the wait ends with at the timeout: an Error rejects, `{ value }` resolves. */
  readonly onTimeout: () => Error | { readonly value: T };
  /** Also re-check on this period (for conditions some changes do not report). */
  readonly pollMs?: number;
  /** Rejects with the abort reason when aborted. */
  readonly signal?: AbortSignal;
}

/** Resolves with the first value of `check` that is not undefined; `check` errors reject. */
export function waitForChange<T>(
  sources: readonly ChangeSource[],
  check: () => Promise<T | undefined> | T | undefined,
  options: WaitForChangeOptions<T>,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    let busy = false;
    let again = false;
    const unsubscribes: (() => void)[] = [];
    const finish = (fn: () => void): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (poll !== undefined) clearInterval(poll);
      options.signal?.removeEventListener('abort', onAbort);
      for (const unsubscribe of unsubscribes) unsubscribe();
      fn();
    };
    const probe = async (): Promise<void> => {
      if (busy) {
        again = true;
        return;
      }
      busy = true;
      try {
        do {
          again = false;
          if (settled) return;
          const value = await check();
          if (value !== undefined) {
            finish(() => resolve(value));
            return;
          }
        } while (again && !settled);
      } catch (error) {
        finish(() => reject(error instanceof Error ? error : new Error(String(error))));
      } finally {
        busy = false;
      }
    };
    const onAbort = (): void =>
      finish(() => reject(options.signal?.reason instanceof Error ? options.signal.reason : new Error('aborted')));
    const timer = setTimeout(() => {
      const outcome = options.onTimeout();
      finish(() => (outcome instanceof Error ? reject(outcome) : resolve(outcome.value)));
    }, options.timeoutMs);
    const poll = options.pollMs === undefined ? undefined : setInterval(() => void probe(), options.pollMs);
    options.signal?.addEventListener('abort', onAbort);
    for (const source of sources) unsubscribes.push(source(() => void probe()));
    if (options.signal?.aborted) onAbort();
    else void probe();
  });
}
