/**
 * The belief debugger: search a namespace's recent valid nodes by text, labels, source id or node id
 * (`/admin/api/search`), then inspect one node: its versions over valid and transaction time
 * (`/admin/api/node`), its sources with their credibility timelines (`/admin/api/belief`,
 * `/admin/api/source-trust`), feedback events (`/admin/api/feedback`), conflicts, the score
 * breakdown of a query (`/admin/api/retrieve`) and explain-rank against another node.
 */
import { useState } from 'preact/hooks';
import { api } from '../shared/api.js';
import { html } from '../shared/html.js';
import { useResource } from '../shared/resource.js';
import { Badge, ErrorNote, Loaded } from '../shared/ui.js';
import { num, shortNodeId, utcTime } from '../shared/format.js';
import { Chart } from '../shared/chart.js';
import type { NodeAnswer, RetrieveAnswer } from '../../openapi/knowledge-store.types.js';

interface SearchResult {
  readonly id: string;
  readonly labels: readonly string[];
  readonly text: string;
  readonly source_id: string | null;
  readonly confidence: number;
  readonly version: number;
  readonly valid_from: string;
  readonly match_reason: string;
}

const q = (params: Record<string, string>) => new URLSearchParams(params).toString();
const seconds = (iso: string | null) => (iso === null ? Number.NaN : Date.parse(iso) / 1000);

function Versions(props: { ns: string; id: string }) {
  const node = useResource<NodeAnswer>(`/admin/api/node?${q({ ns: props.ns, id: props.id })}`);
  return html`<${Loaded} resource=${node}>${(n: NodeAnswer) => {
    const history = n.history ?? [];
    return html`
      <${Chart} title="Confidence and utility per version (transaction time)" unit="score" x=${history.map((h) => seconds(h.tx_from))}
        ys=${[history.map((h) => h.confidence), history.map((h) => h.utility)]} series=${[
          { label: 'confidence', color: '#1f5fbf' },
          { label: 'utility', color: '#1b7f3b' },
        ]} height=${150} />
      <div class="table-wrap"><table>
        <caption class="visually-hidden">Versions over valid and transaction time</caption>
        <thead><tr><th scope="col">Version</th><th scope="col">Change</th><th scope="col">Valid</th><th scope="col">Recorded</th><th scope="col">Confidence</th></tr></thead>
        <tbody>${history.map(
          (h) => html`<tr data-version=${h.version}>
          <td>${h.version}${h.retracted ? html` <${Badge} value="warning" label="retracted" />` : null}</td><td>${h.change}</td>
          <td>${utcTime(h.valid_from)} → ${h.valid_to ? utcTime(h.valid_to) : 'now'}</td>
          <td>${utcTime(h.tx_from)} → ${h.tx_to ? utcTime(h.tx_to) : 'now'}</td>
          <td>${num(h.confidence, 3)}</td>
        </tr>`,
        )}</tbody>
      </table></div>`;
  }}<//>`;
}

function SourceTrust(props: { ns: string; source: string; credibility: number }) {
  const trust = useResource<any>(`/admin/api/source-trust?${q({ ns: props.ns, source_id: props.source })}`);
  return html`<div class="card">
    <h4><code>${props.source}</code> credibility ${num(props.credibility, 3)}</h4>
    <${Loaded} resource=${trust}>${(
      t: any,
    ) => html`<${Chart} title=${`Credibility of ${props.source}`} unit="credibility"
      x=${t.timeline.map((p: any) => seconds(p.tx_time))} ys=${[t.timeline.map((p: any) => p.source_credibility)]} series=${[{ label: 'credibility', color: '#6b3fa0' }]} height=${120} />`}<//>
  </div>`;
}

function Feedback(props: { ns: string; id: string }) {
  const feedback = useResource<any>(`/admin/api/feedback?${q({ ns: props.ns, node_id: props.id })}`);
  return html`<${Loaded} resource=${feedback}>${(f: any) =>
    f.events.length === 0
      ? html`<p class="muted">No feedback events.</p>`
      : html`<ul>
    ${f.events.map((e: any) => html`<li><${Badge} value=${e.action === 'refute' || e.action === 'stale' ? 'warning' : 'ok'} label=${e.action} /> ${utcTime(e.tx_time)} · source <code>${e.source_id}</code> ${num(e.previous_credibility, 2)} → ${num(e.source_credibility, 2)}${e.reason ? html` · ${e.reason}` : null}</li>`)}
  </ul>`}<//>`;
}

function ScoreBreakdown(props: { ns: string; id: string; initial: string }) {
  const [text, setText] = useState(props.initial);
  const [answer, setAnswer] = useState<RetrieveAnswer | undefined>(undefined);
  const [error, setError] = useState<Error | undefined>(undefined);
  const run = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    try {
      setAnswer(
        await api<RetrieveAnswer>('/admin/api/retrieve', {
          method: 'POST',
          body: { namespace: props.ns, text, top_k: 10 },
        }),
      );
    } catch (e) {
      setError(e as Error);
    }
  };
  return html`
    <form class="inline" onSubmit=${run}>
      <label>Query<input name="score-query" value=${text} required onInput=${(e: Event) => setText((e.target as HTMLInputElement).value)} /></label>
      <button type="submit">Score</button>
    </form>
    <${ErrorNote} error=${error} />
    ${
      answer === undefined
        ? null
        : answer.results.length === 0
          ? html`<p class="muted">No results.</p>`
          : html`<div class="table-wrap"><table>
      <caption class="visually-hidden">Ranked results with their score breakdown</caption>
      <thead><tr><th scope="col">#</th><th scope="col">Node</th><th scope="col">Score</th><th scope="col">Similarity</th><th scope="col">Confidence</th><th scope="col">Recency</th><th scope="col">Utility</th></tr></thead>
      <tbody>${answer.results.map(
        (r, i) => html`<tr data-result=${r.id} class=${r.id === props.id ? 'selected' : ''}>
        <td>${i + 1}</td><td>${r.id === props.id ? html`<strong>this node</strong>` : html`<code>${shortNodeId(r.id)}</code>`}<div class="muted">${r.content.slice(0, 80)}</div></td>
        <td>${num(r.score, 3)}</td><td>${num(r.score_breakdown.similarity, 3)}</td><td>${num(r.score_breakdown.confidence, 3)}</td><td>${num(r.score_breakdown.recency, 3)}</td><td>${num(r.score_breakdown.utility, 3)}</td>
      </tr>`,
      )}</tbody>
    </table></div>`
    }`;
}

function ExplainRank(props: { ns: string; id: string; others: readonly SearchResult[]; initialText: string }) {
  const [other, setOther] = useState(props.others.find((o) => o.id !== props.id)?.id ?? '');
  const [text, setText] = useState(props.initialText);
  const [answer, setAnswer] = useState<RetrieveAnswer | undefined>(undefined);
  const [error, setError] = useState<Error | undefined>(undefined);
  const run = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    try {
      setAnswer(
        await api('/admin/api/explain-rank', {
          method: 'POST',
          body: {
            namespace: props.ns,
            node_id: props.id,
            other_node_id: other.trim(),
            ...(text.trim() !== '' ? { text } : {}),
          },
        }),
      );
    } catch (e) {
      setError(e as Error);
    }
  };
  return html`
    <form class="inline" onSubmit=${run}>
      <label>Other node id<input name="other-node" value=${other} required list="explain-candidates" onInput=${(e: Event) => setOther((e.target as HTMLInputElement).value)} /></label>
      <datalist id="explain-candidates">${props.others.filter((o) => o.id !== props.id).map((o) => html`<option value=${o.id}>${o.text.slice(0, 60)}</option>`)}</datalist>
      <label>Query (optional)<input name="explain-query" value=${text} onInput=${(e: Event) => setText((e.target as HTMLInputElement).value)} /></label>
      <button type="submit">Explain</button>
    </form>
    <${ErrorNote} error=${error} />
    ${answer === undefined ? null : html`<pre tabindex="0" aria-label="Explain-rank answer">${JSON.stringify(answer, null, 2)}</pre>`}`;
}

function Inspector(props: { ns: string; id: string; results: readonly SearchResult[]; query: string }) {
  const belief = useResource<any>(`/admin/api/belief?${q({ ns: props.ns, id: props.id })}`);
  return html`<${Loaded} resource=${belief}>${(b: any) => html`
    <div class="card" data-node=${props.id}>
      <h3>Node <code>${props.id}</code></h3>
      <p>${b.node.text ?? b.node.content}</p>
      <p class="muted">labels ${(b.node.labels ?? []).join(', ') || '—'} · confidence ${num(b.node.confidence, 3)} · compound source credibility ${num(b.source.compound_credibility, 3)}</p>
      <h4>Versions</h4><${Versions} ns=${props.ns} id=${props.id} />
      <h4>Sources</h4>
      <div class="grid">${b.source.sources.map((s: any) => html`<${SourceTrust} ns=${props.ns} source=${s.source_id} credibility=${s.credibility} />`)}</div>
      <h4>Feedback events</h4><${Feedback} ns=${props.ns} id=${props.id} />
      <h4>Conflicts</h4>
      ${b.contradictors.length === 0 ? html`<p class="muted">No conflicts.</p>` : html`<ul>${b.contradictors.map((c: any) => html`<li><${Badge} value="warning" label=${c.kind} /> <code>${shortNodeId(c.other_node_id)}</code> ${c.other_text ?? ''} <span class="muted">confidence gap ${num(c.confidence_gap, 2)}</span></li>`)}</ul>`}
      <h4>Score breakdown of a query</h4><${ScoreBreakdown} ns=${props.ns} id=${props.id} initial=${
        props.query ||
        String(b.node.text ?? '')
          .split(/\s+/)
          .slice(0, 6)
          .join(' ')
      } />
      <h4>Explain rank against another node</h4><${ExplainRank} ns=${props.ns} id=${props.id} others=${props.results} initialText=${props.query} />
    </div>`}<//>`;
}

/** The belief debugger section. */
export function BeliefDebugger() {
  const [form, setForm] = useState({ ns: 'default', q: '', labels: '' });
  const [search, setSearch] = useState<{ ns: string; q: string; results: SearchResult[] } | undefined>(undefined);
  const [error, setError] = useState<Error | undefined>(undefined);
  const [selected, setSelected] = useState<string | undefined>(undefined);
  const run = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    setSelected(undefined);
    try {
      const params: Record<string, string> = { ns: form.ns.trim(), limit: '20' };
      if (form.q.trim() !== '') params.q = form.q.trim();
      if (form.labels.trim() !== '') params.labels = form.labels.trim();
      const answer = await api<{ results: SearchResult[] }>(`/admin/api/search?${q(params)}`);
      setSearch({ ns: params.ns!, q: form.q.trim(), results: answer.results });
    } catch (e) {
      setSearch(undefined);
      setError(e as Error);
    }
  };
  const field = (name: 'ns' | 'q' | 'labels') => (e: Event) =>
    setForm({ ...form, [name]: (e.target as HTMLInputElement).value });
  return html`
    <form class="inline" role="search" onSubmit=${run} aria-label="Search recent valid nodes">
      <label>Namespace<input name="ns" value=${form.ns} required onInput=${field('ns')} /></label>
      <label>Text, source id or node id<input name="q" type="search" value=${form.q} onInput=${field('q')} /></label>
      <label>Labels (comma separated)<input name="labels" value=${form.labels} onInput=${field('labels')} /></label>
      <button type="submit" class="primary">Search</button>
    </form>
    <${ErrorNote} error=${error} />
    ${
      search === undefined
        ? null
        : html`
      <p aria-live="polite">${search.results.length} result(s) in <code>${search.ns}</code>.</p>
      ${
        search.results.length === 0
          ? null
          : html`<div class="table-wrap"><table>
        <caption class="visually-hidden">Matching nodes</caption>
        <thead><tr><th scope="col">Node</th><th scope="col">Match</th><th scope="col" class="hide-narrow">Source</th><th scope="col">Confidence</th><th scope="col"></th></tr></thead>
        <tbody>${search.results.map(
          (r) => html`<tr data-search-result=${r.id}>
          <td>${r.text.slice(0, 120)}<div class="muted"><code>${shortNodeId(r.id)}</code> v${r.version} ${r.labels.join(', ')}</div></td>
          <td>${r.match_reason}</td><td class="hide-narrow"><code>${r.source_id ?? '—'}</code></td><td>${num(r.confidence, 2)}</td>
          <td><button type="button" aria-pressed=${selected === r.id} onClick=${() => setSelected(r.id)}>Inspect</button></td>
        </tr>`,
        )}</tbody>
      </table></div>`
      }
      ${selected === undefined ? null : html`<${Inspector} key=${selected} ns=${search.ns} id=${selected} results=${search.results} query=${search.q} />`}`
    }`;
}
