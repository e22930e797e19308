/**
 * Release sources: where a platform release comes from. A source fills an empty folder with a
 * runnable tree (`bin/svc.js`, `dist/`, `package.json`, `schemas/`, `node_modules`); the release
 * folders fingerprint and name it. Today a built checkout or a git ref; the host-install
 * artifact (a tar.gz) is another implementation of the same port.
 */

/** What a source tells about the tree it staged. */
export interface StagedRelease {
  readonly version: string;
  readonly commit: string | null;
  /** A display label; the release's identity is commit and SHA-256. */
  readonly label: string;
}

/** The port. */
export interface ReleaseSource {
  /** How an operator named it (a folder, `git:<ref>`). */
  readonly description: string;
  /** Fills `into` (an empty folder) with the release tree. */
  stage(into: string, signal: AbortSignal): Promise<StagedRelease>;
}
