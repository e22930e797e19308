/**
 * Operator views: the read-only service behind the operator endpoints and platform rollups, the
 * secret-free settings it reads, and the start-time platform release record.
 */
export { OperatorService } from './operator-service.js';
export type { OperatorServiceOptions } from './operator-service.js';
export { operatorSettingsFrom, secretValuesOf, variableSet } from './operator-settings.js';
export type { OperatorSettings } from './operator-settings.js';
export { recordPlatformRelease } from './platform-release-record.js';
export { appSecretsDir } from './secret-plan-reader.js';
