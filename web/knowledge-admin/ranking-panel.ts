/**
 * Ranking evaluation: the retrieval-quality harness's latest figures (`/admin/api/ranking-eval`,
 * a fixed corpus in a private store), and a small on-demand evaluation over a chosen namespace:
 * each of its most recent nodes is queried by its own first words (`/admin/api/retrieve`), and the
 * rank at which it comes back gives hits at 1 and 5 and the mean reciprocal rank.
 */
import { useState } from 'preact/hooks';
import { api } from '../shared/api.js';
import { html } from '../shared/html.js';
import { useResource } from '../shared/resource.js';
import { Badge, ErrorNote, Loaded } from '../shared/ui.js';
import { num } from '../shared/format.js';
import type { RetrieveAnswer } from '../../openapi/knowledge-store.types.js';

interface SelfCheck {
  readonly id: string;
  readonly query: string;
  readonly rank: number | null;
}

/** The query of a node in the self-retrieval check: its first eight words. */
export function probeQuery(text: string): string {
  return text.split(/\s+/).filter(Boolean).slice(0, 8).join(' ');
}

function NamespaceEval() {
  const [ns, setNs] = useState('default');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error | undefined>(undefined);
  const [checks, setChecks] = useState<SelfCheck[] | undefined>(undefined);
  const run = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const recent = await api<{ results: { id: string; text: string }[] }>(
        `/admin/api/search?ns=${encodeURIComponent(ns)}&limit=10`,
      );
      const out: SelfCheck[] = [];
      for (const node of recent.results.filter((r) => r.text.trim() !== '')) {
        const query = probeQuery(node.text);
        const answer = await api<RetrieveAnswer>('/admin/api/retrieve', {
          method: 'POST',
          body: { namespace: ns, text: query, top_k: 10 },
        });
        const index = answer.results.findIndex((r) => r.id === node.id);
        out.push({ id: node.id, query, rank: index < 0 ? null : index + 1 });
      }
      setChecks(out);
    } catch (e) {
      setError(e as Error);
    } finally {
      setBusy(false);
    }
  };
  const n = checks?.length ?? 0;
  const hits = (k: number) => (checks ?? []).filter((c) => c.rank !== null && c.rank <= k).length;
  const mrr = n === 0 ? 0 : (checks ?? []).reduce((sum, c) => sum + (c.rank === null ? 0 : 1 / c.rank), 0) / n;
  return html`
    <form class="inline" onSubmit=${run}>
      <label>Namespace<input name="namespace" value=${ns} required onInput=${(e: Event) => setNs((e.target as HTMLInputElement).value)} /></label>
      <button type="submit" disabled=${busy}>${busy ? 'Evaluating…' : 'Evaluate'}</button>
    </form>
    <${ErrorNote} error=${error} />
    ${
      checks === undefined
        ? null
        : n === 0
          ? html`<p class="muted">no data: the namespace has no recent nodes with text.</p>`
          : html`
      <ul class="stats" aria-label="Namespace evaluation">
        <li><span class="value">${n}</span> nodes probed</li>
        <li><span class="value">${hits(1)}/${n}</span> first</li>
        <li><span class="value">${hits(5)}/${n}</span> in top 5</li>
        <li><span class="value">${num(mrr, 3)}</span> MRR</li>
      </ul>
      <div class="table-wrap"><table>
        <caption class="visually-hidden">Self-retrieval of recent nodes</caption>
        <thead><tr><th scope="col">Query</th><th scope="col">Rank</th></tr></thead>
        <tbody>${checks.map((c) => html`<tr><td>${c.query}<div class="muted"><code>${c.id}</code></div></td><td>${c.rank ?? 'not in top 10'}</td></tr>`)}</tbody>
      </table></div>`
    }`;
}

/** The ranking evaluation section. */
export function RankingPanel() {
  const evaluation = useResource<any>('/admin/api/ranking-eval');
  return html`
    <${Loaded} resource=${evaluation}>${(r: any) => html`
      <ul class="stats card" aria-label="Ranking evaluation">
        <li><span class="value">${r.passed_queries}/${r.total_queries}</span> queries passed</li>
        <li><span class="value">${num(r.mean_reciprocal_rank, 3)}</span> MRR</li>
        <li><span class="value">${r.top_k}</span> top k</li>
      </ul>
      <div class="table-wrap"><table>
        <caption class="visually-hidden">Representative queries</caption>
        <thead><tr><th scope="col">Query</th><th scope="col">Category</th><th scope="col">Rank</th><th scope="col">Result</th></tr></thead>
        <tbody>${r.queries.map((q: any) => html`<tr><td>${q.description}</td><td>${q.category}</td><td>${q.correct_rank ?? '—'} <span class="muted">(≤ ${q.expected_rank_cutoff})</span></td><td><${Badge} value=${q.passed ? 'pass' : 'fail'} /></td></tr>`)}</tbody>
      </table></div>`}<//>
    <h3>Evaluate a namespace</h3>
    <p class="muted">Each of the namespace's ten most recent nodes is searched by its own first words; a good ranking brings it back first.</p>
    <${NamespaceEval} />`;
}
