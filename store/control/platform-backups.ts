/**
 * Platform backup records in control.db (ADR 0173).
 */
import { BackupStatus, type PlatformBackupRecord } from '../../domain/backup/index.js';
import Database from 'better-sqlite3';
import type { Db } from '../database.js';

interface Raw {
  id: string;
  file: string;
  status: string;
  secrets: number;
  encrypted: number;
  bytes: number | null;
  sha256: string | null;
  trigger: string;
  created_at: string;
  finished_at: string | null;
  verification_json: string;
  error: string | null;
  remote_key: string | null;
}

const fromRaw = (r: Raw): PlatformBackupRecord => ({
  id: r.id,
  file: r.file,
  status: r.status as BackupStatus,
  secrets: r.secrets === 1,
  encrypted: r.encrypted === 1,
  bytes: r.bytes,
  sha256: r.sha256,
  trigger: r.trigger,
  createdAt: r.created_at,
  finishedAt: r.finished_at,
  verification: JSON.parse(r.verification_json) as string[],
  error: r.error,
  remoteKey: r.remote_key,
});

/** Records a backup that starts now. */
export function insertPlatformBackup(
  db: Db,
  row: Pick<PlatformBackupRecord, 'id' | 'file' | 'secrets' | 'encrypted' | 'trigger' | 'createdAt'>,
): void {
  db.prepare(
    'INSERT INTO platform_backups (id, file, status, secrets, encrypted, trigger, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
  ).run(row.id, row.file, BackupStatus.running, row.secrets ? 1 : 0, row.encrypted ? 1 : 0, row.trigger, row.createdAt);
}

/** Records how a backup ended. */
export function finishPlatformBackup(
  db: Db,
  id: string,
  end: {
    status: BackupStatus;
    finishedAt: string;
    bytes?: number | null;
    sha256?: string | null;
    verification: readonly string[];
    error?: string | null;
  },
): void {
  db.prepare(
    'UPDATE platform_backups SET status = ?, finished_at = ?, bytes = ?, sha256 = ?, verification_json = ?, error = ? WHERE id = ?',
  ).run(
    end.status,
    end.finishedAt,
    end.bytes ?? null,
    end.sha256 ?? null,
    JSON.stringify(end.verification),
    end.error ?? null,
    id,
  );
}

/** Records the S3 key a backup was exported to. */
export function setPlatformBackupRemoteKey(db: Db, id: string, key: string): void {
  db.prepare('UPDATE platform_backups SET remote_key = ? WHERE id = ?').run(key, id);
}

/** Backups, newest first. */
export function listPlatformBackups(db: Db, limit = 100): PlatformBackupRecord[] {
  return (
    db.prepare('SELECT * FROM platform_backups ORDER BY created_at DESC, id DESC LIMIT ?').all(limit) as Raw[]
  ).map(fromRaw);
}

/** One backup. */
export function getPlatformBackup(db: Db, id: string): PlatformBackupRecord | undefined {
  const row = db.prepare('SELECT * FROM platform_backups WHERE id = ?').get(id) as Raw | undefined;
  return row && fromRaw(row);
}

/** Removes a backup's record (after retention removed its archive). */
export function deletePlatformBackup(db: Db, id: string): void {
  db.prepare('DELETE FROM platform_backups WHERE id = ?').run(id);
}

/** Marks backups left `running` by a stopped process as interrupted; returns their ids. */
export function markInterruptedPlatformBackups(db: Db, at: string): string[] {
  const ids = (
    db.prepare('SELECT id FROM platform_backups WHERE status = ?').all(BackupStatus.running) as { id: string }[]
  ).map((r) => r.id);
  for (const id of ids)
    finishPlatformBackup(db, id, {
      status: BackupStatus.interrupted,
      finishedAt: at,
      verification: [],
      error: 'the platform stopped while this backup ran; its archive, if any, is not trusted',
    });
  return ids;
}

/**
 * In the copy of control.db at `file` (taken while a backup ran), removes the rows of backups still
 * running: on the restored host they are not interrupted work, and their outcome is in no copy.
 */
export function dropRunningBackupsInCopy(file: string): void {
  const db = new Database(file, { fileMustExist: true });
  try {
    db.prepare('DELETE FROM platform_backups WHERE status = ?').run(BackupStatus.running);
  } finally {
    db.close();
  }
}
