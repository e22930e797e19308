/**
 * The app families of `/metrics`, read at each scrape from the state the API reads: the apps in
 * control.db (`svc_apps_total`, `svc_app_info`, `svc_process_info`, `svc_object_storage_buckets`),
 * the service manifest over the registry (`svc_app_health`, `svc_service_status`) and the recent
 * access ring (`svc_access_events_recent_total`). Labels hold names and closed sets only
 * (docs/observability.md lists every value).
 */
import type { Registry as MetricRegistry } from 'prom-client';
import type { Logger } from '../../platform/logger.js';
import { UntypedGauge } from '../../platform/metrics/untyped-gauge.js';
import { ScrapeTimeFamily, type ScrapeTimeSample } from '../../platform/metrics/scrape-time-family.js';
import type { Registry } from '../../domain/registry/index.js';
import type { CanonicalAppSpec } from '../../domain/spec/index.js';
import { ACCESS_STATUS_BUCKETS, type RecentAccessRing } from '../../domain/observability/recent-access.js';
import type { AppRow } from '../../store/control/apps.js';
import { manifestServices, type ManifestService } from '../apps/app-views.js';

/** Health states of a service in the manifest, and of an app (its worst service). */
export const HEALTH_STATES = ['passing', 'warning', 'critical', 'none'] as const;
export type HealthState = (typeof HEALTH_STATES)[number];

/** Names of the families this module registers. */
export const APP_METRICS = {
  appsTotal: 'svc_apps_total',
  appInfo: 'svc_app_info',
  processInfo: 'svc_process_info',
  appHealth: 'svc_app_health',
  serviceStatus: 'svc_service_status',
  objectStorageBuckets: 'svc_object_storage_buckets',
  accessEventsRecent: 'svc_access_events_recent_total',
} as const;

/** What {@link registerAppMetrics} reads. */
export interface AppMetricsSources {
  /** Every app row (a cached reader: see `AppRowsReader`). */
  readonly apps: () => readonly AppRow[];
  readonly serviceRegistry: Registry;
  /** The API's recent access ring; unset: no `svc_access_events_recent_total`. */
  readonly access?: RecentAccessRing;
  readonly logger: Logger;
}

/** One scrape's view of the apps and the manifest. */
interface AppsSnapshot {
  readonly apps: readonly AppRow[];
  readonly services: readonly ManifestService[];
}

const PROVIDER = /^[a-z0-9][a-z0-9_.-]{0,31}$/;

/** The `provider` label of an app's object storage: the spec's hint lower-cased, `default` when unset, `other` when it is not a short name. */
export function providerLabel(provider: string | undefined): string {
  if (provider === undefined || provider.trim() === '') return 'default';
  const lower = provider.trim().toLowerCase();
  return PROVIDER.test(lower) ? lower : 'other';
}

/** An app's health: its worst service (critical, then warning, then passing); `none` without instances. */
export function appHealth(statuses: readonly HealthState[]): HealthState {
  for (const state of ['critical', 'warning', 'passing'] as const) if (statuses.includes(state)) return state;
  return 'none';
}

function live(app: AppRow): app is AppRow & { spec: CanonicalAppSpec } {
  return app.spec !== null && app.deletedAt === null;
}

/**
 * Registers the app families on `registry`. One snapshot (apps and manifest) is read per scrape
 * and shared by every family: prom-client starts every family's collect before awaiting any.
 */
export function registerAppMetrics(registry: MetricRegistry, sources: AppMetricsSources): void {
  let pending: Promise<AppsSnapshot> | undefined;
  const read = async (): Promise<AppsSnapshot> => {
    try {
      const apps = sources.apps();
      const services = await manifestServices(apps, sources.serviceRegistry);
      return { apps, services };
    } catch (err) {
      sources.logger.warn({ err }, 'apps could not be read for /metrics');
      return { apps: [], services: [] };
    }
  };
  const snapshot = (): Promise<AppsSnapshot> => {
    if (pending === undefined) {
      const started = read();
      pending = started;
      void started.finally(() => {
        if (pending === started) pending = undefined;
      });
    }
    return pending;
  };

  const family = <T extends string>(
    name: string,
    help: string,
    labelNames: readonly T[],
    type: 'gauge' | 'untyped',
    read: (snapshot: AppsSnapshot) => ScrapeTimeSample<T>[],
  ) => new ScrapeTimeFamily({ name, help, labelNames, registry, type, read: async () => read(await snapshot()) });

  family(
    APP_METRICS.appsTotal,
    'Discovered deployable apps: a valid spec read at least once, deploy: true, not being deleted',
    [],
    'untyped',
    ({ apps }) => [{ labels: {}, value: apps.filter(live).filter((a) => a.spec.deploy).length }],
  );
  family(
    APP_METRICS.appInfo,
    'Always 1: one series per discovered app, its metadata in the labels',
    ['app', 'deploy', 'valid', 'public', 'node_pool'],
    'gauge',
    ({ apps }) =>
      apps.filter(live).map((app) => ({
        labels: {
          app: app.name,
          deploy: String(app.spec.deploy),
          valid: String(app.generation !== null),
          public: String(app.spec.endpoints.length > 0),
          node_pool: app.spec.placement?.nodePool ?? 'none',
        },
        value: 1,
      })),
  );
  family(
    APP_METRICS.processInfo,
    'Always 1: one series per process of a discovered app, its type and whether it exports metrics in the labels',
    ['app', 'process', 'type', 'metrics_enabled'],
    'gauge',
    ({ apps }) =>
      apps.filter(live).flatMap((app) =>
        Object.entries(app.spec.processes).map(([process, definition]) => ({
          labels: {
            app: app.name,
            process,
            type: definition.type,
            metrics_enabled: String(definition.metrics.enabled),
          },
          value: 1,
        })),
      ),
  );
  family(
    APP_METRICS.objectStorageBuckets,
    'Buckets an app declares under infrastructure.objectStorage, by provider',
    ['app', 'provider'],
    'gauge',
    ({ apps }) =>
      apps.filter(live).flatMap((app) => {
        const storage = app.spec.infrastructure?.objectStorage;
        return storage === undefined
          ? []
          : [{ labels: { app: app.name, provider: providerLabel(storage.provider) }, value: storage.buckets.length }];
      }),
  );
  family(
    APP_METRICS.appHealth,
    'Always 1: app health from the service manifest (its worst service) in the status label',
    ['app', 'status'],
    'gauge',
    ({ services }) => {
      const byApp = new Map<string, HealthState[]>();
      for (const s of services) {
        const list = byApp.get(s.app);
        if (list) list.push(s.status);
        else byApp.set(s.app, [s.status]);
      }
      return [...byApp].map(([app, statuses]) => ({ labels: { app, status: appHealth(statuses) }, value: 1 }));
    },
  );
  family(
    APP_METRICS.serviceStatus,
    'Always 1: registry status of each hosted service (app process) as the service manifest shows it, in the status label',
    ['app', 'process', 'service', 'status'],
    'gauge',
    ({ services }) =>
      services.map((s) => ({
        labels: { app: s.app, process: s.process, service: s.service, status: s.status },
        value: 1,
      })),
  );
  const access = sources.access;
  if (access !== undefined) {
    new UntypedGauge({
      name: APP_METRICS.accessEventsRecent,
      help: `API requests among the last ${access.capacity} the control plane answered (scrapes excluded), by status bucket`,
      labelNames: ['status'],
      registers: [registry],
      collect() {
        const counts = access.counts();
        for (const status of ACCESS_STATUS_BUCKETS) this.set({ status }, counts[status]);
      },
    });
  }
}
