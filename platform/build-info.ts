/**
 * What build of the platform is running: package version, display label and, when the package is a
 * git checkout, the commit.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BuildInfo } from '../domain/build-info.js';
import { platformLabel } from '../domain/platform/platform-label.js';
import { releasePosition } from './git/release-position.js';

export type { BuildInfo };

/**
 * The release artifact's identity, set by the packager (esbuild `define`, scripts/package/): the
 * single executable carries no package.json and no .git to read it from. Undefined from a checkout.
 */
declare const SVC_RELEASE:
  | { readonly name: string; readonly version: string; readonly commit: string | null; readonly label?: string }
  | undefined;

/**
 * The folder of the running release artifact (the `svc` executable's folder, ADR 0140), or undefined
 * when running from a checkout.
 */
export function releaseFolder(): string | undefined {
  return typeof SVC_RELEASE === 'undefined' ? undefined : path.dirname(process.execPath);
}

/** The package root (the folder holding package.json), found from this file upward. */
export function packageRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('package.json not found above ' + fileURLToPath(import.meta.url));
    dir = parent;
  }
}

let cached: BuildInfo | undefined;

/** Reads package.json and asks git for the commit once per process. */
export function buildInfo(): BuildInfo {
  if (cached) return cached;
  if (typeof SVC_RELEASE !== 'undefined') {
    // Staged by the platform lane (ADR 0087), the artifact's folder holds release.json beside `svc`.
    // The packager measured the label against the checkout's release tags (the artifact has no .git).
    cached = describe(
      SVC_RELEASE.name,
      SVC_RELEASE.version,
      SVC_RELEASE.commit,
      readRelease(path.dirname(process.execPath)),
      SVC_RELEASE.label,
    );
    return cached;
  }
  const root = packageRoot();
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { name: string; version: string };
  let commit: string | null = process.env.SVC_COMMIT ?? null;
  if (commit === null && !fs.existsSync(path.join(root, 'release.json')) && fs.existsSync(path.join(root, '.git'))) {
    try {
      commit =
        execFileSync('git', ['rev-parse', 'HEAD'], { cwd: root, stdio: ['ignore', 'pipe', 'ignore'], timeout: 2000 })
          .toString()
          .trim() || null;
    } catch {
      commit = null;
    }
  }
  // A platform release folder (ADR 0085) names its identity and display label in release.json.
  const release = readRelease(root);
  if (release?.commit !== undefined && process.env.SVC_COMMIT === undefined) commit = release.commit;
  // A checkout's label counts the commits since its last release tag, as git describe does.
  const position =
    release === undefined && commit !== null && fs.existsSync(path.join(root, '.git'))
      ? releasePosition(root, pkg.version, commit)
      : undefined;
  cached = describe(pkg.name, pkg.version, commit, release, platformLabel(pkg.version, commit, position));
  return cached;
}

function describe(
  name: string,
  version: string,
  commit: string | null,
  release?: { id: string; label: string },
  measured?: string,
): BuildInfo {
  const label = release?.label ?? measured ?? platformLabel(version, commit);
  return { name, version, label, commit, node: process.version, release: release?.id ?? null };
}

function readRelease(root: string): { id: string; label: string; commit: string | null } | undefined {
  try {
    const manifest = JSON.parse(fs.readFileSync(path.join(root, 'release.json'), 'utf8')) as {
      id?: unknown;
      label?: unknown;
      commit?: unknown;
    };
    if (typeof manifest.id !== 'string' || typeof manifest.label !== 'string') return undefined;
    return {
      id: manifest.id,
      label: manifest.label,
      commit: typeof manifest.commit === 'string' ? manifest.commit : null,
    };
  } catch {
    return undefined;
  }
}
