/**
 * The release an app runs: an immutable build at a commit (built by platform/release-builder, set by
 * the deploy pipeline, stored with the app record, read by the app controller).
 */

import type { CanonicalAppSpec } from '../spec/index.js';

/** Where one region's release lives when it differs from the app's. */
export interface RegionRelease {
  readonly commit: string;
  readonly dir: string;
}

/** The release an app runs. */
export interface AppRelease {
  readonly commit: string;
  readonly dir: string;
  /** The deployment that set this release (deploy pipeline). */
  readonly deploymentId?: string;
  /** Roll directly, without canaries (rollbacks: the old version must not wait for promotion). */
  readonly direct?: boolean;
  /** Per-region releases overriding `commit`/`dir` in those regions (a rollback of selected regions). */
  readonly regions?: Readonly<Record<string, RegionRelease>>;
  /**
   * The spec a rollback restored: the one the release it returned to was deployed with. It runs
   * instead of the committed spec while the committed spec is the one of generation `specOver`
   * (the spec in force when the rollback ran); a new commit of the spec, or the next deploy, ends it.
   */
  readonly spec?: CanonicalAppSpec;
  /** Generation of the committed spec that {@link AppRelease.spec} overrides. */
  readonly specOver?: string;
}

/**
 * The spec an app runs: the spec a rollback restored while the committed spec is still the one it
 * overrode, else the committed spec (ADR 0048).
 */
export function runningSpec(
  committed: CanonicalAppSpec | null,
  generation: string | null,
  release: AppRelease | null,
): CanonicalAppSpec | null {
  if (release?.spec !== undefined && release.specOver !== undefined && release.specOver === generation)
    return release.spec;
  return committed;
}
