/**
 * Apps as the controllers and the store share them: the release an app runs.
 */
export type { AppRelease, RegionRelease } from './app-release.js';
export { runningSpec } from './app-release.js';
export type { AppSettings } from './app-settings.js';
export { appSettings } from './app-settings.js';
export type { RepoLinks } from './repo-links.js';
export { repoLinks, SPEC_FILE_IN_REPO } from './repo-links.js';
