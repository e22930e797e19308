/**
 * Release manifest: `release.json`, the immutable description of an app at one commit that the
 * local driver runs (or the image a container driver runs).
 */
import fs from 'node:fs';
import path from 'node:path';
import { ValidationError } from '../../domain/errors.js';

/** Who produced the release. */
export const ReleaseBuilderKind = {
  /** Dockerfile honoured on the host; the release directory is what runs. */
  native: 'native',
  docker: 'docker',
  podman: 'podman',
  /** `build.image`: an externally published image, recorded as is. */
  externalImage: 'external-image',
} as const;
export type ReleaseBuilderKind = (typeof ReleaseBuilderKind)[keyof typeof ReleaseBuilderKind];

/** Contents of `release.json`. */
export interface ReleaseManifest {
  readonly app: string;
  /** Full 40-hex commit sha. */
  readonly commit: string;
  /** ISO 8601 UTC. */
  readonly createdAt: string;
  /** Working directory relative to the release directory (e.g. `app` or `app/server`); null for image releases. */
  readonly workdir: string | null;
  /** Runtime environment from the Dockerfile's ENV. */
  readonly env: Readonly<Record<string, string>>;
  /** The argv the release starts with (ENTRYPOINT + CMD resolved), or null when the Dockerfile sets neither. */
  readonly command: readonly string[] | null;
  readonly entrypoint: readonly string[] | null;
  /** Image reference for container and external-image releases; null for native releases. */
  readonly image: string | null;
  readonly builder: ReleaseBuilderKind;
  /** Dockerfile path relative to the repository root, when one was used. */
  readonly dockerfile: string | null;
  readonly exposedPorts: readonly string[];
  /** The Dockerfile's `USER`; absent or null without one (and in releases built before it was recorded). */
  readonly user?: string | null;
  /** The image's `org.opencontainers.image.revision` label, for image releases that have one. */
  readonly revision?: string | null;
  /** What the builder ignored or approximated, for operators. */
  readonly notes: readonly string[];
}

/** File name of the manifest inside a release directory. */
export const RELEASE_MANIFEST = 'release.json';

/** Folder inside a release directory holding the repository tree at the commit. */
export const RELEASE_APP_DIR = 'app';

/** Reads a release's manifest, or undefined when the directory holds none. */
export function readReleaseManifest(releaseDir: string): ReleaseManifest | undefined {
  try {
    return JSON.parse(fs.readFileSync(path.join(releaseDir, RELEASE_MANIFEST), 'utf8')) as ReleaseManifest;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** What a host driver needs to start a native release. */
export interface ReleaseLaunch {
  /** Absolute working directory. */
  readonly workdir: string;
  readonly command: readonly string[];
  readonly env: Readonly<Record<string, string>>;
}

/**
 * The launch of a native release, optionally with a process command override (the spec's
 * `command`, run with `/bin/sh -c`); throws for image releases, which the local driver cannot run.
 */
export function releaseLaunch(releaseDir: string, manifest: ReleaseManifest, commandOverride?: string): ReleaseLaunch {
  if (manifest.builder !== 'native' || manifest.workdir === null) {
    throw new ValidationError(
      `release ${manifest.app}@${manifest.commit}: built as image ${String(manifest.image)} by ${manifest.builder}; this host runs no containers (see \`svc doctor\`), so the image cannot run here`,
      { code: 'image_not_supported' },
    );
  }
  const command = commandOverride !== undefined ? ['/bin/sh', '-c', commandOverride] : manifest.command;
  if (!command || command.length === 0) {
    throw new ValidationError(
      `release ${manifest.app}@${manifest.commit}: the Dockerfile has no CMD or ENTRYPOINT and the process sets no command`,
    );
  }
  return { workdir: path.join(releaseDir, manifest.workdir), command, env: manifest.env };
}
