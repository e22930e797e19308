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

/** An app as `GET /api/apps` lists it. */
/** One process's scaling as `GET /api/apps/{id}` reports it. */
export interface ScalingView {
  readonly process: string;
  readonly mode: 'fixed' | 'scale_to_zero' | 'autoscaled';
  readonly min: number;
  readonly max: number | null;
  readonly per_region: number | null;
  readonly auto: { readonly metric: string; readonly target: number } | null;
  readonly value: number | null;
  readonly recommended: number | null;
  readonly reason: string | null;
  readonly evaluatedAt: string | null;
  readonly windowMs: number | null;
  readonly lastChange: {
    readonly at: string;
    readonly from: number;
    readonly to: number;
    readonly source: string;
    readonly reason: string;
  } | null;
}

export interface AppView {
  readonly name: string;
  readonly deploy: boolean;
  readonly conditions: readonly {
    readonly type: string;
    readonly status: string;
    readonly reason: string;
    readonly message: string;
    readonly lastTransitionTime: string;
  }[];
  readonly findings: readonly {
    readonly path?: string;
    readonly rule: string;
    readonly message: string;
    readonly line?: number;
    readonly column?: number;
    readonly severity: string;
  }[];
  readonly release: { readonly commit: string } | null;
  /** What the spec asks beyond the jobs; null without a valid spec (see domain/apps/app-settings.ts). */
  readonly settings?: AppSettings | null;
  /** How each long-running process scales (absent from an older API). */
  readonly scaling?: readonly ScalingView[];
  readonly processes: readonly {
    readonly process: string;
    readonly jobType: string;
    readonly region: string;
    readonly desiredCount: number;
    readonly running: number;
    readonly paused: boolean;
    readonly health: string | null;
    readonly allocations: readonly any[];
  }[];
}

/** Web links into the app's repository (`repo.repoWeb`). */
export interface RepoLinks {
  readonly repository: string;
  readonly branch: string;
  readonly spec_file: string;
  readonly commit?: string;
  readonly release?: string;
}

/** The spec-derived settings of an app. */
export interface AppSettings {
  readonly deploy: boolean;
  readonly repo: {
    readonly url: string;
    readonly branch: string;
    readonly auto_deploy: boolean;
    readonly repo_web: string | null;
    readonly links: RepoLinks | null;
  } | null;
  readonly build: { readonly dockerfile: string; readonly image: string | null; readonly test: string | null };
  readonly deploy_policy: {
    readonly auto_rollback: boolean;
    readonly canaries: readonly {
      readonly process: string;
      readonly count: number;
      readonly evaluate_after: string | null;
    }[];
  };
  readonly snapshots: {
    readonly keep: number;
    readonly pre_restore: boolean;
    readonly export_bucket: string | null;
  } | null;
  readonly expected_secrets: readonly string[];
}

/** The condition `type` of an app. */
export function condition(app: AppView, type: string) {
  return app.conditions.find((c) => c.type === type);
}

/** The apps page. */
export function AppsPage() {
  const apps = useResource<{ apps: AppView[] }>('/api/apps', { refreshMs: 10_000 });
  const wake = useResource<{ targets?: any[] }>('/api/operator/wake-targets', { refreshMs: 30_000 });
  const reload = useCallback(() => apps.reload(), [apps.reload]);
  useEventStream(reload);
  const wakeOf = (name: string) => (wake.data?.targets ?? []).filter((t: any) => t.app === name);
  return html`
    <h1>Apps</h1>
    <${Loaded} resource=${apps}>${(data: { apps: AppView[] }) => html`
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
