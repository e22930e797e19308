/**
 * Apps as the controllers and the store share them: the release an app runs.
 */
export type { AppRelease, RegionRelease } from './app-release.js';
export { runningSpec } from './app-release.js';
