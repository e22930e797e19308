/**
 * Git CLI wrapper: runs `git` with execFile (never a shell) for the release builder: mirror a
 * repository, resolve a ref to a full commit, export a commit's tree.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ValidationError } from '../../domain/errors.js';
import { GitError } from '../errors.js';

/** Options of one git invocation. */
export interface GitRunOptions {
  readonly cwd?: string;
  /** @default 120000 */
  readonly timeoutMs?: number;
}

/** Runs `git <args>` and resolves with its stdout; rejects with `GitError` naming the command. */
export function runGit(args: readonly string[], options: GitRunOptions = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      'git',
      [...args],
      {
        cwd: options.cwd,
        timeout: options.timeoutMs ?? 120_000,
        maxBuffer: 64 * 1024 * 1024,
        env: { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_ASKPASS: 'echo', LC_ALL: 'C' },
      },
      (error, stdout, stderr) => {
        if (error) {
          const shown = args.filter((a) => !/^[a-z]+:\/\/[^/]*@/.test(a));
          reject(
            new GitError(
              `git ${shown.join(' ')} failed: ${stderr.trim() || error.message}`,
              { args: shown, stderr: stderr.trim() },
              error,
            ),
          );
          return;
        }
        resolve(stdout);
      },
    );
  });
}

/** Rejects repository URLs git could read as an option. */
export function assertRepositoryUrl(url: string): void {
  if (url.length === 0 || url.startsWith('-'))
    throw new ValidationError(`repo.url: "${url}" is not a repository URL or path`);
}

/** Creates or refreshes a bare mirror of `url` at `mirrorDir` (all branches and tags). */
export async function mirrorRepository(url: string, mirrorDir: string): Promise<void> {
  assertRepositoryUrl(url);
  if (fs.existsSync(path.join(mirrorDir, 'HEAD'))) {
    await runGit(['--git-dir', mirrorDir, 'remote', 'set-url', 'origin', url]);
    await runGit(['--git-dir', mirrorDir, 'fetch', '--prune', '--tags', 'origin']);
    return;
  }
  fs.mkdirSync(path.dirname(mirrorDir), { recursive: true });
  const tmp = `${mirrorDir}.tmp-${process.pid}-${Date.now()}`;
  try {
    await runGit(['clone', '--mirror', '--quiet', '--', url, tmp]);
    fs.renameSync(tmp, mirrorDir);
  } catch (error) {
    fs.rmSync(tmp, { recursive: true, force: true });
    if (fs.existsSync(path.join(mirrorDir, 'HEAD'))) return;
    throw error;
  }
}

/** Resolves a branch, tag or (abbreviated) sha to the full commit sha. */
export async function resolveCommit(gitDir: string, ref: string): Promise<string> {
  if (ref.startsWith('-')) throw new ValidationError(`ref: "${ref}" is not a git ref`);
  try {
    return (
      await runGit(['--git-dir', gitDir, 'rev-parse', '--verify', '--quiet', '--end-of-options', `${ref}^{commit}`])
    ).trim();
  } catch (error) {
    throw new ValidationError(`ref: "${ref}" does not name a commit in the repository`, {
      code: 'unknown_ref',
      cause: error,
    });
  }
}

/** Writes the tree of `commit` into `targetDir` (created), without any `.git` metadata. */
export async function exportCommit(gitDir: string, commit: string, targetDir: string): Promise<void> {
  fs.mkdirSync(targetDir, { recursive: true });
  const tarball = `${targetDir}.tar`;
  try {
    await runGit(['--git-dir', gitDir, 'archive', '--format=tar', '-o', tarball, commit]);
    await new Promise<void>((resolve, reject) => {
      execFile('tar', ['-x', '-f', tarball, '-C', targetDir], (error, _stdout, stderr) =>
        error
          ? reject(
              new GitError(`tar -x of commit ${commit} failed: ${stderr.trim() || error.message}`, { commit }, error),
            )
          : resolve(),
      );
    });
  } finally {
    fs.rmSync(tarball, { force: true });
  }
}
