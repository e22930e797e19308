/**
 * The apps repository in a backup: a git bundle of every ref, verified with `git bundle verify`,
 * and cloned back into a working repository on restore.
 */
import fs from 'node:fs';
import path from 'node:path';
import { runGit } from '../git/git.js';

/** Writes a bundle of every ref of the repository at `repo` to `file`; false when it has no commit to bundle. */
export async function bundleRepository(repo: string, file: string): Promise<boolean> {
  if (!fs.existsSync(path.join(repo, '.git'))) return false;
  try {
    await runGit(['rev-parse', '--verify', 'HEAD'], { cwd: repo });
  } catch {
    return false;
  }
  await runGit(['bundle', 'create', file, '--all'], { cwd: repo, timeoutMs: 600_000 });
  return true;
}

/** Throws when the bundle at `file` is not complete and valid. */
export async function verifyBundle(file: string): Promise<void> {
  const scratch = fs.mkdtempSync(path.join(path.dirname(file), '.bundle-verify-'));
  try {
    // `git bundle verify` needs a repository to check prerequisites against; an empty one suffices
    // for a bundle of every ref (it has none).
    await runGit(['init', '--quiet', scratch]);
    await runGit(['bundle', 'verify', '--quiet', path.resolve(file)], { cwd: scratch });
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

/** Clones the bundle at `file` into `repo` (absent or empty) with the bundle's HEAD checked out. */
export async function cloneBundle(file: string, repo: string): Promise<void> {
  await runGit(['clone', '--quiet', path.resolve(file), repo], { timeoutMs: 600_000 });
  await runGit(['remote', 'remove', 'origin'], { cwd: repo });
}
