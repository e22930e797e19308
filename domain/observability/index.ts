/**
 * Observability domain: the generated scrape config, alert rules, starter dashboard, managed app
 * folders and their install plan, the value-safe bundle, and advisory tuning. Pure: no I/O.
 */
export {
  HOST_GATEWAY,
  hostPort,
  instanceTarget,
  isLoopbackHost,
  isWildcardHost,
  scrapeAddressing,
  splitHostPort,
} from './scrape-addressing.js';
export type { ScrapeAddressing, ScrapeAddressingOptions } from './scrape-addressing.js';
export { isLiveInstance, metricsProcesses, scrapeTargetGroups } from './scrape-targets.js';
export type { MetricsProcess, ScrapeTargetGroup } from './scrape-targets.js';
export {
  APPS_JOB,
  CONTROL_PLANE_JOB,
  DEFAULT_SCRAPE_INTERVAL,
  renderScrapeConfig,
  RULES_FILE,
  scrapeConfig,
  TOKEN_FILE,
} from './scrape-config.js';
export type { ScrapeConfigInput } from './scrape-config.js';
export {
  ALERT_RULES,
  AlertSeverity,
  alertRulesFile,
  RECENT_EVENT_SECONDS,
  renderAlertRules,
  selectAlertRules,
} from './alert-rules.js';
export type { AlertRule, SkippedAlertRule } from './alert-rules.js';
export {
  DASHBOARD_PANELS,
  DASHBOARD_UID,
  DATASOURCE_UID,
  metricsDatasource,
  platformDashboard,
  selectDashboardPanels,
} from './platform-dashboard.js';
export type { DashboardPanel } from './platform-dashboard.js';
export {
  MANAGED_PORTS,
  MANAGED_SERVICE_NAMES,
  managedServices,
  ManagedServiceName,
  METRICS_RETENTION,
  SPEC_FILE,
} from './managed-services.js';
export type { ManagedFile, ManagedService, ManagedServicesInput } from './managed-services.js';
export {
  ConflictReason,
  contentDigest,
  InstallAction,
  MARKER_FILE,
  markerFile,
  planManagedFolder,
  readMarker,
} from './install-plan.js';
export type { FolderPlan, ObservedFolder } from './install-plan.js';
export {
  BUNDLE_SCRAPE_CONFIG,
  bundleFiles,
  findSecretLeaks,
  MIN_SEARCHED_SECRET_LENGTH,
} from './observability-bundle.js';
export type { BundleFile, BundleInput, SecretLeak } from './observability-bundle.js';
export {
  LOWER_TO_PEAK_SHARE,
  MIN_MEMORY_MB,
  memoryTargetMb,
  RAISE_TO_PEAK_SHARE,
  recommendTuning,
  SizingStatus,
  TuningAction,
} from './tuning-recommendations.js';
export type {
  ResourceShape,
  SignalRead,
  SignalUse,
  SizingObservation,
  TuningRecommendation,
} from './tuning-recommendations.js';
export { BUILT_IN_SIGNAL_METRICS } from './tuning-recommendations.js';
export { quantile, SignalHistory, type SignalAggregate, type SignalReading } from './signal-history.js';
export {
  ACCESS_STATUS_BUCKETS,
  AccessStatusBucket,
  RECENT_ACCESS_CAPACITY,
  RecentAccessRing,
  SCRAPE_PATHS,
} from './recent-access.js';
export type { AccessRecorder } from './recent-access.js';
export { DEPLOY_CURSOR_WINDOW_MS, DeployHistory, durationMs } from './deploy-history.js';
export type { DeployHistorySeed, DeployTotal, FinishedDeployRecord, StartedDeployRecord } from './deploy-history.js';
export { CONTROL_PLANE_FAMILIES, seriesNames } from './metric-families.js';
export type { MetricFamily, MetricFamilyType } from './metric-families.js';
