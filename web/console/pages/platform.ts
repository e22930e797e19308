/**
 * Platform: the running build, app and operation counts, snapshot totals, and production readiness.
 */
import { html } from '../../shared/html.js';
import { useResource } from '../../shared/resource.js';
import { Badge, Loaded } from '../../shared/ui.js';
import { relativeTime } from '../../shared/format.js';

/** The platform page. */
export function PlatformPage() {
  const platform = useResource<any>('/api/ops/platform');
  const readiness = useResource<any>('/api/v1/production/readiness');
  return html`
    <h1>Platform</h1>
    <${Loaded} resource=${platform}>${(data: any) => html`
      <section aria-labelledby="build-heading" class="card"><h2 id="build-heading">Build</h2>
        <p><code>${data.platform.label}</code> · Node ${data.platform.node} · profile <code>${data.platform.profile}</code> · environment <code>${data.platform.environment}</code> · started ${relativeTime(data.platform.startedAt)}</p>
        <ul class="stats">
          <li><span class="value">${data.apps.total}</span> apps</li>
          <li><span class="value">${data.apps.released}</span> released</li>
          <li><span class="value">${data.apps.invalid}</span> invalid</li>
          <li><span class="value">${data.incidents.active}</span> active incidents</li>
          <li><span class="value">${data.snapshots.totals.snapshots}</span> snapshots</li>
          <li><span class="value">${data.operations.counts.running}</span> running operations</li>
        </ul>
      </section>`}<//>
    <section aria-labelledby="readiness-heading"><h2 id="readiness-heading">Production readiness</h2>
      <${Loaded} resource=${readiness}>${(data: any) => html`
        <p>${data.ready ? html`<${Badge} value="ok" label="ready" />` : html`<${Badge} value="critical" label="not ready" />`}</p>
        <div class="table-wrap"><table>
          <caption class="visually-hidden">Readiness checks</caption>
          <thead><tr><th scope="col">Check</th><th scope="col">Level</th><th scope="col">Status</th><th scope="col" class="hide-narrow">Reason</th></tr></thead>
          <tbody>${data.checks.map((c: any) => html`<tr><td>${c.title}<div class="muted"><code>${c.id}</code></div></td><td>${c.level}</td><td><${Badge} value=${c.status} /></td><td class="hide-narrow">${c.reason}</td></tr>`)}</tbody>
        </table></div>`}<//>
    </section>`;
}
