/**
 * The release artifact and the host install of the platform (`svc install`, `svc uninstall`).
 */
export {
  RELEASE_EXECUTABLE,
  RELEASE_MANIFEST,
  parsePlatformRelease,
  releaseName,
  type PlatformRelease,
} from './platform-release.js';
export {
  HOST_PATHS,
  SERVICE_UNIT,
  SERVICE_USER,
  afterInstallHint,
  planInstall,
  planUninstall,
  renderSettings,
  renderUnit,
  type HostStep,
  type StepOwner,
} from './install-plan.js';
