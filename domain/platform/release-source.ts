/**
 * Release sources: where a platform release comes from. A source fills an empty folder with a
 * runnable tree: a built checkout's (`bin/svc.js`, `dist/`, `package.json`, `schemas/`,
 * `node_modules`) or the release artifact's (the `svc` executable, `svc-release.json`, `lib/`,
 * `share/`); the release folders fingerprint and name it. Implementations: a built checkout, a
 * git ref, the release artifact (a tar.gz or its unpacked folder).
 */
import type { SignatureCheck } from './release-policy.js';

/** What a source tells about the tree it staged. */
export interface StagedRelease {
  readonly version: string;
  readonly commit: string | null;
  /** A display label; the release's identity is commit and SHA-256. */
  readonly label: string;
  /** The detached signature check of a release artifact, when the source was given a public key (ADR 0142). */
  readonly signature?: SignatureCheck;
}

/** The port. */
export interface ReleaseSource {
  /** How an operator named it (a folder, `git:<ref>`, `artifact:<archive> (sha256 …)`); read after `stage`. */
  readonly description: string;
  /** Fills `into` (an empty folder) with the release tree. */
  stage(into: string, signal: AbortSignal): Promise<StagedRelease>;
}
