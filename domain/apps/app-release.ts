/**
 * The release an app runs: an immutable build at a commit (built by platform/release-builder, set by
 * the deploy pipeline, stored with the app record, read by the app controller).
 */

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
}
