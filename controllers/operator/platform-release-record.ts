/**
 * Records the running platform build in control.db at each start, for `GET /api/platform/releases`.
 */
import type { PlatformStart } from '../../domain/operator/index.js';
import type { BuildInfo } from '../../platform/build-info.js';
import type { Db } from '../../store/database.js';
import { recordPlatformStart } from '../../store/control/platform-releases.js';

/** Appends this start's build to the platform release history and returns the record. */
export function recordPlatformRelease(db: Db, build: BuildInfo, profile: string, now = new Date()): PlatformStart {
  const start: PlatformStart = {
    version: build.version,
    label: build.label,
    commit: build.commit,
    node: build.node,
    profile,
    startedAt: now.toISOString(),
  };
  recordPlatformStart(db, start);
  return start;
}
