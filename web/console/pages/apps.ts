/**
 * Apps: every discovered app with its conditions, processes, release, health and wake state.
 */
import { useCallback } from 'preact/hooks';
import { html } from '../../shared/html.js';
import { useResource } from '../../shared/resource.js';
import { Badge, Loaded } from '../../shared/ui.js';
import { shortCommit } from '../../shared/format.js';
import { useEventStream } from '../event-stream.js';
import { linkClick } from '../router.js';
import type { AppList, AppView } from '../../../openapi/control-plane.types.js';

/** The condition `type` of an app. */
export function condition(app: AppView, type: string) {
  return app.conditions.find((c) => c.type === type);
}

/** The apps page. */
export function AppsPage() {
  const apps = useResource<AppList>('/api/apps', { refreshMs: 10_000 });
  const wake = useResource<{ targets?: any[] }>('/api/operator/wake-targets', { refreshMs: 30_000 });
  const reload = useCallback(() => apps.reload(), [apps.reload]);
  useEventStream(reload);
  const wakeOf = (name: string) => (wake.data?.targets ?? []).filter((t: any) => t.app === name);
  return html`
    <h1>Apps</h1>
    <${Loaded} resource=${apps}>${(data: AppList) => html`
      <div class="table-wrap">
        <table>
          <caption class="visually-hidden">Apps with their conditions</caption>
          <thead><tr><th scope="col">App</th><th scope="col">Ready</th><th scope="col">Processes</th><th scope="col" class="hide-narrow">Release</th><th scope="col" class="hide-narrow">Health</th><th scope="col" class="hide-narrow">Wake</th></tr></thead>
          <tbody>
            ${data.apps.map((app) => {
              const ready = condition(app, 'Ready');
              const healthy = condition(app, 'Healthy');
              const href = `/ui/apps/${encodeURIComponent(app.name)}`;
              return html`<tr data-app=${app.name}>
                <th scope="row"><a href=${href} onClick=${(e: MouseEvent) => linkClick(href, e)}>${app.name}</a>${app.deploy ? null : html` <span class="muted">(deploy: false)</span>`}</th>
                <td><${Badge} value=${ready?.status} label=${ready?.status === 'True' ? 'Ready' : (ready?.reason ?? 'unknown')} /></td>
                <td>${app.processes.length === 0 ? html`<span class="muted">none</span>` : app.processes.map((p) => html`<div>${p.process} <span class="muted">${p.running}/${p.desiredCount}${p.paused ? ' paused' : ''}</span></div>`)}</td>
                <td class="hide-narrow"><code>${shortCommit(app.release?.commit)}</code></td>
                <td class="hide-narrow"><${Badge} value=${healthy?.status} label=${healthy?.reason ?? 'unknown'} /></td>
                <td class="hide-narrow">${wakeOf(app.name).map((t: any) => html`<div>${t.process} <${Badge} value=${t.readiness === 'ready' ? 'ready' : 'warning'} label=${t.readiness ?? 'unknown'} />${t.gatewayManaged ? html` <span class="muted">wakes on demand</span>` : null}</div>`)}</td>
              </tr>`;
            })}
          </tbody>
        </table>
      </div>
      <p class="muted">${data.apps.length} app(s).</p>`}<//>`;
}
