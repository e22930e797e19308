/**
 * The release artifact and the host install of the platform (`svc install`, `svc uninstall`).
 */
export { RELEASE_EXECUTABLE, RELEASE_MANIFEST, parsePlatformRelease, releaseName, type PlatformRelease } from './platform-release.js';
