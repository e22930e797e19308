/**
 * Long SQLite work on a whole file (an online copy, an integrity check, row counts) run by a worker
 * thread with its own better-sqlite3 connection, so the event loop of the process that serves never
 * waits for it (docs/adr/0161). The worker's code is evaluated from a string: there is no worker file
 * to find, so it runs the same from the sources (tsx), from dist/ and from an installed checkout. A
 * packaged build (one esbuild bundle, ADR 0140) has no better-sqlite3 module a worker can require:
 * there every task answers `undefined` and the caller does the work on its own thread.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** A task for the worker. */
export type SqliteTask =
  /**
   * Copies `file` to `to` with one read snapshot, then fsyncs `to`: in one online backup step, or with
   * `pace` in steps of `syncEveryBytes` inside one read transaction (so no other connection's write
   * restarts it), `to` synced after each and the copy written at `bytesPerSecond` at most (0: no limit).
   */
  | {
      readonly kind: 'backup';
      readonly file: string;
      readonly to: string;
      readonly pace?: { readonly syncEveryBytes: number; readonly bytesPerSecond: number };
    }
  /** `PRAGMA integrity_check(10)` of `file`; the problems joined by `; ` (`ok` when sound). */
  | { readonly kind: 'integrity'; readonly file: string }
  /** The row count of every ordinary table of `file` (virtual tables through their shadow tables). */
  | { readonly kind: 'count'; readonly file: string }
  /**
   * The column `n` of the first row of each query (read-only), each run with `params`; with `vectors`
   * the sqlite-vec extension is loaded first (counts of vec0 tables scan them: seconds on a large store).
   */
  | {
      readonly kind: 'numbers';
      readonly file: string;
      readonly vectors: boolean;
      readonly queries: readonly { readonly sql: string; readonly params: readonly (string | number)[] }[];
    };

/** What each task answers. */
export interface SqliteTaskResult {
  backup: { readonly journalMode: string };
  integrity: string;
  count: Record<string, number>;
  numbers: number[];
}

/** A task that failed in the worker (its SQLite error, with the task named). */
export class SqliteTaskError extends Error {}

const SCRIPT = `
const fs = require('node:fs');
const { parentPort, workerData } = require('node:worker_threads');
const task = workerData.task;
function countRows(db) {
  const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND sql NOT LIKE 'CREATE VIRTUAL TABLE%' ORDER BY name").all();
  const rows = {};
  for (const { name } of tables) rows[name] = db.prepare('SELECT COUNT(*) AS n FROM "' + name.replaceAll('"', '""') + '"').get().n;
  return rows;
}
(async () => {
  const Database = require(workerData.sqlite);
  const readonly = task.kind === 'count' || task.kind === 'numbers';
  const db = new Database(task.file, { fileMustExist: true, readonly });
  if (task.kind === 'numbers' && task.vectors) require(workerData.sqliteVec).load(db);
  try {
    let result;
    if (task.kind === 'backup') {
      const journalMode = db.pragma('journal_mode', { simple: true });
      if (task.pace) {
        // Steps inside one read transaction: the snapshot cannot change, so no write by another
        // connection restarts the copy; after each step the copy is synced (the kernel never holds much
        // of it dirty) and, with a rate, the worker sleeps to keep to it (docs/adr/0167).
        const pageSize = db.pragma('page_size', { simple: true });
        const pages = Math.max(16, Math.floor(task.pace.syncEveryBytes / pageSize) || 2 ** 30);
        const sleeper = new Int32Array(new SharedArrayBuffer(4));
        const t0 = Date.now();
        let fd;
        db.exec('BEGIN');
        try {
          db.prepare('SELECT COUNT(*) FROM sqlite_master').get();
          await db.backup(task.to, {
            progress: ({ totalPages, remainingPages }) => {
              if (fd === undefined && fs.existsSync(task.to)) fd = fs.openSync(task.to, 'r');
              if (fd !== undefined) fs.fdatasyncSync(fd);
              if (task.pace.bytesPerSecond > 0) {
                const ahead = ((totalPages - remainingPages) * pageSize / task.pace.bytesPerSecond) * 1000 - (Date.now() - t0);
                if (ahead >= 1) Atomics.wait(sleeper, 0, 0, Math.ceil(ahead));
              }
              return pages;
            },
          });
        } finally {
          db.exec('COMMIT');
          if (fd !== undefined) fs.closeSync(fd);
        }
      } else {
        // One step: one read snapshot for the whole copy (a stepwise copy through this connection would
        // start over at every write by another connection, and might never end under load).
        await db.backup(task.to, { progress: () => 2 ** 30 });
      }
      const fd = fs.openSync(task.to, 'r');
      try { fs.fsyncSync(fd); } finally { fs.closeSync(fd); }
      result = { journalMode };
    } else if (task.kind === 'integrity') {
      result = db.prepare('PRAGMA integrity_check(10)').all().map((r) => r.integrity_check).join('; ');
    } else if (task.kind === 'numbers') {
      result = task.queries.map((q) => db.prepare(q.sql).get(...q.params).n);
    } else {
      result = countRows(db);
    }
    parentPort.postMessage({ ok: true, result });
  } finally {
    db.close();
  }
})().catch((error) => parentPort.postMessage({ ok: false, message: String((error && error.message) || error) }));`;

/** The path of a module a worker thread can require (none in a packaged build). */
function modulePath(name: string): string | undefined {
  try {
    return createRequire(import.meta.url).resolve(name);
  } catch {
    return undefined;
  }
}

/**
 * Runs `task` in a worker thread and resolves with its result; `undefined` when no worker can run it
 * (no SQLite binding to load, or the worker died before answering), so the caller does it itself.
 * Rejects with a {@link SqliteTaskError} when the task itself failed.
 */
export function runSqliteTask<K extends SqliteTask['kind']>(
  task: Extract<SqliteTask, { kind: K }>,
): Promise<SqliteTaskResult[K] | undefined> {
  const sqlite = modulePath('better-sqlite3');
  const any: SqliteTask = task;
  const sqliteVec = any.kind === 'numbers' && any.vectors ? modulePath('sqlite-vec') : null;
  if (sqlite === undefined || sqliteVec === undefined) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    let worker: Worker;
    try {
      worker = new Worker(SCRIPT, { eval: true, workerData: { task, sqlite, sqliteVec } });
    } catch {
      resolve(undefined);
      return;
    }
    worker.once('message', (m: { ok: boolean; result?: SqliteTaskResult[K]; message?: string }) => {
      if (m.ok) resolve(m.result);
      else reject(new SqliteTaskError(`${task.kind} of ${task.file} failed: ${m.message}`));
    });
    worker.once('error', () => resolve(undefined));
    worker.once('exit', () => resolve(undefined));
  });
}
