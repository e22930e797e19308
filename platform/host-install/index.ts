/**
 * The host install: applying the steps of `svc install` and `svc uninstall`, reading release folders.
 */
export { applyHostSteps, type ApplyHostStepsOptions, type StepOutcome, type StepReport } from './apply-host-steps.js';
export { readPlatformRelease, runningRelease } from './platform-release-file.js';
