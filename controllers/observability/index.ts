/**
 * Observability controllers: the generated scrape config, alert rules and bundle, the managed app
 * install, advisory tuning, and the scrape-time metric families (apps, deploys, snapshots).
 */
export { ObservabilityService } from './observability-service.js';
export type { InstallOutcome, InstallRequest, ObservabilityOptions, TuningQuery } from './observability-service.js';
export { registerSnapshotMetrics, SNAPSHOT_METRICS } from './snapshot-metrics.js';
export type { SnapshotCounts } from './snapshot-metrics.js';
export { APP_METRICS, appHealth, HEALTH_STATES, providerLabel, registerAppMetrics } from './app-metrics.js';
export type { AppMetricsSources, HealthState } from './app-metrics.js';
export { DEPLOY_METRICS, registerDeployMetrics, seedDeployHistory } from './deploy-metrics.js';
export { applyFolderPlan, observeFolder } from './managed-folders.js';
