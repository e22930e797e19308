/**
 * A defensive reader of the Prometheus text exposition: samples by name and labels, and quantiles of
 * a histogram (the `histogram_quantile` interpolation). Series that are absent read as "no data".
 */

/** One sample line. */
export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)(\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** Parses the exposition; lines it does not understand are skipped. */
export function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const match = LINE.exec(line);
    if (match === null) continue;
    const value = match[4] === '+Inf' ? Infinity : match[4] === '-Inf' ? -Infinity : Number(match[4]);
    if (Number.isNaN(value) && match[4] !== 'NaN') continue;
    const labels: Record<string, string> = {};
    for (const label of (match[3] ?? '').matchAll(LABEL))
      labels[label[1]!] = label[2]!.replace(/\\"/g, '"').replace(/\\n/g, '\n').replace(/\\\\/g, '\\');
    samples.push({ name: match[1]!, labels, value });
  }
  return samples;
}

/** The sum of every sample named `name` (optionally only those whose labels match `where`). */
export function total(
  samples: readonly Sample[],
  name: string,
  where: Record<string, string> = {},
): number | undefined {
  const matching = samples.filter((s) => s.name === name && Object.entries(where).every(([k, v]) => s.labels[k] === v));
  return matching.length === 0 ? undefined : matching.reduce((sum, s) => sum + s.value, 0);
}

/** Values of one label across the samples named `name`. */
export function labelValues(samples: readonly Sample[], name: string, label: string): string[] {
  return [
    ...new Set(samples.filter((s) => s.name === name && s.labels[label] !== undefined).map((s) => s.labels[label]!)),
  ].sort();
}

/**
 * The `q` quantile (0..1) of histogram `name` (its `_bucket` series) for the samples matching
 * `where`, in the histogram's unit; undefined without observations.
 */
export function histogramQuantile(
  samples: readonly Sample[],
  name: string,
  q: number,
  where: Record<string, string> = {},
): number | undefined {
  const byLe = new Map<number, number>();
  for (const s of samples) {
    if (s.name !== `${name}_bucket` || s.labels.le === undefined) continue;
    if (!Object.entries(where).every(([k, v]) => s.labels[k] === v)) continue;
    const le = s.labels.le === '+Inf' ? Infinity : Number(s.labels.le);
    byLe.set(le, (byLe.get(le) ?? 0) + s.value);
  }
  const buckets = [...byLe.entries()].sort((a, b) => a[0] - b[0]);
  const count = buckets.at(-1)?.[1] ?? 0;
  if (buckets.length === 0 || count === 0) return undefined;
  const rank = q * count;
  let lower = 0;
  let below = 0;
  for (const [le, cumulative] of buckets) {
    if (cumulative >= rank) {
      if (le === Infinity) return lower;
      const inBucket = cumulative - below;
      return inBucket === 0 ? le : lower + (le - lower) * ((rank - below) / inBucket);
    }
    lower = le;
    below = cumulative;
  }
  return lower;
}
