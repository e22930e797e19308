/**
 * Teardowns for what a `test.before` hook sets up for every test of a file (a platform that the
 * tests only read): ava allows `t.teardown` in tests only, so the hook registers them here and
 * `test.after.always` runs them, last registered first.
 */
import type { ExecutionContext } from 'ava';

/** A scope whose `context` stands in for a test's `t` in helpers that only register teardowns. */
export function hookScope(): { context: ExecutionContext; close(): Promise<void> } {
  const teardowns: (() => unknown)[] = [];
  const context = { teardown: (fn: () => unknown) => void teardowns.push(fn) } as unknown as ExecutionContext;
  return {
    context,
    async close() {
      for (const fn of teardowns.reverse()) await fn();
    },
  };
}
