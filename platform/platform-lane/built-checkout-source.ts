/**
 * A release source that copies a built checkout (or another release folder): `dist/`, `bin/`,
 * `package.json` and `schemas/`, with `node_modules` a symbolic link to the checkout's own
 * (shared, read-only). The host-install artifact will be another `ReleaseSource`.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { ReleaseSource, StagedRelease } from '../../domain/platform/index.js';
import { platformLabel } from '../../domain/platform/index.js';
import { releasePosition } from '../git/release-position.js';
import { readReleaseManifest } from './release-folders.js';

/** What a runnable tree holds besides `node_modules`. */
const COPIED = ['dist', 'bin', 'package.json', 'schemas'];

/**
 * The default display label of a build: `v<maj>.<min>.<patch>-platform[-<distance>-g<short commit>]`
 * counted from the last release tag of `repo` when the build's history is at hand, else
 * `v<version>-platform[-g<short commit>]`.
 */
export function defaultReleaseLabel(version: string, commit: string | null, repo?: string): string {
  const position = repo !== undefined && commit !== null ? releasePosition(repo, version, commit) : undefined;
  return platformLabel(version, commit, position);
}

/** A built checkout (or release folder) at `dir`. */
export class BuiltCheckoutSource implements ReleaseSource {
  readonly description: string;
  readonly #dir: string;

  constructor(dir: string) {
    this.#dir = path.resolve(dir);
    this.description = this.#dir;
  }

  async stage(into: string, signal: AbortSignal): Promise<StagedRelease> {
    const dir = this.#dir;
    if (!fs.existsSync(path.join(dir, 'dist', 'cli', 'main.js'))) {
      throw new Error(`${dir} is not a built checkout: dist/cli/main.js is missing (run npm run build there)`);
    }
    if (!fs.existsSync(path.join(dir, 'node_modules'))) throw new Error(`${dir} has no node_modules to share`);
    const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version?: string };
    const version = typeof pkg.version === 'string' ? pkg.version : '0.0.0';
    for (const name of COPIED) {
      signal.throwIfAborted();
      const from = path.join(dir, name);
      if (!fs.existsSync(from)) continue;
      await fs.promises.cp(from, path.join(into, name), {
        recursive: true,
        dereference: false,
        verbatimSymlinks: true,
      });
    }
    fs.symlinkSync(fs.realpathSync(path.join(dir, 'node_modules')), path.join(into, 'node_modules'));
    const manifest = readReleaseManifest(dir);
    const commit = manifest?.commit ?? gitCommit(dir);
    // A checkout is measured against its release tags; a release folder has no history at hand.
    const label = defaultReleaseLabel(version, commit, manifest === undefined ? dir : undefined);
    return { version, commit, label };
  }
}

/** The checkout's HEAD commit, or null when it is not a git checkout. */
export function gitCommit(dir: string): string | null {
  if (!fs.existsSync(path.join(dir, '.git'))) return null;
  try {
    return (
      execFileSync('git', ['rev-parse', 'HEAD'], { cwd: dir, stdio: ['ignore', 'pipe', 'ignore'], timeout: 5000 })
        .toString()
        .trim() || null
    );
  } catch {
    return null;
  }
}
