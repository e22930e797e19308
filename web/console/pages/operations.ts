/**
 * Operations: the queue (queued and running) with counts and the drain state.
 */
import { useCallback } from 'preact/hooks';
import { html } from '../../shared/html.js';
import { useResource } from '../../shared/resource.js';
import { Badge, Loaded } from '../../shared/ui.js';
import { relativeTime } from '../../shared/format.js';
import { useEventStream } from '../event-stream.js';

/** The operations page. */
export function OperationsPage() {
  const ops = useResource<any>('/api/operations/active', { refreshMs: 3_000 });
  const reload = useCallback(() => ops.reload(), [ops.reload]);
  useEventStream(reload);
  return html`
    <h1>Operations</h1>
    <${Loaded} resource=${ops}>${(data: any) => html`
      <ul class="stats card" aria-label="Operation counts">
        ${Object.entries(data.counts).map(([status, count]) => html`<li><span class="value">${String(count)}</span> ${status}</li>`)}
      </ul>
      <section aria-labelledby="drain-heading" class="card"><h2 id="drain-heading">Drain</h2>
        <p>${data.drain.draining ? html`<${Badge} value="warning" label="draining" />` : html`<${Badge} value="ok" label="not draining" />`}
          mode <code>${data.drain.mode}</code>, worker ${data.drain.workerEnabled ? 'on' : 'off'}, ${data.drain.running} running${data.drain.owner ? html`, owner <code>${data.drain.owner}</code>` : null}.</p>
      </section>
      <section aria-labelledby="queue-heading"><h2 id="queue-heading">Queue</h2>
        ${
          data.operations.length === 0
            ? html`<p class="muted">Nothing queued or running.</p>`
            : html`<div class="table-wrap"><table>
          <caption class="visually-hidden">Queued and running operations</caption>
          <thead><tr><th scope="col">Operation</th><th scope="col">App</th><th scope="col">Status</th><th scope="col" class="hide-narrow">Stage</th><th scope="col">Queued</th></tr></thead>
          <tbody>${data.operations.map((o: any) => html`<tr><td><code>${o.id}</code><div class="muted">${o.kind}</div></td><td>${o.app ?? '—'}</td><td><${Badge} value=${o.status} /></td><td class="hide-narrow">${o.stage ?? '—'}</td><td>${relativeTime(o.createdAt)}</td></tr>`)}</tbody>
        </table></div>`
        }
      </section>`}<//>`;
}
