/**
 * The platform self-upgrade lane: steps, phases, hold stages, release records and the release
 * source port.
 */
export { HOLD_STAGES, UpgradePhase, UpgradeStep, isPlatformKind, releaseId, resumePlan } from './platform-upgrade.js';
export type {
  PlatformLaneStep,
  PlatformReleaseBuild,
  PlatformUpgrade,
  ReleaseVerification,
  UpgradeDrainMode,
  UpgradePhase as UpgradePhaseValue,
  UpgradeStepStatus,
} from './platform-upgrade.js';
export type { ReleaseSource, StagedRelease } from './release-source.js';
export { releasesToPrune } from './release-retention.js';
export { readPlatformLanePayload } from './platform-lane-payload.js';
export type { PlatformLanePayload } from './platform-lane-payload.js';
export { SignaturePolicy, isFetchSelector, policyVerdict, releaseTag, selectorCommit } from './release-policy.js';
export type {
  HookCheck,
  PolicyVerdict,
  SignatureCheck,
  SignaturePolicy as SignaturePolicyValue,
} from './release-policy.js';
export { platformLabel, RELEASE_TAG } from './platform-label.js';
export type { ReleasePosition } from './platform-label.js';
