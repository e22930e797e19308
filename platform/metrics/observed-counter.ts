/**
 * A counter whose value is a count observed elsewhere (a task's restart count from the scheduler,
 * OOM kills seen by the allocation watcher): it is set to the observed number, never incremented
 * here. Exposed as a prom-client `Counter`, so `# TYPE` is `counter`; a smaller value is a counter
 * reset (a new task), which is how Prometheus's `rate()` and `increase()` read it.
 */
import { Counter, type Registry } from 'prom-client';

/** Configuration of an {@link ObservedCounter}. */
export interface ObservedCounterOptions<T extends string> {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly T[];
  readonly registry: Registry;
}

/** A counter set to observed counts, one per label set. */
export class ObservedCounter<T extends string> {
  readonly counter: Counter<T>;
  readonly #values = new Map<string, { labels: Record<T, string>; value: number }>();

  constructor(options: ObservedCounterOptions<T>) {
    const values = this.#values;
    this.counter = new Counter<T>({
      name: options.name,
      help: options.help,
      labelNames: options.labelNames,
      registers: [options.registry],
      collect() {
        this.reset();
        for (const { labels, value } of values.values()) this.inc(labels as Partial<Record<T, string>>, value);
      },
    });
  }

  /** Sets the observed count of one label set (negative or non-finite values are ignored). */
  set(labels: Record<T, string>, value: number): void {
    if (!Number.isFinite(value) || value < 0) return;
    this.#values.set(JSON.stringify(Object.entries(labels).sort()), { labels: { ...labels }, value });
  }

  /** Forgets one label set (its series leaves the exposition). */
  remove(labels: Record<T, string>): void {
    this.#values.delete(JSON.stringify(Object.entries(labels).sort()));
  }
}
