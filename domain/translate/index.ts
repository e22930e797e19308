/**
 * Spec-to-job translation: canonical app specs and releases as scheduler jobs.
 */
export { infrastructureEnvironment } from './infrastructure-environment.js';
export {
  missingVariablesCommand,
  schedulerVariableDelivery,
  schedulerVariableFileMode,
  schedulerVariableFilePath,
  secretsFolder,
} from './scheduler-variable-files.js';
export type { SchedulerVariableDelivery } from './scheduler-variable-files.js';
export { translateApp } from './translate-app.js';
export type {
  Translation,
  TranslationInfrastructure,
  TranslationInput,
  TranslationRelease,
  TranslationWarning,
} from './translation.js';
export { JobMetaKey, TranslationDefaults } from './translation-defaults.js';
export { allocationCount, jobId, placedOn, schedulerVariablesPath, translationTargets } from './translation-target.js';
export type { TranslationTarget } from './translation-target.js';
