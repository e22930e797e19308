/**
 * The display label of a platform build: `v<maj>.<min>.<patch>-platform[-<distance>-g<sha>]`, where
 * the version is the last release tag before the commit and the distance the commits since it, as
 * `git describe` counts them. Display only: the identity of a release is its commit and its bytes
 * (ADR 0085).
 */

/** Where a commit stands against the release tags (`v<maj>.<min>.<patch>`) of its history. */
export interface ReleasePosition {
  /** `1.2.3` of the last release tag `v1.2.3`; the package version when no release tag is reachable. */
  readonly version: string;
  /** Commits since that tag; since the root commit (counted with it) when no release tag is reachable. */
  readonly distance: number;
  /** False when no release tag is reachable. */
  readonly tagged: boolean;
}

/** The pattern of a release tag: `v` and three numbers, nothing after (`v1.2.3-rc.1` is not a release). */
export const RELEASE_TAG = /^v(\d+)\.(\d+)\.(\d+)$/;

/**
 * The label of a build of `version` at `commit`: from its release position when known (exactly on
 * a tag, no suffix), else `v<version>-platform[-g<sha>]` (a build whose history is not at hand).
 */
export function platformLabel(version: string, commit: string | null, position?: ReleasePosition): string {
  const short = commit?.slice(0, 7);
  if (position === undefined) return `v${version}-platform${short ? `-g${short}` : ''}`;
  if (position.tagged && position.distance === 0) return `v${position.version}-platform`;
  return `v${position.version}-platform${short ? `-${position.distance}-g${short}` : ''}`;
}
