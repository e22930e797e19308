/**
 * The deploy families of `/metrics` from the durable deployment records: `svc_deploys_total`
 * (counter, by app and status), `svc_deploy_duration_seconds` (`_count` and `_sum` of finished
 * deploys that ran, by app and status) and `svc_deploy_last_started_timestamp_seconds` (by app).
 * Seeded from the whole history at registration, then advanced at each scrape by the deploys that
 * finished or started since (docs/adr/0112-deploy-counters-from-durable-records.md).
 */
import type { Registry as MetricRegistry } from 'prom-client';
import { ScrapeTimeFamily } from '../../platform/metrics/scrape-time-family.js';
import type { Logger } from '../../platform/logger.js';
import { SummaryTotals } from '../../platform/metrics/summary-totals.js';
import { DEPLOY_CURSOR_WINDOW_MS, DeployHistory } from '../../domain/observability/deploy-history.js';
import type { Db } from '../../store/database.js';
import {
  deployTotals,
  deploysFinishedSince,
  deploysStartedSince,
  lastDeployStarts,
  readConsistently,
} from '../../store/control/deployment-history.js';

/** Names of the families this module registers. */
export const DEPLOY_METRICS = {
  deploysTotal: 'svc_deploys_total',
  duration: 'svc_deploy_duration_seconds',
  lastStarted: 'svc_deploy_last_started_timestamp_seconds',
} as const;

/** Reads the history's totals from control.db (one consistent snapshot). */
export function seedDeployHistory(db: Db, now = Date.now()): DeployHistory {
  return readConsistently(db, () => {
    const since = new Date(now - DEPLOY_CURSOR_WINDOW_MS).toISOString();
    return new DeployHistory({
      totals: deployTotals(db),
      lastStarts: lastDeployStarts(db),
      recentFinished: deploysFinishedSince(db, since),
      recentStarted: deploysStartedSince(db, since),
      at: now,
    });
  });
}

/** Registers the deploy families on `registry`, seeded now; returns the history they read. */
export function registerDeployMetrics(
  registry: MetricRegistry,
  options: { readonly db: Db; readonly logger: Logger },
): DeployHistory {
  const { db, logger } = options;
  const history = seedDeployHistory(db);
  const advance = (): DeployHistory => {
    try {
      readConsistently(db, () => {
        history.addFinished(deploysFinishedSince(db, history.finishedSince()));
        history.addStarted(deploysStartedSince(db, history.startedSince()));
      });
    } catch (err) {
      // Serve what was counted so far: a counter must not vanish for a read error.
      logger.warn({ err }, 'deployments could not be read for /metrics');
    }
    return history;
  };
  new ScrapeTimeFamily({
    name: DEPLOY_METRICS.deploysTotal,
    help: 'Finished deploys by app and final status (succeeded, failed, rolled_back, cancelled), from the durable deployment records',
    labelNames: ['app', 'status'],
    registry,
    type: 'counter',
    read: () =>
      advance()
        .totals()
        .map((t) => ({ labels: { app: t.app, status: t.status }, value: t.count })),
  });
  new SummaryTotals({
    name: DEPLOY_METRICS.duration,
    help: 'Duration of finished deploys that ran (started to finished), by app and final status, from the durable deployment records',
    labelNames: ['app', 'status'],
    registry,
    read: () =>
      advance()
        .totals()
        .filter((t) => t.timed > 0)
        .map((t) => ({ labels: { app: t.app, status: t.status }, count: t.timed, sum: t.ms / 1000 })),
  });
  new ScrapeTimeFamily({
    name: DEPLOY_METRICS.lastStarted,
    help: 'When the latest deploy of each app started (Unix seconds)',
    labelNames: ['app'],
    registry,
    type: 'gauge',
    read: () =>
      advance()
        .lastStarts()
        .map((s) => ({ labels: { app: s.app }, value: s.seconds })),
  });
  return history;
}
