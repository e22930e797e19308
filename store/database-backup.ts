/**
 * Whole-database copies taken with SQLite's online backup API (consistent while other connections
 * write), complete on disk before they are named.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { Db } from './database.js';

/** What a backup wrote. */
export interface DatabaseBackup {
  readonly file: string;
  readonly bytes: number;
  /** The newest schema migration the copy has (0 when it has none). */
  readonly migration: number;
}

/**
 * Copies the database `source` (an open handle, or the path of a file) to `to`: written to a
 * temporary name, synced, then renamed, so `to` exists only once it is complete.
 */
export async function backupDatabase(
  source: Db | string,
  to: string,
  options: { readonly oneStep?: boolean } = {},
): Promise<DatabaseBackup> {
  fs.mkdirSync(path.dirname(to), { recursive: true });
  const temp = `${to}.partial`;
  fs.rmSync(temp, { force: true });
  const db = typeof source === 'string' ? new Database(source, { fileMustExist: true }) : source;
  try {
    // oneStep: the whole copy in one backup step under one read snapshot. Stepwise, a copy through its
    // own connection starts over at every write by another connection, and may never end under load.
    await (options.oneStep ? db.backup(temp, { progress: () => 2 ** 30 }) : db.backup(temp));
  } finally {
    if (typeof source === 'string') db.close();
  }
  const fd = fs.openSync(temp, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(temp, to);
  syncFolder(path.dirname(to));
  return { file: to, bytes: fs.statSync(to).size, migration: latestMigration(to) };
}

/** The newest schema migration recorded in the database file at `file` (0 when it has none or does not exist). */
export function latestMigration(file: string): number {
  if (!fs.existsSync(file)) return 0;
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get();
    if (table === undefined) return 0;
    return (db.prepare('SELECT COALESCE(MAX(version), 0) AS v FROM schema_migrations').get() as { v: number }).v;
  } finally {
    db.close();
  }
}

function syncFolder(dir: string): void {
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}
