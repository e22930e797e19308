/**
 * Where a commit of a git checkout stands against its release tags, as `git describe` counts it:
 * the last `v<maj>.<min>.<patch>` tag reachable from the commit and the commits since it (ADR 0196).
 */
import { execFileSync } from 'node:child_process';
import type { ReleasePosition } from '../../domain/platform/index.js';

function git(dir: string, args: readonly string[]): string | undefined {
  try {
    return execFileSync('git', [...args], { cwd: dir, stdio: ['ignore', 'pipe', 'ignore'], timeout: 5000 })
      .toString()
      .trim();
  } catch {
    return undefined;
  }
}

/**
 * The release position of `rev` (HEAD by default) in the repository at `dir`: the last release tag
 * (annotated or not, pre-releases such as `v1.2.3-rc.1` skipped) and the distance to it; without a
 * reachable release tag, `packageVersion` and the commits since the root. Undefined when `dir` is
 * not a git repository or `rev` is not a commit of it.
 */
export function releasePosition(dir: string, packageVersion: string, rev = 'HEAD'): ReleasePosition | undefined {
  const described = git(dir, [
    'describe',
    '--tags',
    '--long',
    '--abbrev=40',
    '--match',
    'v[0-9]*.[0-9]*.[0-9]*',
    '--exclude',
    'v*-*',
    `${rev}^{commit}`,
  ]);
  const match = described === undefined ? null : /^v(\d+\.\d+\.\d+)-(\d+)-g[0-9a-f]+$/.exec(described);
  if (match !== null) return { version: match[1]!, distance: Number(match[2]), tagged: true };
  const count = git(dir, ['rev-list', '--count', `${rev}^{commit}`]);
  if (count === undefined || !/^\d+$/.test(count)) return undefined;
  return { version: packageVersion, distance: Number(count), tagged: false };
}
