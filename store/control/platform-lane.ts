/**
 * The platform self-upgrade lane's records in control.db: releases on disk, the phase of each
 * upgrade, the recorded steps of lane operations, and a consistent copy of control.db for a
 * candidate API.
 */
import type {
  PlatformLaneStep,
  PlatformReleaseBuild,
  PlatformUpgrade,
  UpgradeDrainMode,
  UpgradePhaseValue,
  UpgradeStep,
  UpgradeStepStatus,
} from '../../domain/platform/index.js';
import fs from 'node:fs';
import path from 'node:path';
import { openDatabase, type Db } from '../database.js';

interface RawBuild {
  id: string;
  label: string;
  version: string;
  commit_sha: string | null;
  sha256: string;
  source: string;
  verification: string;
  verification_message: string | null;
  created_at: string;
  promoted_at: string | null;
  pruned_at: string | null;
}

const buildFromRaw = (r: RawBuild): PlatformReleaseBuild => ({
  id: r.id,
  label: r.label,
  version: r.version,
  commit: r.commit_sha,
  sha256: r.sha256,
  source: r.source,
  verification: r.verification as PlatformReleaseBuild['verification'],
  verificationMessage: r.verification_message,
  createdAt: r.created_at,
  promotedAt: r.promoted_at,
  prunedAt: r.pruned_at,
});

/** Records a staged release (or updates its label, source and verdict when staged again). */
export function recordPlatformBuild(
  db: Db,
  build: Omit<PlatformReleaseBuild, 'createdAt' | 'promotedAt' | 'prunedAt'>,
  now = new Date(),
): PlatformReleaseBuild {
  db.prepare(
    `INSERT INTO platform_builds (id, label, version, commit_sha, sha256, source, verification, verification_message, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (id) DO UPDATE SET label = excluded.label, source = excluded.source, verification = excluded.verification, verification_message = excluded.verification_message, pruned_at = NULL`,
  ).run(
    build.id,
    build.label,
    build.version,
    build.commit,
    build.sha256,
    build.source,
    build.verification,
    build.verificationMessage,
    now.toISOString(),
  );
  return getPlatformBuild(db, build.id)!;
}

/** Marks that `current` was pointed at a release. */
export function markPlatformBuildPromoted(db: Db, id: string, now = new Date()): void {
  db.prepare('UPDATE platform_builds SET promoted_at = ? WHERE id = ?').run(now.toISOString(), id);
}

/** Marks that a release's folder was removed from disk. */
export function markPlatformBuildPruned(db: Db, id: string, now = new Date()): void {
  db.prepare('UPDATE platform_builds SET pruned_at = ? WHERE id = ?').run(now.toISOString(), id);
}

/** Releases whose folders are on disk, most recently used first (last promotion, else staging). */
export function listPlatformBuildsOnDisk(db: Db): PlatformReleaseBuild[] {
  return (
    db
      .prepare(
        'SELECT * FROM platform_builds WHERE pruned_at IS NULL ORDER BY COALESCE(promoted_at, created_at) DESC, rowid DESC',
      )
      .all() as RawBuild[]
  ).map(buildFromRaw);
}

/** One release, or undefined. */
export function getPlatformBuild(db: Db, id: string): PlatformReleaseBuild | undefined {
  const raw = db.prepare('SELECT * FROM platform_builds WHERE id = ?').get(id) as RawBuild | undefined;
  return raw && buildFromRaw(raw);
}

/** Releases, newest first. */
export function listPlatformBuilds(db: Db, limit: number): PlatformReleaseBuild[] {
  return (
    db.prepare('SELECT * FROM platform_builds ORDER BY created_at DESC, rowid DESC LIMIT ?').all(limit) as RawBuild[]
  ).map(buildFromRaw);
}

interface RawUpgrade {
  operation_id: string;
  phase: string;
  from_release: string | null;
  to_release: string | null;
  drain_mode: string;
  message: string | null;
  updated_at: string;
}

const upgradeFromRaw = (r: RawUpgrade): PlatformUpgrade => ({
  operationId: r.operation_id,
  phase: r.phase as UpgradePhaseValue,
  fromRelease: r.from_release,
  toRelease: r.to_release,
  drainMode: r.drain_mode as UpgradeDrainMode,
  message: r.message,
  updatedAt: r.updated_at,
});

/** The upgrade record of an operation, or undefined before its first attempt wrote one. */
export function getPlatformUpgrade(db: Db, operationId: string): PlatformUpgrade | undefined {
  const raw = db.prepare('SELECT * FROM platform_upgrades WHERE operation_id = ?').get(operationId) as
    RawUpgrade | undefined;
  return raw && upgradeFromRaw(raw);
}

/** Writes the upgrade record (created on first write); fields left undefined keep their value. */
export function savePlatformUpgrade(
  db: Db,
  operationId: string,
  change: {
    phase: UpgradePhaseValue;
    drainMode?: UpgradeDrainMode;
    fromRelease?: string | null;
    toRelease?: string | null;
    message?: string | null;
  },
  now = new Date(),
): PlatformUpgrade {
  const at = now.toISOString();
  // IMMEDIATE: it reads, then writes, and control.db has writers in two processes (the API and the host
  // agent); a deferred transaction fails at once with SQLITE_BUSY when the other commits in between.
  db.transaction(() => {
    const existing = getPlatformUpgrade(db, operationId);
    if (!existing) {
      db.prepare(
        'INSERT INTO platform_upgrades (operation_id, phase, from_release, to_release, drain_mode, message, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ).run(
        operationId,
        change.phase,
        change.fromRelease ?? null,
        change.toRelease ?? null,
        change.drainMode ?? 'fail',
        change.message ?? null,
        at,
      );
      return;
    }
    db.prepare(
      'UPDATE platform_upgrades SET phase = ?, from_release = ?, to_release = ?, drain_mode = ?, message = ?, updated_at = ? WHERE operation_id = ?',
    ).run(
      change.phase,
      change.fromRelease === undefined ? existing.fromRelease : change.fromRelease,
      change.toRelease === undefined ? existing.toRelease : change.toRelease,
      change.drainMode ?? existing.drainMode,
      change.message === undefined ? existing.message : change.message,
      at,
      operationId,
    );
  }).immediate();
  return getPlatformUpgrade(db, operationId)!;
}

interface RawStep {
  seq: number;
  operation_id: string;
  attempt: number;
  step: string;
  status: string;
  message: string | null;
  started_at: string;
  ended_at: string | null;
}

const stepFromRaw = (r: RawStep): PlatformLaneStep => ({
  operationId: r.operation_id,
  attempt: r.attempt,
  seq: r.seq,
  step: r.step as UpgradeStep,
  status: r.status as UpgradeStepStatus,
  message: r.message,
  startedAt: r.started_at,
  endedAt: r.ended_at,
});

/** Starts a step (status running, or skipped/succeeded at once when `status` says so); returns its sequence number. */
export function startLaneStep(
  db: Db,
  operationId: string,
  attempt: number,
  step: UpgradeStep,
  status: UpgradeStepStatus = 'running',
  message: string | null = null,
  now = new Date(),
): number {
  const at = now.toISOString();
  const ended = status === 'running' ? null : at;
  return Number(
    db
      .prepare(
        'INSERT INTO platform_lane_steps (operation_id, attempt, step, status, message, started_at, ended_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
      )
      .run(operationId, attempt, step, status, message, at, ended).lastInsertRowid,
  );
}

/** Ends a running step. */
export function endLaneStep(
  db: Db,
  seq: number,
  status: 'succeeded' | 'failed',
  message: string | null,
  now = new Date(),
): void {
  db.prepare('UPDATE platform_lane_steps SET status = ?, message = ?, ended_at = ? WHERE seq = ?').run(
    status,
    message,
    now.toISOString(),
    seq,
  );
}

/** Marks steps a dead attempt left running as failed (interrupted). */
export function closeInterruptedLaneSteps(db: Db, operationId: string, now = new Date()): number {
  return db
    .prepare(
      "UPDATE platform_lane_steps SET status = 'failed', message = COALESCE(message, 'interrupted: the agent stopped'), ended_at = ? WHERE operation_id = ? AND status = 'running'",
    )
    .run(now.toISOString(), operationId).changes;
}

/** The steps of one operation, in order. */
export function listLaneSteps(db: Db, operationId: string): PlatformLaneStep[] {
  return (
    db.prepare('SELECT * FROM platform_lane_steps WHERE operation_id = ? ORDER BY seq').all(operationId) as RawStep[]
  ).map(stepFromRaw);
}

/** Counts of active (queued or running) operations that are not platform lane operations. */
export function activeAppOperations(db: Db): { running: number; queued: number } {
  const rows = db
    .prepare(
      "SELECT status, COUNT(*) AS n FROM operations WHERE status IN ('queued', 'running') AND kind NOT LIKE 'platform.%' GROUP BY status",
    )
    .all() as { status: string; n: number }[];
  const out = { running: 0, queued: 0 };
  for (const r of rows) {
    if (r.status === 'running') out.running = r.n;
    else out.queued = r.n;
  }
  return out;
}

/**
 * Writes a consistent copy of control.db to `file` for a candidate API, without what would leave
 * the host from it: undelivered outbox rows and notification channels.
 */
export async function copyForCandidate(db: Db, file: string): Promise<void> {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  await db.backup(file);
  const copy = openDatabase(file);
  try {
    copy.exec('DELETE FROM event_outbox; DELETE FROM notification_channels;');
  } finally {
    copy.close();
  }
}
