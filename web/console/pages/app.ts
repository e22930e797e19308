/**
 * One app: conditions, spec findings (file:line:col), processes and allocations, recent deployments
 * with their steps live, snapshots, scheduled processes with next and last runs, function history,
 * and the actions of the catalogue that apply to it.
 */
import { useCallback, useEffect, useState } from 'preact/hooks';
import { html } from '../../shared/html.js';
import { useResource } from '../../shared/resource.js';
import { Badge, ErrorNote, Loaded } from '../../shared/ui.js';
import { bytes, relativeTime, shortCommit } from '../../shared/format.js';
import { ActionButton } from '../actions.js';
import { useEventStream } from '../event-stream.js';
import type { AppView, ProcessScalingView } from '../../../openapi/control-plane.types.js';
import { Deployments } from './deployments.js';
import { AppTerminal } from '../terminal.js';
import { AppLogs } from './app-logs.js';

function Conditions(props: { app: AppView }) {
  return html`<div class="table-wrap"><table>
    <caption class="visually-hidden">Conditions</caption>
    <thead><tr><th scope="col">Condition</th><th scope="col">Status</th><th scope="col">Reason</th><th scope="col" class="hide-narrow">Since</th></tr></thead>
    <tbody>${props.app.conditions.map(
      (c) => html`<tr>
      <th scope="row">${c.type}</th><td><${Badge} value=${c.status} /></td>
      <td>${c.reason}<div class="muted">${c.message}</div></td><td class="hide-narrow">${relativeTime(c.lastTransitionTime)}</td>
    </tr>`,
    )}</tbody></table></div>`;
}

/** The spec file's place, linked to the file in the repository when the spec names its web URL. */
function SpecPlace(props: { app: AppView; line?: number | undefined; column?: number | undefined }) {
  const file = props.app.file ?? 'infraspec.yaml';
  const text = props.line === undefined ? file : `${file}:${props.line}:${props.column ?? 0}`;
  const link = props.app.settings?.repo?.links?.spec_file;
  if (link === undefined) return html`<code>${text}</code>`;
  const href = props.line !== undefined && props.line > 0 ? `${link}#L${props.line}` : link;
  return html`<a class="spec-file-link" href=${href} rel="noopener noreferrer"><code>${text}</code></a>`;
}

function Findings(props: { app: AppView }) {
  if (props.app.findings.length === 0)
    return html`<p class="muted">No findings in <${SpecPlace} app=${props.app} />.</p>`;
  return html`<ul>${props.app.findings.map(
    (f) => html`<li>
    <${SpecPlace} app=${props.app} line=${f.line ?? 0} column=${f.column ?? 0} /> <${Badge} value=${f.severity === 'error' ? 'critical' : 'warning'} label=${f.severity} /> <code>${f.rule}</code> ${f.message}</li>`,
  )}</ul>`;
}

/** The release line: the commit the app runs, linked to the commit and the release tree in the repository. */
function Release(props: { app: AppView }) {
  const commit = props.app.release?.commit;
  const links = props.app.settings?.repo?.links;
  const code = html`<code>${shortCommit(commit)}</code>`;
  return html`<p>Release ${
    links?.commit !== undefined
      ? html`<a class="commit-link" href=${links.commit} rel="noopener noreferrer">${code}</a> (<a class="release-link" href=${links.release} rel="noopener noreferrer">files</a>)`
      : code
  }${props.app.deploy ? null : html` · <span class="muted">deploy: false</span>`}</p>`;
}

/** What the spec asks beyond the jobs: the source, build, deploy and snapshot policies, expected secrets. */
function Settings(props: { app: AppView }) {
  const settings = props.app.settings;
  if (!settings) return html`<p class="muted">No valid spec.</p>`;
  const repo = settings.repo;
  const links = repo?.links;
  return html`<dl class="settings">
    <dt>Source</dt><dd>${
      repo === null
        ? html`the app's folder in the apps repository`
        : html`${links ? html`<a class="repository-link" href=${links.repository} rel="noopener noreferrer">${links.repository}</a>` : html`<code>${repo.url}</code>`}, branch ${links ? html`<a href=${links.branch} rel="noopener noreferrer"><code>${repo.branch}</code></a>` : html`<code>${repo.branch}</code>`}${repo.auto_deploy ? ', deployed on push' : ''}`
    }</dd>
    <dt>Spec</dt><dd><${SpecPlace} app=${props.app} /></dd>
    <dt>Build</dt><dd>${settings.build.image !== null ? html`image <code>${settings.build.image}</code>` : html`<code>${settings.build.dockerfile}</code>`}${settings.build.test !== null ? html`, tested with <code>${settings.build.test}</code>` : ''}</dd>
    <dt>Deploys</dt><dd>${settings.deploy_policy.auto_rollback ? 'rolled back automatically when they fail' : 'not rolled back automatically'}${settings.deploy_policy.canaries.map((c) => html`; ${c.process}: ${c.count} canar${c.count === 1 ? 'y' : 'ies'}${c.evaluate_after !== null ? ` judged after ${c.evaluate_after}` : ''}`)}</dd>
    ${settings.snapshots !== null ? html`<dt>Snapshots</dt><dd>keep ${settings.snapshots.keep}${settings.snapshots.pre_restore ? ', a safety snapshot before each restore' : ''}${settings.snapshots.export_bucket !== null ? html`, exported to <code>${settings.snapshots.export_bucket}</code>` : ''}</dd>` : null}
    ${settings.expected_secrets.length > 0 ? html`<dt>Secrets</dt><dd>${settings.expected_secrets.map((name, i) => html`${i > 0 ? ', ' : ''}<code>${name}</code>`)}</dd>` : null}
  </dl>`;
}

function Processes(props: { app: AppView }) {
  if (props.app.processes.length === 0) return html`<p class="muted">No processes run.</p>`;
  return html`${props.app.processes.map(
    (p) => html`
    <h3>${p.process} <span class="muted">${p.jobType}, ${p.region}, ${p.running}/${p.desiredCount} running${p.paused ? ', paused' : ''}</span> <${Badge} value=${p.health ?? 'unknown'} /></h3>
    <div class="table-wrap"><table>
      <caption class="visually-hidden">Allocations of ${p.process}</caption>
      <thead><tr><th scope="col">Allocation</th><th scope="col">Status</th><th scope="col">Health</th><th scope="col" class="hide-narrow">Memory</th><th scope="col" class="hide-narrow">Restarts</th></tr></thead>
      <tbody>${p.allocations.map(
        (a: any) => html`<tr>
        <td><code>${String(a.id).slice(0, 8)}</code>${a.canary ? html` <${Badge} value="warning" label="canary" />` : null}<div class="muted">v${a.jobVersion} ${a.lastEvent ?? ''}</div></td>
        <td><${Badge} value=${a.status} /></td><td><${Badge} value=${a.health ?? 'unknown'} /></td>
        <td class="hide-narrow">${bytes(a.memory?.currentBytes)} / ${bytes(a.memory?.limitBytes)}</td>
        <td class="hide-narrow">${a.restarts}${a.oomKilled ? ' (OOM)' : ''}</td>
      </tr>`,
      )}</tbody></table></div>`,
  )}`;
}

const SCALING_MODES: Record<ProcessScalingView['mode'], string> = {
  fixed: 'fixed',
  scale_to_zero: 'scale to zero',
  autoscaled: 'autoscaled',
};

function Scaling(props: { app: AppView }) {
  const scaling = props.app.scaling ?? [];
  if (scaling.length === 0) return html`<p class="muted">No long-running processes.</p>`;
  return html`<div class="table-wrap"><table>
    <caption class="visually-hidden">Scaling of each process</caption>
    <thead><tr><th scope="col">Process</th><th scope="col">Mode</th><th scope="col">Allocations</th><th scope="col">Metric</th><th scope="col">Now</th><th scope="col" class="hide-narrow">Last change</th></tr></thead>
    <tbody>${scaling.map((s) => {
      const running = props.app.processes.find((p) => p.process === s.process);
      return html`<tr>
      <th scope="row">${s.process}</th>
      <td>${SCALING_MODES[s.mode]}${s.windowMs === null ? null : html`<div class="muted">window ${s.windowMs / 1000} s</div>`}</td>
      <td>${running ? `${running.running}/${running.desiredCount}` : '0/0'} <span class="muted">of ${s.min}–${s.max ?? s.min}${s.per_region === null ? '' : `, ${s.per_region} per region`}</span></td>
      <td>${s.auto ? html`<code>${s.auto.metric}</code> target ${s.auto.target}` : '—'}</td>
      <td>${s.value === null ? html`<span class="muted">${s.reason ?? '—'}</span>` : html`${s.value} per allocation <span class="muted">asks ${s.recommended}</span>`}</td>
      <td class="hide-narrow">${s.lastChange ? html`${s.lastChange.from} → ${s.lastChange.to} <span class="muted">${s.lastChange.source}, ${relativeTime(s.lastChange.at)}</span><div class="muted">${s.lastChange.reason}</div>` : '—'}</td>
    </tr>`;
    })}</tbody></table></div>`;
}

function Snapshots(props: { app: string }) {
  // Only apps with a database have snapshots: the readiness view says which, so no request fails.
  const readiness = useResource<{ apps: { app: string }[] }>('/api/operator/snapshot-readiness');
  const hasDatabase = readiness.data?.apps.some((a) => a.app === props.app);
  if (readiness.data !== undefined && !hasDatabase) return html`<p class="muted">The app declares no database.</p>`;
  return hasDatabase
    ? html`<${SnapshotList} app=${props.app} />`
    : html`<${Loaded} resource=${readiness}>${() => null}<//>`;
}

function SnapshotList(props: { app: string }) {
  const snaps = useResource<any>(`/api/v1/apps/${encodeURIComponent(props.app)}/snapshots`);
  return html`<${Loaded} resource=${snaps}>${(data: any) => html`
    <p>Database <code>${data.database}</code>, keeping ${data.keep}.</p>
    <div class="actions"><${ActionButton} action="snapshot.take" params=${{ id: props.app }} label="Take a snapshot" onDone=${() => snaps.reload()} /></div>
    ${
      data.snapshots.length === 0
        ? html`<p class="muted">No snapshots yet.</p>`
        : html`<ul>${data.snapshots.map(
            (
              s: any,
            ) => html`<li><code>${s.filename}</code> ${bytes(s.sizeBytes)} <span class="muted">${relativeTime(s.createdAt)}</span>
      <${ActionButton} action="snapshot.restore" params=${{ id: props.app, filename: s.filename }} body=${{ confirm: true }} label="Restore" /></li>`,
          )}</ul>`
    }`}<//>`;
}

function Cron(props: { app: string }) {
  const cron = useResource<{ processes: any[] }>(`/api/operator/cron?app=${encodeURIComponent(props.app)}`);
  return html`<${Loaded} resource=${cron}>${(data: { processes: any[] }) =>
    data.processes.length === 0
      ? html`<p class="muted">No scheduled processes.</p>`
      : html`
    <div class="table-wrap"><table>
      <caption class="visually-hidden">Scheduled processes</caption>
      <thead><tr><th scope="col">Process</th><th scope="col">Schedule</th><th scope="col">Status</th><th scope="col">Next run</th><th scope="col">Last run</th><th scope="col">Actions</th></tr></thead>
      <tbody>${data.processes.map(
        (p) => html`<tr>
        <th scope="row">${p.process}</th><td><code>${p.schedule}</code> <span class="muted">${p.timeZone}</span></td><td><${Badge} value=${p.status} /></td>
        <td>${p.nextRun ? html`${p.nextRun.local} <span class="muted">${p.nextRun.relative}</span>` : '—'}</td>
        <td>${p.lastRun ? html`${p.lastRun.local} <span class="muted">${p.lastRun.relative}</span>` : '—'}</td>
        <td><div class="actions">
          <${ActionButton} action="cron.trigger" params=${{ id: props.app }} body=${{ process: p.process }} label="Run now" onDone=${() => cron.reload()} />
          ${
            p.status === 'paused'
              ? html`<${ActionButton} action="cron.resume" params=${{ id: props.app }} body=${{ process: p.process }} label="Resume" onDone=${() => cron.reload()} />`
              : html`<${ActionButton} action="cron.pause" params=${{ id: props.app }} body=${{ process: p.process }} label="Pause" onDone=${() => cron.reload()} />`
          }
        </div></td>
      </tr>`,
      )}</tbody></table></div>`}<//>`;
}

function Functions(props: { app: string }) {
  const history = useResource<{ functions: string[]; executions: any[] }>(
    `/api/apps/${encodeURIComponent(props.app)}/function/history`,
  );
  return html`<${Loaded} resource=${history}>${(data: { functions: string[]; executions: any[] }) =>
    data.functions.length === 0
      ? html`<p class="muted">No function processes.</p>`
      : html`
    ${
      data.executions.length === 0
        ? html`<p class="muted">${data.functions.join(', ')}: no executions yet.</p>`
        : html`<div class="table-wrap"><table>
      <caption class="visually-hidden">Function executions</caption>
      <thead><tr><th scope="col">Function</th><th scope="col">Status</th><th scope="col">Started</th><th scope="col">Duration</th></tr></thead>
      <tbody>${data.executions.map((e) => html`<tr><td>${e.process}</td><td><${Badge} value=${e.status} /></td><td>${relativeTime(e.startedAt)}</td><td>${e.durationMs === null ? '—' : `${e.durationMs} ms`}</td></tr>`)}</tbody>
    </table></div>`
    }`}<//>`;
}

function Endpoints(props: { app: string }) {
  const ingress = useResource<{ rules: any[]; disabled: any[] }>('/api/tunnel/ingress');
  return html`<${Loaded} resource=${ingress}>${(data: { rules: any[]; disabled: any[] }) => {
    const rules = data.rules.filter((r) => r.app === props.app);
    const disabled = (data.disabled ?? []).filter((d: any) => d.app === props.app);
    if (rules.length === 0 && disabled.length === 0) return html`<p class="muted">No routed public endpoints.</p>`;
    return html`<ul>
      ${rules.map(
        (r) => html`<li><code>${r.hostname}</code> → <code>${r.service}</code>${r.viaGateway ? ' (wake gateway)' : ''}
        <${ActionButton} action="endpoint.toggle" params=${{ id: props.app, hostname: r.hostname }} body=${{ hostname: r.hostname, enabled: false }} label="Turn off" onDone=${() => ingress.reload()} /></li>`,
      )}
      ${disabled.map(
        (d: any) => html`<li><code>${d.hostname}</code> <${Badge} value="warning" label="off" />
        <${ActionButton} action="endpoint.toggle" params=${{ id: props.app, hostname: d.hostname }} body=${{ hostname: d.hostname, enabled: true }} label="Turn on" onDone=${() => ingress.reload()} /></li>`,
      )}
    </ul>`;
  }}<//>`;
}

/** The page of one app. */
export function AppPage(props: { app: string }) {
  const app = useResource<AppView>(`/api/apps/${encodeURIComponent(props.app)}`);
  const [queued, setQueued] = useState<string | undefined>(undefined);
  const reload = useCallback(() => app.reload(), [app.reload]);
  useEventStream(reload, props.app);
  useEffect(() => {
    document.title = `${props.app} · svc console`;
  }, [props.app]);
  const onQueued = (result: any) => {
    if (typeof result?.deploymentId === 'string') setQueued(result.deploymentId);
    app.reload();
  };
  const params = { id: props.app };
  return html`
    <h1>${props.app}</h1>
    <${ErrorNote} error=${app.error} />
    ${
      app.data === undefined
        ? app.loading
          ? html`<p class="muted">Loading…</p>`
          : null
        : html`
      <${Release} app=${app.data} />
      <section aria-labelledby="app-actions"><h2 id="app-actions">Actions</h2>
        <div class="actions">
          <${ActionButton} action="app.deploy" params=${params} label="Deploy" onDone=${onQueued} />
          <${ActionButton} action="app.preflight" params=${params} label="Preflight" onDone=${onQueued} />
          <${ActionButton} action="app.rollback" params=${params} label="Roll back" onDone=${onQueued} />
          <${ActionButton} action="canary.promote" params=${params} label="Promote canaries" onDone=${onQueued} />
        </div>
      </section>
      <section aria-labelledby="app-conditions"><h2 id="app-conditions">Conditions</h2><${Conditions} app=${app.data} /></section>
      <section aria-labelledby="app-settings"><h2 id="app-settings">Settings</h2><${Settings} app=${app.data} /></section>
      <section aria-labelledby="app-findings"><h2 id="app-findings">Spec findings</h2><${Findings} app=${app.data} /></section>
      <section aria-labelledby="app-processes"><h2 id="app-processes">Processes and allocations</h2><${Processes} app=${app.data} /></section>
      <section aria-labelledby="app-scaling"><h2 id="app-scaling">Scaling</h2><${Scaling} app=${app.data} /></section>
      <section aria-labelledby="app-terminal"><h2 id="app-terminal">Terminal</h2><${AppTerminal} app=${props.app} /></section>
      <section aria-labelledby="app-logs"><h2 id="app-logs">Logs</h2><${AppLogs} app=${props.app} processes=${[...new Set(app.data.processes.map((p) => p.process))]} /></section>
      <section aria-labelledby="app-deployments"><h2 id="app-deployments">Deployments</h2><${Deployments} app=${props.app} selected=${queued} /></section>
      <section aria-labelledby="app-endpoints"><h2 id="app-endpoints">Endpoints</h2><${Endpoints} app=${props.app} /></section>
      <section aria-labelledby="app-snapshots"><h2 id="app-snapshots">Snapshots</h2><${Snapshots} app=${props.app} /></section>
      <section aria-labelledby="app-cron"><h2 id="app-cron">Scheduled processes</h2><${Cron} app=${props.app} /></section>
      <section aria-labelledby="app-functions"><h2 id="app-functions">Function history</h2>${
        app.data.conditions.some((c) => c.type === 'Valid' && c.status === 'True')
          ? html`<${Functions} app=${props.app} />`
          : html`<p class="muted">No valid spec: no function processes.</p>`
      }</section>
    `
    }`;
}
