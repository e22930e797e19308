/**
 * A real git repository created in a test's temp dir, committed with the git CLI.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const IDENTITY = [
  '-c',
  'user.name=Test',
  '-c',
  'user.email=test@example.invalid',
  '-c',
  'commit.gpgsign=false',
  '-c',
  'init.defaultBranch=main',
];

/** Runs git in `dir` and returns trimmed stdout. */
export function git(dir: string, ...args: string[]): string {
  return execFileSync('git', [...IDENTITY, ...args], { cwd: dir, encoding: 'utf8' }).trim();
}

/** Creates a repository at `dir` holding `files`, commits them and returns the commit sha. */
export function createRepo(dir: string, files: Record<string, string>): string {
  fs.mkdirSync(dir, { recursive: true });
  git(dir, 'init', '--quiet');
  return commitFiles(dir, files, 'initial');
}

/** Writes `files` into the repository, commits them and returns the new sha. */
export function commitFiles(dir: string, files: Record<string, string>, message: string): string {
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), text);
  }
  git(dir, 'add', '--all');
  git(dir, 'commit', '--quiet', '-m', message);
  return git(dir, 'rev-parse', 'HEAD');
}
