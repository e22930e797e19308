/**
 * Inbox: what needs attention now (`GET /api/operator/inbox`), refreshed by the event stream.
 */
import { useCallback } from 'preact/hooks';
import { html } from '../../shared/html.js';
import { useResource } from '../../shared/resource.js';
import { Badge, Loaded } from '../../shared/ui.js';
import { relativeTime } from '../../shared/format.js';
import { useEventStream } from '../event-stream.js';
import { Incidents } from './incidents.js';

function Risks(props: { title: string; items: readonly any[] }) {
  if (props.items.length === 0) return null;
  return html`<h3>${props.title}</h3><ul>${props.items.map((r) => html`<li><${Badge} value=${r.severity} /> ${r.app ? html`<strong>${r.app}</strong> ` : null}${r.message ?? r.code}</li>`)}</ul>`;
}

/** The inbox page. */
export function InboxPage() {
  const inbox = useResource<any>('/api/operator/inbox', { refreshMs: 15_000 });
  const reload = useCallback(() => inbox.reload(), [inbox.reload]);
  useEventStream(reload);
  return html`
    <h1>Inbox</h1>
    <${Loaded} resource=${inbox}>${(data: any) => html`
      <ul class="stats card" aria-label="Summary">
        <li><span class="value">${data.summary.critical}</span> critical</li>
        <li><span class="value">${data.summary.warning}</span> warning</li>
        <li><span class="value">${data.summary.incidents}</span> incidents</li>
        <li><span class="value">${data.summary.activeOperations}</span> active operations</li>
        <li><span class="value">${data.summary.failedOperations}</span> failed operations</li>
      </ul>
      <section aria-labelledby="inbox-incidents"><h2 id="inbox-incidents">Incidents</h2>
        <${Incidents} incidents=${data.incidents.items} onChanged=${reload} /></section>
      <section aria-labelledby="inbox-operations"><h2 id="inbox-operations">Operations</h2>
        ${
          data.operations.active.items.length + data.operations.failed.items.length === 0
            ? html`<p class="muted">No active or failed operations.</p>`
            : html`<ul>
          ${[...data.operations.active.items, ...data.operations.failed.items].map((o: any) => html`<li><code>${o.id}</code> ${o.kind} ${o.app ?? ''} <${Badge} value=${o.status} /> <span class="muted">${relativeTime(o.updatedAt ?? o.createdAt)}</span>${o.lastError ? html` <span class="error">${o.lastError}</span>` : null}</li>`)}
        </ul>`
        }</section>
      <section aria-labelledby="inbox-risks"><h2 id="inbox-risks">Risks</h2>
        <${Risks} title="Deploys" items=${data.deployRisks.items} />
        <${Risks} title="Scheduled processes" items=${data.cronRisks.items} />
        <${Risks} title="Snapshots" items=${data.snapshots.risks.items} />
        ${data.deployRisks.items.length + data.cronRisks.items.length + data.snapshots.risks.items.length === 0 ? html`<p class="muted">No risks.</p>` : null}
        <p>Secrets: ${data.secrets.issues} issue(s) over ${data.secrets.keys} key(s). Wake targets: ${
          Object.entries(data.wakeTargets.byReadiness)
            .map(([k, v]) => `${String(v)} ${k}`)
            .join(', ') || 'none'
        }.</p>
      </section>`}<//>`;
}
