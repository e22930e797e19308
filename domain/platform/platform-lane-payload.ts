/**
 * The payload of platform lane operations, read back from the stored JSON with checks.
 */
import type { UpgradeDrainMode } from './platform-upgrade.js';

/** What `platform.preflight` and `platform.upgrade` carry (`platform.smoke` carries nothing). */
export interface PlatformLanePayload {
  /** A release artifact (`.tar.gz`/`.tgz` or its unpacked folder), a built checkout folder or `git:<ref>`. */
  readonly source?: string;
  /** A display label that replaces the one the source gives. */
  readonly label?: string;
  /** Overrides SVC_DRAIN_MODE for this upgrade. */
  readonly drainMode?: UpgradeDrainMode;
}

const DRAIN_MODES: readonly string[] = ['fail', 'wait', 'force'];

/** The payload's present and well-typed fields. */
export function readPlatformLanePayload(payload: Readonly<Record<string, unknown>>): PlatformLanePayload {
  const source = payload['source'];
  const label = payload['label'];
  const drainMode = payload['drainMode'];
  return {
    ...(typeof source === 'string' && source !== '' ? { source } : {}),
    ...(typeof label === 'string' && label !== '' ? { label } : {}),
    ...(typeof drainMode === 'string' && DRAIN_MODES.includes(drainMode)
      ? { drainMode: drainMode as UpgradeDrainMode }
      : {}),
  };
}
