/**
 * The platform self-upgrade lane: the steps of `platform.preflight`, `platform.upgrade` and
 * `platform.smoke`, the phases an upgrade moves through (what a resumed attempt continues from),
 * the stages during which app operations are held, and the records the lane keeps.
 */

/** A recorded step of a platform lane operation (like a deployment step). */
export const UpgradeStep = {
  /** Copy (or build) the candidate release into `releases/<id>/` and fingerprint it. */
  stage: 'stage',
  /** The release policy (ADR 0142): the verify hook and the signature check, decided by `SVC_RELEASE_SIGNATURE_POLICY`; skipped when nothing is configured under `none`. */
  verify: 'verify',
  /** Boot the candidate API on an alternate port, on a throwaway data copy, and check it. */
  candidate: 'candidate',
  /** The drain gate (`SVC_DRAIN_MODE`). */
  drain: 'drain',
  /** Point the `current` link at the candidate. */
  promote: 'promote',
  /** Restart only the API process, from `current`. */
  restart: 'restart',
  /** Health and version of the restarted API. */
  postflight: 'postflight',
  /** Swap `current` back, restart, and check the previous release again. */
  rollback: 'rollback',
} as const;
export type UpgradeStep = (typeof UpgradeStep)[keyof typeof UpgradeStep];

/** Status of one recorded step. */
export type UpgradeStepStatus = 'running' | 'succeeded' | 'failed' | 'skipped';

/**
 * Operation stages during which the API's worker claims no app operation: from the drain gate
 * until the lane has finished with the API process (queued app operations then run on the API
 * that is up, once).
 */
export const HOLD_STAGES: readonly UpgradeStep[] = [
  UpgradeStep.drain,
  UpgradeStep.promote,
  UpgradeStep.restart,
  UpgradeStep.postflight,
  UpgradeStep.rollback,
];

/** Where an upgrade stands; a resumed attempt continues from here. */
export const UpgradePhase = {
  /** Nothing changed yet: a resumed attempt starts over. */
  preparing: 'preparing',
  /** `current` points at the candidate (or is being switched to it): a resumed attempt restarts the API and checks it. */
  promoted: 'promoted',
  /** Postflight failed or the lane was told to give up: a resumed attempt finishes the rollback. */
  rollingBack: 'rolling_back',
  succeeded: 'succeeded',
  failed: 'failed',
  rolledBack: 'rolled_back',
} as const;
export type UpgradePhase = (typeof UpgradePhase)[keyof typeof UpgradePhase];

/** How the drain gate treats active app operations. */
export type UpgradeDrainMode = 'fail' | 'wait' | 'force';

/** Whether the signature policy accepted a release. */
export type ReleaseVerification = 'off' | 'accepted' | 'rejected';

/** A platform release on disk: its display label is never its identity (commit and SHA-256 are). */
export interface PlatformReleaseBuild {
  /** The folder name under `releases/`. */
  readonly id: string;
  readonly label: string;
  readonly version: string;
  readonly commit: string | null;
  /** SHA-256 over the release's files (relative path and content), hex. */
  readonly sha256: string;
  /** Where it came from (a built checkout folder, a git ref, `artifact:<path> (sha256 <archive sum>)`). */
  readonly source: string;
  readonly verification: ReleaseVerification;
  readonly verificationMessage: string | null;
  readonly createdAt: string;
  /** Last time `current` was pointed at it (promotion, rollback target or first install). */
  readonly promotedAt: string | null;
  /** When its folder was removed from disk (kept as history); null while it is on disk. */
  readonly prunedAt: string | null;
}

/** One upgrade (the `platform.upgrade` operation's own record). */
export interface PlatformUpgrade {
  readonly operationId: string;
  readonly phase: UpgradePhase;
  /** The release `current` pointed at before promotion; the rollback target. */
  readonly fromRelease: string | null;
  readonly toRelease: string | null;
  readonly drainMode: UpgradeDrainMode;
  readonly message: string | null;
  readonly updatedAt: string;
}

/** One recorded step of a lane operation. */
export interface PlatformLaneStep {
  readonly operationId: string;
  readonly attempt: number;
  readonly seq: number;
  readonly step: UpgradeStep;
  readonly status: UpgradeStepStatus;
  readonly message: string | null;
  readonly startedAt: string;
  readonly endedAt: string | null;
}

/** What a resumed `platform.upgrade` attempt does first, by the phase the previous attempt reached. */
export function resumePlan(phase: UpgradePhase | undefined): 'start' | 'restart-and-check' | 'rollback' | 'done' {
  switch (phase) {
    case undefined:
    case UpgradePhase.preparing:
      return 'start';
    case UpgradePhase.promoted:
      return 'restart-and-check';
    case UpgradePhase.rollingBack:
      return 'rollback';
    default:
      return 'done';
  }
}

/** Platform kinds: claimed by the host agent only. */
export function isPlatformKind(kind: string): boolean {
  return kind.startsWith('platform.');
}

/** A release folder name: version, short commit and the first 12 hex digits of the fingerprint. */
export function releaseId(version: string, commit: string | null, sha256: string): string {
  const safe = version.replace(/[^A-Za-z0-9._-]/g, '-');
  return `${safe}-${commit ? commit.slice(0, 12) : 'nocommit'}-${sha256.slice(0, 12)}`;
}
