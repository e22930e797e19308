/**
 * Events and incidents: the unresolved incident groups with their actions, and the newest events,
 * which arrive live from the stream.
 */
import { useCallback } from 'preact/hooks';
import { html } from '../../shared/html.js';
import { useResource } from '../../shared/resource.js';
import { Badge, Loaded } from '../../shared/ui.js';
import { relativeTime } from '../../shared/format.js';
import { useEventStream, useStreamStatus } from '../event-stream.js';
import { Incidents, type IncidentView } from './incidents.js';

/** The events page. */
export function EventsPage() {
  const events = useResource<{ events: any[] }>('/api/events?limit=50');
  const inbox = useResource<{ incidents: { items: IncidentView[] } }>('/api/operator/inbox?limit=200');
  const status = useStreamStatus();
  const reload = useCallback(() => {
    events.reload();
    inbox.reload();
  }, [events.reload, inbox.reload]);
  useEventStream(reload);
  return html`
    <h1>Events and incidents</h1>
    <p class="muted" aria-live="polite">Live stream: <${Badge} value=${status === 'live' ? 'ok' : 'warning'} label=${status} /></p>
    <section aria-labelledby="incidents-heading"><h2 id="incidents-heading">Incidents</h2>
      <${Loaded} resource=${inbox}>${(data: { incidents: { items: IncidentView[] } }) => html`<${Incidents} incidents=${data.incidents.items} onChanged=${reload} />`}<//>
    </section>
    <section aria-labelledby="events-heading"><h2 id="events-heading">Recent events</h2>
      <${Loaded} resource=${events}>${(data: { events: any[] }) =>
        data.events.length === 0
          ? html`<p class="muted">No events.</p>`
          : html`
        <div class="table-wrap"><table>
          <caption class="visually-hidden">Recent events, newest first</caption>
          <thead><tr><th scope="col">Event</th><th scope="col">Severity</th><th scope="col" class="hide-narrow">State</th><th scope="col">When</th></tr></thead>
          <tbody>${data.events.map(
            (e) => html`<tr data-event=${e.id}>
            <td><strong>${e.title}</strong><div class="muted">${e.app ?? 'platform'} · <code>${e.type}</code></div></td>
            <td><${Badge} value=${e.severity} /></td><td class="hide-narrow">${e.acknowledgement ? 'acknowledged' : e.state}</td><td>${relativeTime(e.occurredAt)}</td>
          </tr>`,
          )}</tbody></table></div>`}<//>
    </section>`;
}
