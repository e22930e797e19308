/**
 * Release builder: immutable releases of an app at a commit, and the Dockerfile support behind them.
 */
export { BuildError } from '../errors.js';
export { ReleaseBuilder } from './release-builder.js';
export type { BuildReleaseRequest, Release, ReleaseBuilderOptions } from './release-builder.js';
export {
  RELEASE_APP_DIR,
  RELEASE_MANIFEST,
  ReleaseBuilderKind,
  readReleaseManifest,
  releaseLaunch,
} from './release-manifest.js';
export type { ReleaseLaunch, ReleaseManifest } from './release-manifest.js';
export { parseDockerfile, parseKeyValues, substitute } from './dockerfile.js';
export type { DockerInstruction } from './dockerfile.js';
export { effectiveCommand, hostPathFor, planNativeBuild } from './native-build-plan.js';
export type { NativeBuildPlan, NativeRunStep } from './native-build-plan.js';
