/**
 * A summary family without quantiles whose `_count` and `_sum` per label set are read at each
 * scrape from totals kept elsewhere (the deploy durations of the durable deployment records),
 * instead of from observations made in this process: a restart does not reset them.
 */
import { Summary, type Registry } from 'prom-client';

/** The count and sum of one label set. */
export interface SummaryTotal<T extends string> {
  readonly labels: Record<T, string>;
  readonly count: number;
  readonly sum: number;
}

/** Configuration of a {@link SummaryTotals}. */
export interface SummaryTotalsOptions<T extends string> {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly T[];
  readonly registry: Registry;
  /** The totals now, read at each scrape. */
  readonly read: () => readonly SummaryTotal<T>[];
}

/** `# TYPE <name> summary` with only `<name>_sum` and `<name>_count` samples, from `read()`. */
export class SummaryTotals<T extends string> extends Summary<T> {
  readonly #read: () => readonly SummaryTotal<T>[];
  readonly #name: string;

  constructor(options: SummaryTotalsOptions<T>) {
    super({
      name: options.name,
      help: options.help,
      labelNames: options.labelNames,
      percentiles: [],
      registers: [options.registry],
    });
    this.#read = options.read;
    this.#name = options.name;
  }

  override async get() {
    const totals = this.#read();
    const metric = await super.get();
    const values = totals.flatMap((total) => [
      { metricName: `${this.#name}_sum`, labels: total.labels, value: total.sum },
      { metricName: `${this.#name}_count`, labels: total.labels, value: total.count },
    ]);
    return { ...metric, values };
  }
}
