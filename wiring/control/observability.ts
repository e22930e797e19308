/**
 * Wires the observability service from the configuration and the control plane's parts, and
 * registers the scrape-time families of `/metrics`: apps, processes, health and service status,
 * buckets, recent access events, deploys, and the snapshot gauges the snapshot-pressure alert reads.
 */
import type { SignalReader } from '../../controllers/scaling/signal-sampler.js';
import { VARIABLES, type SvcConfig } from '../../platform/config.js';
import type { Logger } from '../../platform/logger.js';
import type { ControlMetrics } from '../../platform/metrics/control-metrics.js';
import type { Registry } from '../../domain/registry/index.js';
import type { Db } from '../../store/database.js';
import { AppRowsReader, type AppRow } from '../../store/control/apps.js';
import type { SchedulerTargets } from '../../controllers/apps/scheduler-targets.js';
import { ObservabilityService } from '../../controllers/observability/observability-service.js';
import { registerSnapshotMetrics, type SnapshotCounts } from '../../controllers/observability/snapshot-metrics.js';
import { registerAppMetrics } from '../../controllers/observability/app-metrics.js';
import { registerDeployMetrics } from '../../controllers/observability/deploy-metrics.js';
import type { RecentAccessRing } from '../../domain/observability/recent-access.js';

/** What {@link startObservability} needs besides the configuration. */
export interface StartObservabilityOptions {
  readonly db: Db;
  readonly registry: Registry;
  readonly targets: SchedulerTargets;
  readonly metrics: ControlMetrics;
  readonly controlUrl: () => string;
  readonly logger: Logger;
  /** Local snapshot counts per app-owned database (the snapshot readiness view of `apps`); unset: no snapshot gauges. */
  readonly snapshotCounts?: (apps: readonly AppRow[]) => readonly SnapshotCounts[];
  /** The API's recent access ring (`svc_access_events_recent_total`). */
  readonly access?: RecentAccessRing;
  /** Samples of the tuning signals. */
  readonly signals?: SignalReader;
}

/**
 * The values of every secret configuration variable, by variable name. A variable that holds several
 * secrets (connector tokens by id) gives each: its first under its name, the others as `<name>#<n>`.
 */
export function secretValues(config: SvcConfig): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [key, spec] of Object.entries(VARIABLES)) {
    if (!('secret' in spec) || spec.secret !== true) continue;
    const value: unknown = config[key as keyof SvcConfig];
    if (typeof value === 'string' || value === undefined) {
      out[spec.name] = value;
      continue;
    }
    const each = Object.values(value as Record<string, unknown>).filter((v): v is string => typeof v === 'string');
    out[spec.name] = each[0];
    each.slice(1).forEach((secret, i) => (out[`${spec.name}#${i + 2}`] = secret));
  }
  return out;
}

/** The observability service of a control plane configured by `config`. */
export function startObservability(config: SvcConfig, options: StartObservabilityOptions): ObservabilityService {
  const logger = options.logger.child({ component: 'observability' });
  // One read of the app rows per scrape for every scrape-time family (prom-client collects every
  // family in one tick), by a reader that re-parses only the rows that changed.
  const rows = new AppRowsReader(options.db);
  let current: readonly AppRow[] | undefined;
  const apps = (): readonly AppRow[] => {
    if (current === undefined) {
      current = rows.list();
      queueMicrotask(() => (current = undefined));
    }
    return current;
  };
  registerAppMetrics(options.metrics.registry, {
    apps,
    serviceRegistry: options.registry,
    logger,
    ...(options.access ? { access: options.access } : {}),
  });
  registerDeployMetrics(options.metrics.registry, { db: options.db, logger });
  const snapshotCounts = options.snapshotCounts;
  if (snapshotCounts !== undefined) {
    registerSnapshotMetrics(
      options.metrics.registry,
      () => snapshotCounts(apps()),
      (err) => logger.warn({ err }, 'snapshot counts could not be read for /metrics'),
    );
  }
  return new ObservabilityService({
    db: options.db,
    registry: options.registry,
    targets: options.targets,
    metrics: options.metrics,
    appsDir: config.appsDir,
    bindHost: config.host,
    controlUrl: options.controlUrl,
    observabilityTarget: config.observabilityTarget,
    environment: config.environment,
    metricsNeedToken: config.requireExplicitAuth,
    secrets: () => secretValues(config),
    logger,
    ...(options.signals ? { signals: options.signals } : {}),
  });
}
