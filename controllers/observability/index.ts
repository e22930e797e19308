/**
 * Observability controllers: the generated scrape config, alert rules and bundle, the managed app
 * install, advisory tuning, and the snapshot gauges.
 */
export { ObservabilityService } from './observability-service.js';
export type { InstallOutcome, InstallRequest, ObservabilityOptions, TuningQuery } from './observability-service.js';
export { registerSnapshotMetrics, SNAPSHOT_METRICS } from './snapshot-metrics.js';
export type { SnapshotCounts } from './snapshot-metrics.js';
export { applyFolderPlan, observeFolder } from './managed-folders.js';
