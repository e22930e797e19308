/**
 * Reads a text exposition (what `/metrics` answers, format 0.0.4) into families with their type,
 * label names and samples. Histogram and summary samples are grouped per label set (without `le`
 * and `quantile`) with their `count` and `sum`. For tests: it trusts the `# TYPE` lines and reads
 * the label values prom-client writes (escaped `\\`, `\"` and `\n`).
 */

/** One sample: its labels and value (a histogram or summary sample carries `count` and `sum`). */
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
  /** counter, gauge, summary, histogram or untyped. */
  readonly type: string;
  readonly samples: readonly Sample[];
  /** Every label name any sample carries (`le` and `quantile` left out), sorted. */
  readonly labelNames: readonly string[];
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?\s*/g;

function labelsOf(text: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const match of (text ?? '').matchAll(LABEL))
    out[match[1]!] = match[2]!.replace(/\\n/g, '\n').replace(/\\(["\\])/g, '$1');
  return out;
}

/** The families of `text` by name; throws on a sample line it cannot read. */
export function parseExposition(text: string): Map<string, Family> {
  const meta = new Map<string, { help: string; type: string }>();
  const samples = new Map<
    string,
    Map<string, { labels: Record<string, string>; value?: number; count?: number; sum?: number }>
  >();
  const familyOf = (name: string): { family: string; part: 'value' | 'count' | 'sum' | 'bucket' } => {
    for (const [suffix, part] of [
      ['_bucket', 'bucket'],
      ['_count', 'count'],
      ['_sum', 'sum'],
    ] as const) {
      const base = name.slice(0, -suffix.length);
      if (name.endsWith(suffix) && ['histogram', 'summary'].includes(meta.get(base)?.type ?? ''))
        return { family: base, part };
    }
    return { family: name, part: 'value' };
  };
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const comment = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
    if (comment) {
      const entry = meta.get(comment[2]!) ?? { help: '', type: 'untyped' };
      if (comment[1] === 'HELP') entry.help = comment[3]!;
      else entry.type = comment[3]!;
      meta.set(comment[2]!, entry);
      continue;
    }
    if (line.startsWith('#')) continue;
    const match = SAMPLE.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const { family, part } = familyOf(match[1]!);
    const { le: _le, quantile, ...labels } = labelsOf(match[2]);
    if (part === 'value' && quantile !== undefined) continue;
    const key = JSON.stringify(Object.entries(labels).sort());
    const bySet = samples.get(family) ?? new Map();
    const sample = bySet.get(key) ?? { labels };
    const value = Number(match[3]);
    if (part === 'value') sample.value = value;
    else if (part === 'count') sample.count = value;
    else if (part === 'sum') sample.sum = value;
    bySet.set(key, sample);
    samples.set(family, bySet);
  }
  const out = new Map<string, Family>();
  for (const [name, { help, type }] of meta) {
    const list = [...(samples.get(name)?.values() ?? [])];
    const labelNames = [...new Set(list.flatMap((s) => Object.keys(s.labels)))].sort();
    out.set(name, { name, help, type, samples: list, labelNames });
  }
  return out;
}

/** The samples of `family` whose labels include every pair of `labels`. */
export function samplesOf(
  families: Map<string, Family>,
  family: string,
  labels: Record<string, string> = {},
): Sample[] {
  return (families.get(family)?.samples ?? []).filter((s) =>
    Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
}
