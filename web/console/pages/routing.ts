/**
 * Routing: the tunnel ingress in force, disabled endpoints, and access patterns per hostname as
 * small charts of hourly requests.
 */
import { html } from '../../shared/html.js';
import { useResource } from '../../shared/resource.js';
import { Badge, Loaded } from '../../shared/ui.js';
import { relativeTime } from '../../shared/format.js';
import { Chart } from '../../shared/chart.js';

const STATUS_COLORS: Record<string, string> = {
  '2xx': '#1b7f3b',
  '3xx': '#1f5fbf',
  '4xx': '#9a6700',
  '5xx': '#b3261e',
};

function AccessChart(props: { pattern: any }) {
  const hours: any[] = props.pattern.hours;
  const x = hours.map((h) => Date.parse(h.hour) / 1000);
  const classes = Object.keys(STATUS_COLORS).filter((c) => hours.some((h) => (h.statusBuckets?.[c] ?? 0) > 0));
  const series =
    classes.length > 0
      ? classes.map((c) => ({ label: c, color: STATUS_COLORS[c]! }))
      : [{ label: 'requests', color: '#1f5fbf' }];
  const ys =
    classes.length > 0 ? classes.map((c) => hours.map((h) => h.statusBuckets?.[c] ?? 0)) : [hours.map((h) => h.count)];
  return html`<${Chart} title=${`${props.pattern.hostname}: ${props.pattern.total} request(s)`} unit="requests/h" x=${x} ys=${ys} series=${series} bars=${true} height=${150} />`;
}

/** The routing page. */
export function RoutingPage() {
  const ingress = useResource<any>('/api/tunnel/ingress');
  const access = useResource<any>('/api/access/patterns');
  return html`
    <h1>Routing</h1>
    <section aria-labelledby="ingress-heading"><h2 id="ingress-heading">Tunnel ingress</h2>
      <${Loaded} resource=${ingress}>${(data: any) => html`
        <p>Tunnel <code>${data.tunnel}</code>, written ${relativeTime(data.lastChangedAt)}, reconciled ${relativeTime(data.lastReconciledAt)}${data.lastError ? html` · <span class="error">${data.lastError}</span>` : null}.</p>
        <div class="table-wrap"><table>
          <caption class="visually-hidden">Ingress rules in order</caption>
          <thead><tr><th scope="col">Hostname</th><th scope="col">Service</th><th scope="col" class="hide-narrow">App</th></tr></thead>
          <tbody>${data.rules.map((r: any) => html`<tr><td><code>${r.hostname}</code></td><td><code>${r.service}</code>${r.viaGateway ? ' (wake gateway)' : ''}</td><td class="hide-narrow">${r.app}/${r.process}</td></tr>`)}
            <tr><td class="muted">(everything else)</td><td><code>http_status:404</code></td><td class="hide-narrow"></td></tr></tbody>
        </table></div>
        ${data.disabled.length > 0 ? html`<h3>Turned off</h3><ul>${data.disabled.map((d: any) => html`<li><code>${d.hostname}</code> <${Badge} value="warning" label="off" /> ${d.app ?? ''}</li>`)}</ul>` : null}`}<//>
    </section>
    <section aria-labelledby="access-heading"><h2 id="access-heading">Access patterns</h2>
      <${Loaded} resource=${access}>${(data: any) => html`
        <p class="muted">Since ${relativeTime(data.since)}; edge analytics ${data.edgeSync.configured ? `synced ${relativeTime(data.edgeSync.lastRunAt)}` : 'not configured'}.</p>
        ${data.hostnames.length === 0 ? html`<p class="muted">no data</p>` : html`<div class="grid">${data.hostnames.map((p: any) => html`<div class="card"><${AccessChart} pattern=${p} /></div>`)}</div>`}`}<//>
    </section>`;
}
