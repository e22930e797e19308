/**
 * Read models of the apps API: each app with its conditions and runtime status, the service
 * manifest, and right-sizing suggestions.
 */
import { appSettings, type AppSettings } from '../../domain/apps/index.js';
import { NotFoundError } from '../../domain/errors.js';
import type { CanonicalAppSpec, Finding } from '../../domain/spec/index.js';
import type { Condition } from '../../domain/status/conditions.js';
import { instanceStatus, type Registry } from '../../domain/registry/index.js';
import type { Db } from '../../store/database.js';
import { getApp, listApps, type AppRow } from '../../store/control/apps.js';
import { observeApp, type ProcessObservation } from './observe-app.js';
import type { SchedulerTargets } from './scheduler-targets.js';
import { scalingViews, type ProcessScalingView, type ScalingReadModel } from '../scaling/scaling-view.js';

/** An app as `GET /api/apps` shows it. */
export interface AppView {
  readonly name: string;
  readonly file: string;
  readonly deploy: boolean;
  readonly generation: string | null;
  readonly observedGeneration: string | null;
  readonly conditions: readonly Condition[];
  /** The spec's findings (errors and warnings with their line and column). */
  readonly findings: readonly Finding[];
  readonly release: { readonly commit: string } | null;
  readonly deleting: boolean;
  readonly processes: readonly ProcessObservation[];
  /** What the spec asks beyond the jobs (source and repoWeb links, build, deploy and snapshot policy); null without a valid spec. */
  readonly settings: AppSettings | null;
  /** How each long-running process scales (bounds, the autoscaler's last evaluation, the last change). */
  readonly scaling: readonly ProcessScalingView[];
}

export interface AppViewSources {
  readonly db: Db;
  readonly targets: SchedulerTargets;
  readonly registry: Registry;
  /** The autoscaler's run-time state; without it the view shows the spec's bounds only. */
  readonly scaling?: ScalingReadModel;
}

async function toView(sources: AppViewSources, app: AppRow): Promise<AppView> {
  const spec = app.spec;
  const observed = await observeApp(app.name, sources.targets, sources.registry);
  const release = app.release;
  return {
    name: app.name,
    file: app.file,
    deploy: spec?.deploy ?? false,
    generation: app.generation,
    observedGeneration: app.observedGeneration,
    conditions: app.conditions,
    findings: app.findings,
    release: release ? { commit: release.commit } : null,
    deleting: app.deletedAt !== null,
    processes: observed.processes,
    settings: spec ? appSettings(spec, release?.commit ?? null) : null,
    scaling: spec ? scalingViews(spec, sources.scaling) : [],
  };
}

/** Every discovered app with its runtime status. */
export async function listAppViews(sources: AppViewSources): Promise<AppView[]> {
  return Promise.all(listApps(sources.db).map((app) => toView(sources, app)));
}

/** One app; `NotFoundError` when it is not discovered. */
export async function getAppView(sources: AppViewSources, name: string): Promise<AppView> {
  const app = getApp(sources.db, name);
  if (!app)
    throw new NotFoundError(`app "${name}" is not discovered under the apps folder`, {
      code: 'app_not_found',
      details: { app: name },
    });
  return toView(sources, app);
}

/** The process that receives an app's public endpoints: `web` if present, else the first process with a port. */
export function endpointProcess(spec: CanonicalAppSpec): string | undefined {
  const withPort = Object.entries(spec.processes)
    .filter(([, p]) => p.port !== undefined)
    .map(([name]) => name)
    .sort();
  return withPort.includes('web') ? 'web' : withPort[0];
}

/** One hosted service in the manifest. */
export interface ManifestService {
  readonly app: string;
  readonly process: string;
  readonly service: string;
  readonly type: string;
  /** public: reachable through declared endpoints; private: a port on this host only; internal: no port. */
  readonly reachability: 'public' | 'private' | 'internal';
  readonly endpoints: readonly { readonly url: string; readonly scope: 'public'; readonly region: string | null }[];
  readonly placement: { readonly regions: readonly string[]; readonly nodePool: string | null };
  readonly instances: readonly {
    readonly address: string;
    readonly port: number;
    readonly status: string;
    readonly allocationId: string;
  }[];
  readonly status: 'passing' | 'warning' | 'critical' | 'none';
}

/** Hosted services with reachability, placement and endpoint scope. */
export async function serviceManifest(sources: AppViewSources): Promise<{ services: ManifestService[] }> {
  return { services: await manifestServices(listApps(sources.db), sources.registry) };
}

/** The manifest's services of `apps` (rows already read), with their registry status. */
export async function manifestServices(apps: readonly AppRow[], registry: Registry): Promise<ManifestService[]> {
  const services: ManifestService[] = [];
  for (const app of apps) {
    const spec = app.spec;
    if (!spec || app.deletedAt !== null) continue;
    const publicProcess = endpointProcess(spec);
    for (const [process, definition] of Object.entries(spec.processes).sort(([a], [b]) => a.localeCompare(b))) {
      const service = `${spec.name}-${process}`;
      const instances = await registry.instances(service);
      const isPublic = process === publicProcess && (spec.endpoints ?? []).length > 0;
      const statuses = instances.map(instanceStatus);
      services.push({
        app: spec.name,
        process,
        service,
        type: definition.type,
        reachability: isPublic ? 'public' : definition.port !== undefined ? 'private' : 'internal',
        endpoints: isPublic
          ? (spec.endpoints ?? []).map((e) => ({ url: e.url, scope: 'public' as const, region: e.region ?? null }))
          : [],
        placement: {
          regions: definition.regions ?? Object.keys(spec.regions ?? {}),
          nodePool: spec.placement?.nodePool ?? null,
        },
        instances: instances.map((i) => ({
          address: i.address,
          port: i.port,
          status: instanceStatus(i),
          allocationId: i.allocationId,
        })),
        status:
          statuses.length === 0
            ? 'none'
            : statuses.includes('critical')
              ? 'critical'
              : statuses.includes('warning')
                ? 'warning'
                : 'passing',
      });
    }
  }
  return services;
}

/** Right-sizing classes of a running process. */
export type SizingStatus = 'at_risk' | 'right_sized' | 'overprovisioned';

/** Classifies peak memory against the declared limit: above 80% at risk, below 30% overprovisioned. */
export function classifyMemory(peakBytes: number, limitBytes: number): SizingStatus {
  const ratio = limitBytes > 0 ? peakBytes / limitBytes : 0;
  if (ratio > 0.8) return 'at_risk';
  if (ratio < 0.3) return 'overprovisioned';
  return 'right_sized';
}

/** Per running process: observed peak RSS against its memory limit, classified. */
export async function resourceSuggestions(sources: AppViewSources) {
  const suggestions = [];
  for (const app of listApps(sources.db)) {
    const observed = await observeApp(app.name, sources.targets, sources.registry);
    for (const process of observed.processes) {
      const running = process.allocations.filter((a) => a.status === 'running');
      if (running.length === 0) continue;
      const peak = Math.max(...running.map((a) => a.memory.peakBytes));
      const limit = running[0]!.memory.limitBytes;
      const status = classifyMemory(peak, limit);
      const limitMb = Math.round(limit / 1024 / 1024);
      const peakMb = Math.round((peak / 1024 / 1024) * 10) / 10;
      suggestions.push({
        app: app.name,
        process: process.process,
        region: process.region,
        allocations: running.length,
        peakMemoryMb: peakMb,
        memoryLimitMb: limitMb,
        usagePercent: limit > 0 ? Math.round((peak / limit) * 1000) / 10 : null,
        status,
        suggestion:
          status === 'at_risk'
            ? `raise resources.memory above ${Math.ceil(peakMb / 0.7)} MB to keep peak usage under 70%`
            : status === 'overprovisioned'
              ? `resources.memory could drop to about ${Math.max(16, Math.ceil(peakMb / 0.6))} MB`
              : 'keep resources.memory as it is',
      });
    }
  }
  return { thresholds: { atRiskAbovePercent: 80, overprovisionedBelowPercent: 30 }, suggestions };
}
