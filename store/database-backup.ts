/**
 * Whole-database copies taken with SQLite's online backup API (consistent while other connections
 * write), complete on disk before they are named. The copy runs in a worker thread with its own
 * connection, so the event loop of the process that serves never waits for it (docs/adr/0161).
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { Db } from './database.js';
import { runSqliteTask } from './sqlite-worker.js';

/** What a backup wrote. */
export interface DatabaseBackup {
  readonly file: string;
  readonly bytes: number;
  /** The newest schema migration the copy has (0 when it has none). */
  readonly migration: number;
  /**
   * `worker`: copied by a worker thread (the event loop did not wait); `this thread`: copied here,
   * because the source has no file a worker could open (an in-memory database), is not in WAL mode
   * (a second connection's read would make this thread's writers wait), or no worker can load the
   * SQLite binding (a packaged build).
   */
  readonly copiedBy: 'worker' | 'this thread';
  /** Why the copy ran on this thread (absent when a worker copied it). */
  readonly why?: string;
}

/** Pages per step of a copy on this thread through the source's own connection (about 1 MiB). */
const STEP_PAGES = 256;

/**
 * Copies the database `source` (an open handle, or the path of a file) to `to`: one read snapshot
 * (a point-in-time copy while others write), written to a temporary name, synced, then renamed (and
 * the folder synced), so `to` exists only once it is complete.
 */
export async function backupDatabase(
  source: Db | string,
  to: string,
  options: {
    /**
     * When the copy runs on this thread through the handle `source`: in steps that let the event loop
     * run. Only for a database no other connection writes (a stepwise copy restarts at each of their
     * writes); otherwise, and always for an in-memory database, as the default says. @default false
     */
    readonly stepsOnThisThread?: boolean;
    /**
     * A worker's copy in synced steps at a bounded rate, inside one read transaction (docs/adr/0167):
     * the kernel never holds much of the copy unwritten, whose writeback would stall other fsyncs.
     * Absent: one step, synced at the end.
     */
    readonly pace?: { readonly syncEveryBytes: number; readonly bytesPerSecond: number };
  } = {},
): Promise<DatabaseBackup> {
  fs.mkdirSync(path.dirname(to), { recursive: true });
  const temp = `${to}.partial`;
  fs.rmSync(temp, { force: true });
  const file = typeof source === 'string' ? source : fileOf(source);
  let why = typeof file === 'string' ? undefined : file.why;
  try {
    if (
      typeof file === 'string' &&
      (await runSqliteTask({ kind: 'backup', file, to: temp, ...(options.pace ? { pace: options.pace } : {}) })) ===
        undefined
    )
      why = 'no worker thread can load the SQLite binding (a packaged build)';
    if (why !== undefined) {
      const steps = typeof source !== 'string' && (source.memory || options.stepsOnThisThread === true);
      await copyOnThisThread(source, temp, steps);
      await syncFile(temp);
    }
  } catch (error) {
    fs.rmSync(temp, { force: true });
    throw error;
  }
  fs.renameSync(temp, to);
  syncFolder(path.dirname(to));
  return {
    file: to,
    bytes: fs.statSync(to).size,
    migration: latestMigration(to),
    ...(why === undefined ? { copiedBy: 'worker' as const } : { copiedBy: 'this thread' as const, why }),
  };
}

/** The file a worker can copy `db` from, or why it cannot. */
function fileOf(db: Db): string | { why: string } {
  if (db.memory) return { why: 'the database exists only in memory: no file for a worker to open' };
  const mode = String(db.pragma('journal_mode', { simple: true }));
  if (mode !== 'wal')
    return { why: `the database is in ${mode} journal mode: a second connection's read would block its writers` };
  return path.resolve(db.name);
}

/**
 * The copy on this thread. In `steps` (through the source's own handle) the event loop runs between
 * them, and a write through that connection updates the copy instead of restarting it; otherwise in
 * one step, one read snapshot (a stepwise copy restarts at every write by another connection).
 */
async function copyOnThisThread(source: Db | string, temp: string, steps: boolean): Promise<void> {
  const db = typeof source === 'string' ? new Database(source, { fileMustExist: true }) : source;
  try {
    await db.backup(temp, { progress: () => (steps ? STEP_PAGES : 2 ** 30) });
  } finally {
    if (typeof source === 'string') db.close();
  }
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

/** fsync of a (large) file on the thread pool. */
async function syncFile(file: string): Promise<void> {
  const handle = await fs.promises.open(file, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
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
