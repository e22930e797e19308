/**
 * Reads a metric from a Prometheus text exposition served over HTTP (an app's metrics endpoint, a
 * Kafka exporter): the sum of the samples of one family whose labels match. Parsing is
 * parse-prometheus-text-format's; this adds the fetch, its bounds, and the sum.
 */
import parsePrometheusTextFormat from 'parse-prometheus-text-format';

/** An exposition larger than this is not read (an exporter of many groups stays well below). */
const MAX_BYTES = 16 * 1024 * 1024;

/** What a read found: the sum and the number of series in it, or why there is no value. */
export type MetricReading =
  { readonly value: number; readonly series: number } | { readonly value?: undefined; readonly missing: string };

/** Families of an exposition, parsed. */
export type Exposition = ReturnType<typeof parsePrometheusTextFormat>;

/** Parses exposition `text`; throws on text that is not the exposition format. */
export function parseExposition(text: string): Exposition {
  return parsePrometheusTextFormat(text);
}

/**
 * The sum of family `name`'s samples whose labels include every pair of `where`. A histogram or a
 * summary has no single value to sum, so it is reported missing with the reason.
 */
export function sumMetric(
  exposition: Exposition,
  name: string,
  where: Readonly<Record<string, string>>,
): MetricReading {
  const family = exposition.find((f) => f.name === name);
  if (family === undefined) return { missing: `no ${name} in the exposition` };
  if (family.type === 'HISTOGRAM' || family.type === 'SUMMARY')
    return { missing: `${name} is a ${family.type.toLowerCase()}; expose a gauge` };
  let value = 0;
  let series = 0;
  for (const sample of family.metrics) {
    const labels = sample.labels ?? {};
    if (!Object.entries(where).every(([k, v]) => labels[k] === v)) continue;
    const number = Number(sample.value);
    if (!Number.isFinite(number)) continue;
    value += number;
    series += 1;
  }
  if (series === 0) {
    const matching = Object.entries(where)
      .map(([k, v]) => `${k}="${v}"`)
      .join(',');
    return { missing: `no ${name}{${matching}} series` };
  }
  return { value, series };
}

/** Fetches and parses the exposition at `url`; throws with a reason that never holds the URL. */
export async function scrapeExposition(url: string, timeoutMs: number): Promise<Exposition> {
  let response: Response;
  try {
    response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), headers: { accept: 'text/plain' } });
  } catch (error) {
    const reason =
      error instanceof Error && error.name === 'TimeoutError' ? `no answer in ${timeoutMs} ms` : 'unreachable';
    throw new Error(reason);
  }
  if (!response.ok) {
    await response.body?.cancel();
    throw new Error(`answered ${response.status}`);
  }
  const length = Number(response.headers.get('content-length') ?? 0);
  if (length > MAX_BYTES) {
    await response.body?.cancel();
    throw new Error(`answered ${length} bytes, more than ${MAX_BYTES}`);
  }
  const text = await response.text();
  if (text.length > MAX_BYTES) throw new Error(`answered more than ${MAX_BYTES} bytes`);
  try {
    return parseExposition(text);
  } catch {
    throw new Error('answered text that is not the exposition format');
  }
}
