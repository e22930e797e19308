/**
 * Health, write and retrieval rates, latency percentiles per retrieval path, and the raw metrics,
 * all read from the admin listener: `/healthz`, `/admin/api/metrics`, `/admin/api/stats` and the
 * `/metrics` exposition, sampled every few seconds while the page is open.
 */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { apiText } from '../shared/api.js';
import { html } from '../shared/html.js';
import { useResource } from '../shared/resource.js';
import { Badge, ErrorNote, Loaded } from '../shared/ui.js';
import { num } from '../shared/format.js';
import { Chart } from '../shared/chart.js';
import { histogramQuantile, labelValues, parseExposition, total, type Sample } from './prometheus.js';

/** The retrieval path histogram (issue 14); without it the overall retrieval histogram is shown. */
const PATH_HISTOGRAM = 'svc_knowledge_retrieval_path_duration_seconds';
const RETRIEVE_HISTOGRAM = 'svc_knowledge_retrieve_duration_seconds';
const PATHS = ['vector', 'text', 'graph', 'hybrid'];
const COLORS = ['#1f5fbf', '#1b7f3b', '#9a6700', '#b3261e', '#6b3fa0'];
const KEEP = 60;

interface Scrape {
  readonly at: number;
  readonly samples: readonly Sample[];
}

/** Reads `/metrics` now and every `intervalMs`, keeping the last 60 scrapes. */
function useScrapes(intervalMs: number): { scrapes: readonly Scrape[]; text: string; error: Error | undefined } {
  const [state, setState] = useState<{ scrapes: Scrape[]; text: string; error: Error | undefined }>({
    scrapes: [],
    text: '',
    error: undefined,
  });
  useEffect(() => {
    let live = true;
    const read = () => {
      apiText('/metrics')
        .then((text) => {
          if (!live) return;
          const scrape = { at: Date.now() / 1000, samples: parseExposition(text) };
          setState((s) => ({ scrapes: [...s.scrapes, scrape].slice(-KEEP), text, error: undefined }));
        })
        .catch((error: Error) => {
          if (live) setState((s) => ({ ...s, error }));
        });
    };
    read();
    const timer = setInterval(read, intervalMs);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, [intervalMs]);
  return state;
}

function ratesOf(scrapes: readonly Scrape[], name: string): (number | null)[] {
  return scrapes.map((s, i) => {
    const before = scrapes[i - 1];
    if (before === undefined) return null;
    const now = total(s.samples, name);
    const then = total(before.samples, name);
    if (now === undefined || then === undefined || s.at <= before.at) return null;
    return Math.max(0, (now - then) / (s.at - before.at));
  });
}

/** Health and counters. */
export function HealthPanel() {
  const health = useResource<{ status: string }>('/healthz', { refreshMs: 10_000 });
  const metrics = useResource<any>('/admin/api/metrics', { refreshMs: 10_000 });
  const stats = useResource<any>('/admin/api/stats', { refreshMs: 10_000 });
  return html`
    <div class="grid">
      <div class="card">
        <h3>Health</h3>
        <p>Listener ${health.data ? html`<${Badge} value=${health.data.status} />` : '—'}
          ${metrics.data ? html` · store <${Badge} value=${metrics.data.health.status} />` : null}</p>
        ${metrics.data ? html`<ul>${metrics.data.health.signals.map((s: string) => html`<li>${s}</li>`)}</ul>` : null}
        <${ErrorNote} error=${health.error ?? metrics.error} />
      </div>
      <div class="card">
        <h3>Store</h3>
        <${Loaded} resource=${stats}>${(s: any) => html`<ul class="stats">
          <li><span class="value">${s.namespaces}</span> namespaces</li>
          <li><span class="value">${s.nodes}</span> nodes</li>
          <li><span class="value">${s.versions}</span> versions</li>
          <li><span class="value">${Math.round(s.uptime_seconds / 60)}m</span> uptime</li>
        </ul><p class="muted">embedder ${s.embedder?.kind ?? '—'}, reranker ${s.reranker?.kind ?? '—'}, extractor ${s.extractor?.kind ?? '—'}</p>`}<//>
      </div>
      <div class="card">
        <h3>Ingest and retrieval</h3>
        <${Loaded} resource=${metrics}>${(m: any) => html`<ul class="stats">
          <li><span class="value">${m.ingest.total}</span> writes</li>
          <li><span class="value">${num(m.ingest.admission_rate * 100, 1)}%</span> admitted</li>
          <li><span class="value">${m.retrieval.total}</span> retrievals</li>
          <li><span class="value">${num(m.retrieval.error_rate * 100, 1)}%</span> errors</li>
          <li><span class="value">${num(m.latency.p95_ms, 2)} ms</span> p95</li>
        </ul>`}<//>
      </div>
    </div>`;
}

/** Write and retrieval rates, latency per retrieval path, raw metrics. */
export function MetricsPanel() {
  const { scrapes, text, error } = useScrapes(5_000);
  const [filter, setFilter] = useState('svc_knowledge_');
  const x = useMemo(() => scrapes.map((s) => s.at), [scrapes]);
  const rates = useMemo(
    () => [ratesOf(scrapes, 'svc_knowledge_writes_total'), ratesOf(scrapes, 'svc_knowledge_retrievals_total')],
    [scrapes],
  );
  const latest = scrapes.at(-1)?.samples ?? [];
  const pathHistogram = latest.some((s) => s.name === `${PATH_HISTOGRAM}_bucket`);
  const paths = pathHistogram
    ? [...new Set([...PATHS, ...labelValues(latest, `${PATH_HISTOGRAM}_bucket`, 'path')])]
    : ['all'];
  const quantileSeries = (q: number) =>
    paths.map((path) =>
      scrapes.map((s) => {
        const value = pathHistogram
          ? histogramQuantile(s.samples, PATH_HISTOGRAM, q, { path })
          : histogramQuantile(s.samples, RETRIEVE_HISTOGRAM, q);
        return value === undefined ? null : value * 1000;
      }),
    );
  const series = paths.map((path, i) => ({ label: path, color: COLORS[i % COLORS.length]! }));
  const shown = text
    .split('\n')
    .filter((line) => filter === '' || line.includes(filter))
    .join('\n');
  return html`
    <${ErrorNote} error=${error} />
    <section aria-labelledby="rates-heading"><h2 id="rates-heading">Write and retrieval rates</h2>
      <${Chart} title="Operations per second (sampled every 5 s while this page is open)" unit="/s" x=${x} ys=${rates}
        series=${[
          { label: 'writes', color: '#1f5fbf' },
          { label: 'retrievals', color: '#1b7f3b' },
        ]} />
    </section>
    <section aria-labelledby="latency-heading"><h2 id="latency-heading">Retrieval latency per path</h2>
      ${pathHistogram ? null : html`<p class="muted">The per-path histogram <code>${PATH_HISTOGRAM}</code> is not exported by this build: showing all retrievals.</p>`}
      <div class="table-wrap"><table>
        <caption class="visually-hidden">Latency percentiles per retrieval path since start, in milliseconds</caption>
        <thead><tr><th scope="col">Path</th><th scope="col">p50 ms</th><th scope="col">p95 ms</th><th scope="col">p99 ms</th></tr></thead>
        <tbody>${paths.map((path) => {
          const q = (p: number) => {
            const v = pathHistogram
              ? histogramQuantile(latest, PATH_HISTOGRAM, p, { path })
              : histogramQuantile(latest, RETRIEVE_HISTOGRAM, p);
            return v === undefined ? 'no data' : num(v * 1000, 2);
          };
          return html`<tr data-path=${path}><th scope="row">${path}</th><td>${q(0.5)}</td><td>${q(0.95)}</td><td>${q(0.99)}</td></tr>`;
        })}</tbody>
      </table></div>
      <div class="grid">
        <div><${Chart} title="p50 since start" unit="ms" x=${x} ys=${quantileSeries(0.5)} series=${series} /></div>
        <div><${Chart} title="p95 since start" unit="ms" x=${x} ys=${quantileSeries(0.95)} series=${series} /></div>
      </div>
    </section>
    <section aria-labelledby="raw-heading"><h2 id="raw-heading">Raw metrics</h2>
      <form class="inline" onSubmit=${(e: Event) => e.preventDefault()}>
        <label>Filter<input type="search" value=${filter} onInput=${(e: Event) => setFilter((e.target as HTMLInputElement).value)} /></label>
      </form>
      <pre tabindex="0" aria-label="Raw metrics">${shown || 'no data'}</pre>
    </section>`;
}
