/**
 * Durable operations: kinds, statuses and the crash-recovery rule.
 */
export { OPERATION_KINDS, OperationKind, OperationStatus, isTerminalStatus, planRecovery } from './operation.js';
export type { Operation, RecoveryDecision } from './operation.js';
export { readDeployPayload, readSnapshotPrunePayload, readSnapshotRestorePayload } from './operation-payloads.js';
export type { DeployPayload, SnapshotPrunePayload, SnapshotRestorePayload } from './operation-payloads.js';
