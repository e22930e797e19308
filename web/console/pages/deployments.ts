/**
 * An app's recent deployments and the steps of one, live: while a deployment runs its steps are
 * read again every half second, and every event of the app on the stream reloads the list.
 */
import { useCallback, useEffect, useState } from 'preact/hooks';
import { html } from '../../shared/html.js';
import { useResource } from '../../shared/resource.js';
import { Badge, Loaded } from '../../shared/ui.js';
import { elapsed, relativeTime, shortCommit } from '../../shared/format.js';
import { useEventStream } from '../event-stream.js';
import type { DeploymentList, DeploymentSteps } from '../../../openapi/control-plane.types.js';

const TERMINAL = new Set(['succeeded', 'failed', 'rolled_back', 'cancelled']);

/** The steps of one deployment, polled while it is not finished. */
function Steps(props: { id: string; onFinished: () => void }) {
  const [view, setView] = useState<DeploymentSteps | undefined>(undefined);
  const steps = useResource<DeploymentSteps>(`/api/v1/deployments/${encodeURIComponent(props.id)}/steps`);
  useEffect(() => {
    if (steps.data) setView(steps.data);
  }, [steps.data]);
  const running = view !== undefined && !TERMINAL.has(view.deployment.status);
  useEffect(() => {
    if (view === undefined) return undefined;
    if (!running) {
      props.onFinished();
      return undefined;
    }
    const timer = setTimeout(steps.reload, 500);
    return () => clearTimeout(timer);
  }, [view, running]);
  if (view === undefined) return html`<${Loaded} resource=${steps}>${() => null}<//>`;
  return html`
    <div aria-live="polite" data-deployment=${view.deployment.id} data-status=${view.deployment.status}>
      <p>Deployment <code>${view.deployment.id}</code> (${view.deployment.kind}) <${Badge} value=${view.deployment.status} />
        ${view.deployment.failedStep ? html` failed at <strong>${view.deployment.failedStep}</strong>` : null}</p>
      <ol class="steps">
        ${view.steps.map(
          (s) => html`<li data-step=${s.step} data-step-status=${s.status}>
          <span class="name">${s.step}</span> <${Badge} value=${s.status} /> <span class="muted">${elapsed(s.startedAt, s.endedAt)}</span>
          <span>${s.message ?? ''}</span>
          ${s.status === 'failed' && s.output ? html`<pre>${s.output}</pre>` : null}
        </li>`,
        )}
        ${running ? html`<li class="muted">waiting for the next step…</li>` : null}
      </ol>
    </div>`;
}

/** Recent deployments of `app`, the selected one's steps live. */
export function Deployments(props: { app: string; selected?: string | undefined }) {
  const list = useResource<DeploymentList>(`/api/v1/deployments?app=${encodeURIComponent(props.app)}&limit=5`);
  const [selected, setSelected] = useState<string | undefined>(props.selected);
  useEffect(() => {
    if (props.selected !== undefined) setSelected(props.selected);
  }, [props.selected]);
  const reload = useCallback(() => list.reload(), [list.reload]);
  useEventStream(reload, props.app);
  useEffect(() => {
    if (props.selected !== undefined) list.reload();
  }, [props.selected]);
  return html`
    <${Loaded} resource=${list}>${(data: DeploymentList) => {
      const shown = selected ?? data.deployments[0]?.id;
      return html`
        ${
          data.deployments.length === 0
            ? html`<p class="muted">No deployments yet.</p>`
            : html`
          <div class="table-wrap"><table>
            <caption class="visually-hidden">Recent deployments</caption>
            <thead><tr><th scope="col">Deployment</th><th scope="col">Status</th><th scope="col" class="hide-narrow">Commit</th><th scope="col">When</th></tr></thead>
            <tbody>${data.deployments.map(
              (d) => html`<tr>
              <td><button type="button" aria-pressed=${shown === d.id} onClick=${() => setSelected(d.id)}>${d.kind} ${d.id.slice(-6)}</button></td>
              <td><${Badge} value=${d.status} /></td>
              <td class="hide-narrow"><code>${shortCommit(d.commit)}</code> <span class="muted">${d.ref}</span></td>
              <td>${relativeTime(d.createdAt)}</td>
            </tr>`,
            )}</tbody>
          </table></div>`
        }
        ${shown !== undefined ? html`<h3>Steps</h3><${Steps} key=${shown} id=${shown} onFinished=${reload} />` : null}`;
    }}<//>`;
}
