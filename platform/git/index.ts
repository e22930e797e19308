/**
 * Git: the git CLI wrapper (execFile only).
 */
export { GitError, assertRepositoryUrl, exportCommit, mirrorRepository, resolveCommit, runGit } from './git.js';
export type { GitRunOptions } from './git.js';
