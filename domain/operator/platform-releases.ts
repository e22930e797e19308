/**
 * Platform release history: the platform builds this data folder has run (one record per start,
 * grouped by version and commit) and the platform lane operations (`platform.*`).
 */
import type { Operation } from '../operations/index.js';
import {
  releaseTag,
  type PlatformLaneStep,
  type PlatformReleaseBuild,
  type PlatformUpgrade,
} from '../platform/index.js';
import { shortText } from './secret-safety.js';

/** The build recorded at one start. */
export interface PlatformStart {
  readonly version: string;
  readonly label: string;
  readonly commit: string | null;
  readonly node: string;
  readonly profile: string;
  readonly startedAt: string;
}

/** One build with the first and last start that ran it (already grouped by the store). */
export interface PlatformReleaseGroup {
  readonly version: string;
  readonly label: string;
  readonly commit: string | null;
  readonly firstSeenAt: string;
  readonly lastSeenAt: string;
  readonly starts: number;
}

/** The history view. */
export interface PlatformReleaseHistory {
  /** `identity` and `tag` are the same immutable tag `platform-<full sha>` (null when the commit is unknown). */
  readonly current: (PlatformStart & { readonly identity: string | null; readonly tag: string | null }) | null;
  readonly releases: readonly (PlatformReleaseGroup & {
    readonly identity: string | null;
    readonly tag: string | null;
    readonly current: boolean;
  })[];
  readonly recentStarts: readonly PlatformStart[];
  /** Releases on disk (`releases/<id>/`): label apart from identity (tag `platform-<commit>`, SHA-256) and the signature policy's verdict. */
  readonly builds: readonly (PlatformReleaseBuild & { readonly tag: string | null; readonly current: boolean })[];
  /** The release folder the running API runs from, or null for a checkout. */
  readonly runningRelease: string | null;
  readonly operations: readonly {
    readonly id: string;
    readonly kind: string;
    readonly status: string;
    readonly ref: string | null;
    readonly attempts: number;
    readonly lastError: string | null;
    readonly createdAt: string;
    readonly finishedAt: string | null;
    /** Upgrades: where the lane stands (phase, from and to releases). */
    readonly upgrade: Pick<PlatformUpgrade, 'phase' | 'fromRelease' | 'toRelease' | 'drainMode'> | null;
    readonly steps: readonly Pick<
      PlatformLaneStep,
      'attempt' | 'step' | 'status' | 'message' | 'startedAt' | 'endedAt'
    >[];
  }[];
}

/** The immutable identity of a build: the tag `platform-<full sha>`; the label is display only. */
export function platformIdentity(commit: string | null): string | null {
  return releaseTag(commit);
}

/** Shapes the history; `current` is the running build's start record. */
export function platformReleaseHistory(input: {
  readonly current: PlatformStart | null;
  readonly groups: readonly PlatformReleaseGroup[];
  readonly recentStarts: readonly PlatformStart[];
  readonly operations: readonly Operation[];
  readonly builds?: readonly PlatformReleaseBuild[];
  readonly runningRelease?: string | null;
  readonly lane?: (operationId: string) => {
    readonly upgrade: PlatformUpgrade | null;
    readonly steps: readonly PlatformLaneStep[];
  };
}): PlatformReleaseHistory {
  const current = input.current;
  const isCurrent = (g: PlatformReleaseGroup) =>
    current !== null && g.version === current.version && g.commit === current.commit;
  return {
    current: current
      ? { ...current, identity: platformIdentity(current.commit), tag: releaseTag(current.commit) }
      : null,
    releases: input.groups.map((g) => ({
      ...g,
      identity: platformIdentity(g.commit),
      tag: releaseTag(g.commit),
      current: isCurrent(g),
    })),
    recentStarts: input.recentStarts,
    builds: (input.builds ?? []).map((b) => ({
      ...b,
      tag: releaseTag(b.commit),
      verificationMessage: shortText(b.verificationMessage),
      current: b.id === (input.runningRelease ?? null),
    })),
    runningRelease: input.runningRelease ?? null,
    operations: input.operations.map((op) => ({
      id: op.id,
      kind: op.kind,
      status: op.status,
      ref: op.ref,
      attempts: op.attempts,
      lastError: shortText(op.lastError),
      createdAt: op.createdAt,
      finishedAt: op.finishedAt,
      ...laneView(input.lane?.(op.id)),
    })),
  };
}

function laneView(
  lane: { readonly upgrade: PlatformUpgrade | null; readonly steps: readonly PlatformLaneStep[] } | undefined,
): Pick<PlatformReleaseHistory['operations'][number], 'upgrade' | 'steps'> {
  const upgrade = lane?.upgrade ?? null;
  return {
    upgrade:
      upgrade === null
        ? null
        : {
            phase: upgrade.phase,
            fromRelease: upgrade.fromRelease,
            toRelease: upgrade.toRelease,
            drainMode: upgrade.drainMode,
          },
    steps: (lane?.steps ?? []).map((s) => ({
      attempt: s.attempt,
      step: s.step,
      status: s.status,
      message: shortText(s.message),
      startedAt: s.startedAt,
      endedAt: s.endedAt,
    })),
  };
}
