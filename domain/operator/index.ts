/**
 * Operator views: pure shaping and classification behind the read-only operator endpoints (inbox,
 * cron, deploy confidence, auth hints, actions, platform rollup, secret plan, production readiness,
 * platform releases), and their query parameters.
 */
export { ActionRisk, actionCatalog, filterActions, pinProperty } from './action-catalog.js';
export type { ActionDescriptor, ActionHeader, ActionSchemas } from './action-catalog.js';
export { authHints } from './auth-hints.js';
export type { AuthFacts, AuthHints, AuthMechanism } from './auth-hints.js';
export { DEFAULT_CRON_TIME_ZONE, cronActionPath, describeCronProcess, nextCronRun } from './cron-view.js';
export type {
  ActionLink,
  ChildCounters,
  CronChildFacts,
  CronParentFacts,
  CronProcessFacts,
  CronProcessView,
  CronStatus,
} from './cron-view.js';
export { Confidence, assessDeployConfidence } from './deploy-confidence.js';
export type {
  DeployConfidenceFacts,
  DeployConfidenceView,
  DeploymentFacts,
  SourceEvidence,
} from './deploy-confidence.js';
export { buildInbox, inboxOperation, snapshotRisks, standingFailures } from './inbox.js';
export type { AppRisk, Inbox, InboxFacts, InboxOperation, IncidentFacts } from './inbox.js';
export { OPERATOR_QUERY_SCHEMAS, parseOperatorQuery } from './operator-query.js';
export type { OperatorView, ParsedQuery, RawQuery } from './operator-query.js';
export { RiskSeverity, bySeverity, worstSeverity } from './operator-risk.js';
export type { OperatorRisk } from './operator-risk.js';
export { platformIdentity, platformReleaseHistory } from './platform-releases.js';
export type { PlatformReleaseGroup, PlatformReleaseHistory, PlatformStart } from './platform-releases.js';
export { rollupPlatform, rollupSnapshots } from './platform-rollup.js';
export type { PlatformFacts, SnapshotReadinessFacts, SnapshotRollup } from './platform-rollup.js';
export { evaluateReadiness } from './production-readiness.js';
export type { ProductionReadiness, ReadinessCheck, ReadinessFacts } from './production-readiness.js';
export { SecretAction, planSecretMigration } from './secret-plan.js';
export type {
  AppSecretFacts,
  PlatformSecretFacts,
  SecretLocation,
  SecretPlan,
  SecretPlanEntry,
  SecretValueFile,
} from './secret-plan.js';
export {
  MIN_GUARDED_SECRET_LENGTH,
  REDACTED,
  containsSecretValue,
  looksLikeSecretName,
  redactCredentials,
  scrubSecretValues,
  shortText,
} from './secret-safety.js';
export { durationText, formatInZone, instantText, isKnownTimeZone, relativeText } from './time-text.js';
export type { InstantText } from './time-text.js';
