/**
 * SQLite database handles: one file per service, opened in WAL mode with the durability level
 * recorded in docs/adr/0003-sqlite-durability.md.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';

export type Db = Database.Database;

/** SQLite `synchronous` levels we use. */
export const Synchronous = { full: 'FULL', normal: 'NORMAL', off: 'OFF' } as const;
export type Synchronous = (typeof Synchronous)[keyof typeof Synchronous];

export interface OpenDatabaseOptions {
  /**
   * `FULL` fsyncs the WAL on every commit; `NORMAL` only at checkpoints; `OFF` never (a private file
   * that is synced as a whole before anything relies on it, such as a backup being written). @default FULL
   */
  readonly synchronous?: Synchronous;
  /** Load the sqlite-vec extension. @default false */
  readonly vectors?: boolean;
  /** Wait this long for a lock held by another connection. @default 5000 */
  readonly busyTimeoutMs?: number;
}

/** Opens (creating its folder) a SQLite file in WAL mode with foreign keys enforced. */
export function openDatabase(file: string, options: OpenDatabaseOptions = {}): Db {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${options.synchronous ?? 'FULL'}`);
  db.pragma('foreign_keys = ON');
  db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
  if (options.vectors) {
    sqliteVec.load(db);
  }
  return db;
}

/** The sqlite-vec version loaded in `db`, or throws when the extension is missing. */
export function vectorExtensionVersion(db: Db): string {
  const row = db.prepare('SELECT vec_version() AS version').get() as { version: string };
  return row.version;
}

/** SQLite library version of this build. */
export function sqliteVersion(db: Db): string {
  return (db.prepare('SELECT sqlite_version() AS version').get() as { version: string }).version;
}
