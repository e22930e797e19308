/**
 * The platform's release artifact: one folder holding the `svc` executable and the parts it loads by
 * path, described by a manifest beside it (ADR 0140). The folder is what `svc install` copies to
 * `<prefix>/releases/<version>/` and what a later self-upgrade promotes through the `current` link.
 */

/** File name of the executable inside a release folder. */
export const RELEASE_EXECUTABLE = 'svc';

/** File name of the manifest inside a release folder. */
export const RELEASE_MANIFEST = 'svc-release.json';

/** What `svc-release.json` says of the release. */
export interface PlatformRelease {
  readonly name: string;
  readonly version: string;
  /** The commit the artifact was built from, when the build had git. */
  readonly commit: string | null;
  /** `linux-x64`, `linux-arm64`: the target of the executable and its native parts. */
  readonly target: string;
  /** The Node.js runtime inside the executable. */
  readonly node: string;
  /** ISO 8601 time of the build. */
  readonly builtAt: string;
}

/** `svc-0.1.0-linux-x64`: the archive's base name and the folder inside it. */
export function releaseName(release: Pick<PlatformRelease, 'version' | 'target'>): string {
  return `svc-${release.version}-${release.target}`;
}

/** Reads a parsed manifest, or says what is wrong with it. */
export function parsePlatformRelease(value: unknown): PlatformRelease | string {
  if (typeof value !== 'object' || value === null) return 'not a JSON object';
  const v = value as Record<string, unknown>;
  for (const field of ['name', 'version', 'target', 'node', 'builtAt'] as const) {
    if (typeof v[field] !== 'string' || v[field] === '') return `${field} is not a non-empty string`;
  }
  if (!/^[0-9A-Za-z.+-]+$/.test(v.version as string))
    return `version ${JSON.stringify(v.version)} is not a plain version`;
  if (v.commit !== null && typeof v.commit !== 'string') return 'commit is neither a string nor null';
  return {
    name: v.name as string,
    version: v.version as string,
    commit: v.commit,
    target: v.target as string,
    node: v.node as string,
    builtAt: v.builtAt as string,
  };
}
