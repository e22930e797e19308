/**
 * Git CLI wrapper: runs `git` with execFile (never a shell) for the release builder: mirror a
 * repository, resolve a ref to a full commit, export a commit's tree.
 */
import { execFile, spawn } from 'node:child_process';
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
    // One process less per refresh (a deploy refreshes twice): the URL is set only when it changed.
    if (originUrl(mirrorDir) !== url) await runGit(['--git-dir', mirrorDir, 'remote', 'set-url', 'origin', url]);
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

/**
 * Writes the tree of `commit` (or of its folder `subdir`) into `targetDir` (created), without any
 * `.git` metadata: `git archive` piped into `tar -x`, no archive file in between.
 */
export async function exportCommit(gitDir: string, commit: string, targetDir: string, subdir?: string): Promise<void> {
  fs.mkdirSync(targetDir, { recursive: true });
  const treeish = subdir === undefined ? commit : `${commit}:${subdir}`;
  const archive = spawn('git', ['--git-dir', gitDir, 'archive', '--format=tar', treeish], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, LC_ALL: 'C' },
  });
  const extract = spawn('tar', ['-x', '-f', '-', '-C', targetDir], { stdio: ['pipe', 'ignore', 'pipe'] });
  archive.stdout.pipe(extract.stdin);
  // A tar that fails early closes its input: git's write error is reported as tar's failure.
  extract.stdin.on('error', () => undefined);
  const ended = (child: typeof archive | typeof extract): Promise<{ code: number | null; stderr: string }> =>
    new Promise((resolve) => {
      let stderr = '';
      child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
      child.once('error', (error) => resolve({ code: -1, stderr: error.message }));
      child.once('close', (code) => resolve({ code, stderr }));
    });
  const [git, tar] = await Promise.all([ended(archive), ended(extract)]);
  if (git.code !== 0)
    throw new GitError(`git archive ${treeish} failed: ${git.stderr.trim()}`, { commit, stderr: git.stderr.trim() });
  if (tar.code !== 0) throw new GitError(`tar -x of commit ${commit} failed: ${tar.stderr.trim()}`, { commit });
}

/** True when `commit` has a folder `subdir`. */
export async function hasFolder(gitDir: string, commit: string, subdir: string): Promise<boolean> {
  try {
    return (await runGit(['--git-dir', gitDir, 'cat-file', '-t', `${commit}:${subdir}`])).trim() === 'tree';
  } catch {
    return false;
  }
}

/** The `url` of the mirror's `origin` as its config file says it (plain values only), or undefined. */
function originUrl(mirrorDir: string): string | undefined {
  let text: string;
  try {
    text = fs.readFileSync(path.join(mirrorDir, 'config'), 'utf8');
  } catch {
    return undefined;
  }
  const section = /^\[remote "origin"\]\s*$([\s\S]*?)(?=^\[|(?![\s\S]))/m.exec(text)?.[1] ?? '';
  const value = /^\s*url\s*=\s*(.*?)\s*$/m.exec(section)?.[1];
  // Quoted or escaped values are git's to read: set the URL again rather than guess.
  return value === undefined || /["\\;#]/.test(value) ? undefined : value;
}
