/**
 * Unresolved incident groups with the three incident actions (acknowledge, snooze, resolve), each
 * sending the body the inbox gives for the group.
 */
import { useState } from 'preact/hooks';
import { html } from '../../shared/html.js';
import { Badge } from '../../shared/ui.js';
import { relativeTime } from '../../shared/format.js';
import { ActionButton, type ActionOutcome } from '../actions.js';

/** One incident group as the inbox lists it. */
export interface IncidentView {
  readonly correlationKey: string;
  readonly source: string;
  readonly app: string | null;
  readonly environment: string;
  readonly severity: string;
  readonly eventCount: number;
  readonly lastSeen: string;
  readonly representative: { readonly type: string; readonly title: string; readonly state: string };
  readonly action?: { readonly body: Record<string, unknown> };
}

/** The incidents table; `onChanged` runs after an action succeeded. */
export function Incidents(props: { incidents: readonly IncidentView[]; onChanged: () => void }) {
  // An acknowledged, snoozed or resolved incident leaves the list, and its row with it: the outcome is
  // shown above the table so the operator still reads what happened.
  const [outcome, setOutcome] = useState<ActionOutcome | undefined>(undefined);
  const notice = outcome ? html`<p role="status" class=${outcome.ok ? 'notice' : 'error'}>${outcome.text}</p>` : null;
  if (props.incidents.length === 0) return html`${notice}<p class="muted">No unresolved incidents.</p>`;
  return html`${notice}<div class="table-wrap"><table>
    <caption class="visually-hidden">Unresolved incidents</caption>
    <thead><tr><th scope="col">Incident</th><th scope="col">Severity</th><th scope="col">State</th><th scope="col" class="hide-narrow">Last seen</th><th scope="col">Actions</th></tr></thead>
    <tbody>${props.incidents.map((i) => {
      const target = i.action?.body ?? {
        correlationKey: i.correlationKey,
        source: i.source,
        ...(i.app ? { app: i.app } : {}),
        environment: i.environment,
      };
      return html`<tr data-incident=${i.correlationKey}>
        <td><strong>${i.representative.title}</strong><div class="muted">${i.app ?? 'platform'} · ${i.representative.type} · ${i.eventCount} event(s)</div></td>
        <td><${Badge} value=${i.severity} /></td>
        <td><${Badge} value=${i.representative.state} /></td>
        <td class="hide-narrow">${relativeTime(i.lastSeen)}</td>
        <td><div class="actions">
          <${ActionButton} action="incident.acknowledge" params=${{}} body=${{ ...target, action: 'acknowledge', by: 'console' }} label="Acknowledge" onDone=${props.onChanged} onOutcome=${setOutcome} />
          <${ActionButton} action="incident.snooze" params=${{}} body=${{ ...target, action: 'snooze', duration: '1h', by: 'console' }} label="Snooze 1h" onDone=${props.onChanged} onOutcome=${setOutcome} />
          <${ActionButton} action="incident.resolve" params=${{}} body=${{ ...target, action: 'resolve', by: 'console' }} label="Resolve" onDone=${props.onChanged} onOutcome=${setOutcome} />
        </div></td>
      </tr>`;
    })}</tbody></table></div>`;
}
