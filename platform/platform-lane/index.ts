/**
 * Adapters of the platform self-upgrade lane: release folders and sources, the signature hook,
 * the API process and candidate APIs, and the host agent's process lock and launcher.
 */
export { ReleaseFolders, readReleaseManifest } from './release-folders.js';
export type { ReleaseManifest, StagedReleaseFolder } from './release-folders.js';
export { BuiltCheckoutSource, defaultReleaseLabel, gitCommit } from './built-checkout-source.js';
export { GitRefSource } from './git-ref-source.js';
export type { ArtifactSourceOptions } from './artifact-source.js';
export { ArtifactSource, fileSha256, hostTarget, isArtifactFolder, isReleaseArtifact } from './artifact-source.js';
export { treeFingerprint } from './tree-fingerprint.js';
export { runVerifyHook } from './verify-hook.js';
export type { VerifyOutcome } from './verify-hook.js';
export { probeApi, waitForApi } from './api-probe.js';
export type { ApiProbe } from './api-probe.js';
export { ApiRestarter, apiAlive, clearApiProcess, readApiProcess, recordApiProcess } from './api-process.js';
export type { ApiProcessRecord, ApiRestarterOptions, StoppedApi } from './api-process.js';
export { checkCandidate, freePort, reapCandidates } from './candidate-api.js';
export type { CandidateOutcome } from './candidate-api.js';
export { acquireAgentLock, launchAgent, runningAgent } from './host-agent-process.js';
export { releaseCommand } from './release-command.js';
export { FetchedReleaseSource } from './fetched-release-source.js';
export type { FetchedReleaseOptions } from './fetched-release-source.js';
export { checkSignature, keyFingerprint, loadReleasePublicKey, signatureBytes } from './release-signature.js';
export type { ReleasePublicKey } from './release-signature.js';
export {
  LISTENER_NAMES,
  LISTENERS_ENV,
  PREPARED_START_ENV,
  handOffSpawnOptions,
  handOffsSettled,
  heldListener,
  heldListenerNames,
  holdListener,
  preparedStart,
  receiveListeners,
  releaseListeners,
  sendListeners,
  startPrepared,
  whenPrepared,
} from './listener-handoff.js';
export type { ListenerHandle, ListenerName } from './listener-handoff.js';
