/**
 * Git: the git CLI wrapper (execFile only).
 */
export { GitError } from '../errors.js';
export { assertRepositoryUrl, exportCommit, hasFolder, mirrorRepository, resolveCommit, runGit } from './git.js';
export type { GitRunOptions } from './git.js';
export { releasePosition } from './release-position.js';
