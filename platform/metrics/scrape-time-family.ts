/**
 * A metric family whose samples are computed at each scrape by a read function and handed to the
 * exposition as they are: no per-sample `set()`, label hashing or validation on every scrape,
 * which at 500 apps is most of the cost of a prom-client collect. For families that are a view of
 * state kept elsewhere (apps, manifest, deploy totals); the read function owns the label values.
 */
import { Gauge, type MetricType, type Registry } from 'prom-client';

/** One sample of a {@link ScrapeTimeFamily}. */
export interface ScrapeTimeSample<T extends string> {
  readonly labels: Readonly<Record<T, string>>;
  readonly value: number;
}

/** Configuration of a {@link ScrapeTimeFamily}. */
export interface ScrapeTimeFamilyOptions<T extends string> {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly T[];
  readonly registry: Registry;
  /** The `# TYPE`: a counter's read function must return values that only grow (or reset). */
  readonly type: 'gauge' | 'counter' | 'untyped';
  readonly read: () => readonly ScrapeTimeSample<T>[] | Promise<readonly ScrapeTimeSample<T>[]>;
}

/** A family serialized from `read()` at each scrape. */
export class ScrapeTimeFamily<T extends string> extends Gauge<T> {
  readonly #read: ScrapeTimeFamilyOptions<T>['read'];
  readonly #type: MetricType;

  constructor(options: ScrapeTimeFamilyOptions<T>) {
    super({ name: options.name, help: options.help, labelNames: options.labelNames, registers: [options.registry] });
    this.#read = options.read;
    this.#type = options.type as unknown as MetricType;
  }

  override async get() {
    // Read first, synchronously: every family of one scrape reads in the same tick, so reads can share a sample.
    const samples = this.#read();
    const metric = await super.get();
    return { ...metric, type: this.#type, values: (await samples).map((s) => ({ labels: s.labels, value: s.value })) };
  }
}
