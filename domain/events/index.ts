export { Severity, discardEvents } from './event-port.js';
export type { EmitResult, EventEmitterPort, EventInput } from './event-port.js';
export {
  EventState,
  DEDUPE_WINDOW_MS,
  EVENT_PAGE_LIMIT,
  effectiveState,
  isAlerting,
  newEventId,
} from './event-record.js';
export type { Acknowledgement, EventRecord } from './event-record.js';
export { ManualClock, systemClock } from './clock.js';
export type { Clock } from './clock.js';
export {
  CorrelationKey,
  LEGACY_CAPACITY_KEY,
  explicitCorrelationKey,
  groupKeyOf,
  isCapacityKey,
} from './correlation.js';
export {
  CAPACITY_BELOW_MINIMUM,
  CAPACITY_RECOVERED,
  IncidentAction,
  isIncidentResolved,
  legacyWarningId,
  mayAdoptLegacyWarning,
  recoveryTargets,
} from './incident-rules.js';
export type { RecoveryCandidate, RecoveryEvent } from './incident-rules.js';
export { RESTART_RECONCILE_AGE_MS, ReconcileAction, decideReconcile } from './evidence-rules.js';
export type { EvidenceFacts, ReconcileDecision } from './evidence-rules.js';
export { ALERT_RULES, EVENT_TYPES } from './event-catalog.js';
export type { AlertRule, EventTypeInfo } from './event-catalog.js';
export { SINK_GATEWAY_PATTERN, planNotificationBootstrap } from './notification-bootstrap.js';
export type { BootstrapPlan, ManifestServiceLike } from './notification-bootstrap.js';
export { JobAction, operatorJobEvent } from './operator-job-events.js';
export { ChannelProvider, channelView } from './notification-channel.js';
export type { ChannelRecord, ChannelView } from './notification-channel.js';
