/**
 * A gauge exposed with `# TYPE <name> untyped`: for the spec's families whose fixed names end in
 * `_total` but whose values can fall (a current count, a 0/1 flag). Prometheus reads an untyped
 * sample like a gauge, and its linter (`promtool check metrics`) rejects `_total` only on the
 * other non-counter types (docs/adr/0111-metric-families-and-types.md).
 */
import { Gauge, type MetricType } from 'prom-client';

/** The text exposition type of an {@link UntypedGauge}. */
const UNTYPED = 'untyped' as unknown as MetricType;

/** A prom-client gauge (set, inc, collect, labels) serialized as `untyped`. */
export class UntypedGauge<T extends string = string> extends Gauge<T> {
  override async get() {
    return { ...(await super.get()), type: UNTYPED };
  }
}
