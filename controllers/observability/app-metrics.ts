/**
 * The app families of `/metrics`, read at each scrape from the state the API reads: the apps in
 * control.db (`svc_apps_total`, `svc_app_info`, `svc_process_info`, `svc_object_storage_buckets`),
 * the service manifest over the registry (`svc_app_health`, `svc_service_status`) and the recent
 * access ring (`svc_access_events_recent_total`). Labels hold names and closed sets only
 * (docs/observability.md lists every value).
 */
import { Gauge, type Registry as MetricRegistry } from 'prom-client';
import type { Logger } from '../../platform/logger.js';
import { UntypedGauge } from '../../platform/metrics/untyped-gauge.js';
import type { Registry } from '../../domain/registry/index.js';
import type { CanonicalAppSpec } from '../../domain/spec/index.js';
import { ACCESS_STATUS_BUCKETS, type RecentAccessRing } from '../../domain/observability/recent-access.js';
import type { Db } from '../../store/database.js';
import { listApps, type AppRow } from '../../store/control/apps.js';
import { serviceManifest, type ManifestService } from '../apps/app-views.js';
import type { SchedulerTargets } from '../apps/scheduler-targets.js';

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
  readonly db: Db;
  readonly serviceRegistry: Registry;
  readonly targets: SchedulerTargets;
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
      const apps = listApps(sources.db);
      const { services } = await serviceManifest({ db: sources.db, registry: sources.serviceRegistry, targets: sources.targets });
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

  new UntypedGauge({
    name: APP_METRICS.appsTotal,
    help: 'Discovered deployable apps: a valid spec read at least once, deploy: true, not being deleted',
    registers: [registry],
    async collect() {
      const { apps } = await snapshot();
      this.set(apps.filter(live).filter((a) => a.spec.deploy).length);
    },
  });
  new Gauge({
    name: APP_METRICS.appInfo,
    help: 'Always 1: one series per discovered app, its metadata in the labels',
    labelNames: ['app', 'deploy', 'valid', 'public', 'node_pool'],
    registers: [registry],
    async collect() {
      const { apps } = await snapshot();
      this.reset();
      for (const app of apps.filter(live)) {
        this.set({
          app: app.name,
          deploy: String(app.spec.deploy),
          valid: String(app.generation !== null),
          public: String(app.spec.endpoints.length > 0),
          node_pool: app.spec.placement?.nodePool ?? 'none',
        }, 1);
      }
    },
  });
  new Gauge({
    name: APP_METRICS.processInfo,
    help: 'Always 1: one series per process of a discovered app, its type and whether it exports metrics in the labels',
    labelNames: ['app', 'process', 'type', 'metrics_enabled'],
    registers: [registry],
    async collect() {
      const { apps } = await snapshot();
      this.reset();
      for (const app of apps.filter(live)) {
        for (const [process, definition] of Object.entries(app.spec.processes)) {
          this.set({ app: app.name, process, type: definition.type, metrics_enabled: String(definition.metrics.enabled) }, 1);
        }
      }
    },
  });
  new Gauge({
    name: APP_METRICS.objectStorageBuckets,
    help: 'Buckets an app declares under infrastructure.objectStorage, by provider',
    labelNames: ['app', 'provider'],
    registers: [registry],
    async collect() {
      const { apps } = await snapshot();
      this.reset();
      for (const app of apps.filter(live)) {
        const storage = app.spec.infrastructure?.objectStorage;
        if (storage === undefined) continue;
        this.set({ app: app.name, provider: providerLabel(storage.provider) }, storage.buckets.length);
      }
    },
  });
  new Gauge({
    name: APP_METRICS.appHealth,
    help: 'App health from the service manifest: 1 for the current state (its worst service), 0 for the others',
    labelNames: ['app', 'status'],
    registers: [registry],
    async collect() {
      const { services } = await snapshot();
      const byApp = new Map<string, HealthState[]>();
      for (const s of services) byApp.set(s.app, [...(byApp.get(s.app) ?? []), s.status]);
      this.reset();
      for (const [app, statuses] of byApp) {
        const current = appHealth(statuses);
        for (const status of HEALTH_STATES) this.set({ app, status }, status === current ? 1 : 0);
      }
    },
  });
  new Gauge({
    name: APP_METRICS.serviceStatus,
    help: 'Registry status of each hosted service (app process) as the service manifest shows it: 1 for the current state, 0 for the others',
    labelNames: ['app', 'process', 'service', 'status'],
    registers: [registry],
    async collect() {
      const { services } = await snapshot();
      this.reset();
      for (const s of services) {
        for (const status of HEALTH_STATES) this.set({ app: s.app, process: s.process, service: s.service, status }, status === s.status ? 1 : 0);
      }
    },
  });
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
