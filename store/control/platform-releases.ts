/**
 * Platform release records in control.db: the build recorded at each start (append-only), grouped
 * by version and commit for the history, and the platform lane operations (`platform.*`).
 */
import type { Operation } from '../../domain/operations/index.js';
import type { PlatformReleaseGroup, PlatformStart } from '../../domain/operator/index.js';
import type { Db } from '../database.js';
import { getOperation } from './operations/operations.js';

interface RawStart {
  version: string;
  label: string;
  commit_sha: string | null;
  node: string;
  profile: string;
  started_at: string;
}

const fromRaw = (r: RawStart): PlatformStart => ({
  version: r.version,
  label: r.label,
  commit: r.commit_sha,
  node: r.node,
  profile: r.profile,
  startedAt: r.started_at,
});

/** Appends the record of one start. */
export function recordPlatformStart(db: Db, start: PlatformStart): void {
  db.prepare(
    'INSERT INTO platform_releases (version, label, commit_sha, node, profile, started_at) VALUES (?, ?, ?, ?, ?, ?)',
  ).run(start.version, start.label, start.commit, start.node, start.profile, start.startedAt);
}

/** The newest starts, newest first. */
export function recentPlatformStarts(db: Db, limit: number): PlatformStart[] {
  return (db.prepare('SELECT * FROM platform_releases ORDER BY seq DESC LIMIT ?').all(limit) as RawStart[]).map(
    fromRaw,
  );
}

/** Each build (version and commit) with its first and last start and how many starts ran it, most recently run first. */
export function platformReleaseGroups(db: Db, limit: number): PlatformReleaseGroup[] {
  const rows = db
    .prepare(
      `SELECT version, label, commit_sha, MIN(started_at) AS first_seen, MAX(started_at) AS last_seen, COUNT(*) AS starts, MAX(seq) AS last_seq
       FROM platform_releases GROUP BY version, commit_sha ORDER BY last_seq DESC LIMIT ?`,
    )
    .all(limit) as {
    version: string;
    label: string;
    commit_sha: string | null;
    first_seen: string;
    last_seen: string;
    starts: number;
  }[];
  return rows.map((r) => ({
    version: r.version,
    label: r.label,
    commit: r.commit_sha,
    firstSeenAt: r.first_seen,
    lastSeenAt: r.last_seen,
    starts: r.starts,
  }));
}

/** The newest platform lane operations (`platform.*`), newest first. */
export function platformOperations(db: Db, limit: number): Operation[] {
  const ids = db
    .prepare("SELECT id FROM operations WHERE kind LIKE 'platform.%' ORDER BY rowid DESC LIMIT ?")
    .all(limit) as { id: string }[];
  return ids.map((r) => getOperation(db, r.id)).filter((op): op is Operation => op !== undefined);
}
