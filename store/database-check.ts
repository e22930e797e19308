/**
 * Checks of a SQLite file copied into a backup: `PRAGMA integrity_check` and the row count of every
 * ordinary table (virtual tables such as sqlite-vec's and FTS5's are counted through their shadow
 * tables, which are ordinary tables, so no extension is needed to read a copy).
 */
import Database from 'better-sqlite3';
import { runSqliteTask } from './sqlite-worker.js';

/** Row counts by table name. */
export type RowCounts = Readonly<Record<string, number>>;

/** What {@link checkDatabase} found. */
export interface DatabaseCheck {
  /** `ok`, or the first problems `integrity_check` reported. */
  readonly integrity: string;
  readonly rows: RowCounts;
}

/** Opens the copy at `file` read-only and checks it. */
export function checkDatabase(file: string): DatabaseCheck {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const problems = (db.prepare('PRAGMA integrity_check(10)').all() as { integrity_check: string }[]).map(
      (r) => r.integrity_check,
    );
    return { integrity: problems.join('; '), rows: countRows(db) };
  } finally {
    db.close();
  }
}

/**
 * {@link checkDatabase} in a worker thread (ADR 0161): on a large copy the check and the counts take
 * seconds the event loop must not wait for. On this thread where no worker can load SQLite.
 */
export async function checkDatabaseOffLoop(file: string): Promise<DatabaseCheck> {
  const integrity = await runSqliteTask({ kind: 'integrity', file });
  if (integrity === undefined) return checkDatabase(file);
  return { integrity, rows: await countDatabaseRowsOffLoop(file) };
}

/** {@link countDatabaseRows} in a worker thread; on this thread where no worker can load SQLite. */
export async function countDatabaseRowsOffLoop(file: string): Promise<RowCounts> {
  return (await runSqliteTask({ kind: 'count', file })) ?? countDatabaseRows(file);
}

/**
 * Makes the copy at `file` one self-contained file: an online backup keeps the source's WAL mode,
 * and a WAL database opened again grows `-wal` and `-shm` files beside it.
 */
export function useRollbackJournal(file: string): void {
  const db = new Database(file, { fileMustExist: true });
  try {
    db.pragma('journal_mode = DELETE');
  } finally {
    db.close();
  }
}

/** The row count of every ordinary table of the database at `file`. */
export function countDatabaseRows(file: string): RowCounts {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return countRows(db);
  } finally {
    db.close();
  }
}

function countRows(db: Database.Database): RowCounts {
  const tables = db
    .prepare(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND sql NOT LIKE 'CREATE VIRTUAL TABLE%' ORDER BY name",
    )
    .all() as { name: string }[];
  const rows: Record<string, number> = {};
  for (const { name } of tables)
    rows[name] = (db.prepare(`SELECT COUNT(*) AS n FROM "${name.replaceAll('"', '""')}"`).get() as { n: number }).n;
  return rows;
}
