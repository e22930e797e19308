/**
 * Reads a text exposition (what `/metrics` answers) into families with their type, label names
 * and samples, through `parse-prometheus-text-format`.
 */
import parsePrometheusTextFormat from 'parse-prometheus-text-format';

/** One sample: its labels and value (a summary sample carries `count` and `sum` instead). */
export interface Sample {
  readonly labels: Record<string, string>;
  readonly value?: number;
  readonly count?: number;
  readonly sum?: number;
}

/** One family of an exposition. */
export interface Family {
  readonly name: string;
  readonly help: string;
  /** Lower case: counter, gauge, summary, histogram, untyped. */
  readonly type: string;
  readonly samples: readonly Sample[];
  /** Every label name any sample carries, sorted. */
  readonly labelNames: readonly string[];
}

/** The families of `text` by name. */
export function parseExposition(text: string): Map<string, Family> {
  const out = new Map<string, Family>();
  for (const family of parsePrometheusTextFormat(text)) {
    const samples = family.metrics.map((m) => ({
      labels: m.labels ?? {},
      ...(m.value !== undefined ? { value: Number(m.value) } : {}),
      ...(m.count !== undefined ? { count: Number(m.count) } : {}),
      ...(m.sum !== undefined ? { sum: Number(m.sum) } : {}),
    }));
    const labelNames = [...new Set(samples.flatMap((s) => Object.keys(s.labels)))].sort();
    out.set(family.name, { name: family.name, help: family.help, type: family.type.toLowerCase(), samples, labelNames });
  }
  return out;
}

/** The samples of `family` whose labels include every pair of `labels`. */
export function samplesOf(families: Map<string, Family>, family: string, labels: Record<string, string> = {}): Sample[] {
  return (families.get(family)?.samples ?? []).filter((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}
