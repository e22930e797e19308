/**
 * Knowledge store backup files (docs/adr/0174): a SQLite database with the `knowledge.db` schema and
 * a marker in `store_meta`, holding one namespace or the whole store. Written under a temporary name,
 * synced, then renamed; inspected (checksum, header, integrity, schema, version) before any restore.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { backupDatabase } from '../database-backup.js';
import { openDatabase, type Db } from '../database.js';
import { runSqliteTask } from '../sqlite-worker.js';
import { migrate } from '../migrate.js';
import { KNOWLEDGE_MIGRATIONS } from './migrations.js';
import { VectorTables } from './vector-tables.js';
import {
  copyNamespaceOut,
  foldNamespaceCounts,
  namespaceCountQueries,
  namespaceCounts,
  vectorDimensions,
  type NamespaceCounts,
} from './namespace-data.js';

/** Version of the backup layout (the `store_meta` marker); a newer one is refused. */
export const BACKUP_FORMAT = 1;

/** What a backup holds. */
export type BackupScope = 'namespace' | 'store';

/** The marker written into a backup's `store_meta`. */
export interface BackupMarker {
  readonly scope: BackupScope;
  readonly createdAt: string;
  /** For a namespace backup: its tenant and name. */
  readonly tenant?: string;
  readonly namespace?: string;
}

/** A namespace found in a backup file. */
export interface BackupNamespace {
  readonly id: number;
  readonly tenant: string;
  readonly name: string;
  readonly mode: string;
  readonly created_at: number;
  readonly nodes: number;
  readonly versions: number;
  readonly edges: number;
  readonly vectors: number;
}

/** Why a file cannot be restored. */
export class BackupFileError extends Error {
  readonly code: 'backup_corrupt' | 'backup_foreign' | 'backup_newer_version';
  constructor(code: BackupFileError['code'], message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');

function writeMarker(db: Db, marker: BackupMarker): void {
  const put = db.prepare(
    'INSERT INTO store_meta (key, value, updated_at) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at',
  );
  const entries: [string, string][] = [
    ['backup.format', String(BACKUP_FORMAT)],
    ['backup.scope', marker.scope],
    ['backup.created_at', marker.createdAt],
    ...(marker.tenant !== undefined ? ([['backup.tenant', marker.tenant]] as [string, string][]) : []),
    ...(marker.namespace !== undefined ? ([['backup.namespace', marker.namespace]] as [string, string][]) : []),
  ];
  db.transaction(() => {
    for (const [key, value] of entries) put.run(key, value, marker.createdAt);
  })();
}

function syncFile(file: string): void {
  const fd = fs.openSync(file, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Syncs `partial` (on the thread pool: a large file's fsync must not stall the event loop), renames it
 * to `to` and syncs the folder: `to` exists only once it is complete.
 */
async function publish(partial: string, to: string): Promise<void> {
  const handle = await fs.promises.open(partial, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
  fs.renameSync(partial, to);
  syncFile(path.dirname(to));
}

/** SHA-256 of a file, read in chunks off the event loop. */
export async function fileSha256(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of fs.createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/**
 * Writes the whole store to `to` with SQLite's online backup API (ADR 0161): in one step by a worker
 * thread's own connection (one read snapshot, which does not block writers in WAL mode; the event
 * loop never waits for the copy); where no worker can load the SQLite binding (a packaged build), in
 * steps of the live connection itself (writes through it during the copy update the copy instead of
 * restarting it).
 */
export async function writeStoreBackup(live: Db, to: string, marker: BackupMarker): Promise<void> {
  const partial = `${to}.partial`;
  fs.rmSync(partial, { force: true });
  await backupDatabase(live, partial, { stepsOnThisThread: true });
  const copy = openDatabase(partial, { vectors: true, synchronous: 'OFF' });
  try {
    writeMarker(copy, marker);
    copy.pragma('journal_mode = DELETE');
  } finally {
    copy.close();
  }
  await publish(partial, to);
}

/**
 * Writes namespace `nsId` of the store file `liveFile` to `to`: a fresh database with the current
 * schema, filled through a second connection inside one read transaction (a consistent snapshot
 * that does not block writers), yielding to the event loop between bounded steps.
 */
export async function writeNamespaceBackup(
  liveFile: string,
  nsId: number,
  to: string,
  marker: BackupMarker,
): Promise<void> {
  fs.mkdirSync(path.dirname(to), { recursive: true });
  const partial = `${to}.partial`;
  fs.rmSync(partial, { force: true });
  const reader = openDatabase(liveFile, { vectors: true });
  try {
    // A private file until it is published, synced then: no fsync per migration on the event loop.
    const fresh = openDatabase(partial, { vectors: true, synchronous: 'OFF' });
    try {
      migrate(fresh, KNOWLEDGE_MIGRATIONS);
      const vectors = new VectorTables(fresh);
      for (const dims of vectorDimensions(reader)) vectors.ensure(dims);
      writeMarker(fresh, marker);
      fresh.pragma('journal_mode = DELETE');
    } finally {
      fresh.close();
    }
    reader.prepare('ATTACH DATABASE ? AS bak').run(partial);
    try {
      reader.exec('BEGIN');
      try {
        for (const _ of copyNamespaceOut(reader, nsId)) await nextTurn();
        reader.exec('COMMIT');
      } catch (error) {
        if (reader.inTransaction) reader.exec('ROLLBACK');
        throw error;
      }
    } finally {
      reader.exec('DETACH DATABASE bak');
    }
  } catch (error) {
    fs.rmSync(partial, { force: true });
    throw error;
  } finally {
    reader.close();
  }
  await publish(partial, to);
}

/**
 * The result of `PRAGMA integrity_check` on `file` (`ok` when sound), run in a worker thread; where
 * a worker cannot load the SQLite binding (a packaged build), on this thread.
 */
export async function integrityCheck(file: string): Promise<string> {
  const answer = await runSqliteTask({ kind: 'integrity', file });
  if (answer !== undefined) return answer;
  const db = openDatabase(file, {});
  try {
    return String(db.pragma('integrity_check', { simple: true }));
  } finally {
    db.close();
  }
}

/**
 * The counts of each namespace of the file `file` (open as `db`), by a worker thread (ADR 0161): the
 * count of a vec0 table scans it, seconds on a large store; on this thread where no worker can.
 */
async function countNamespaces<T extends { id: number }>(
  db: Db,
  file: string,
  namespaces: readonly T[],
): Promise<(T & NamespaceCounts)[]> {
  const queries = namespaceCountQueries(db);
  const answers = await runSqliteTask({
    kind: 'numbers',
    file,
    vectors: true,
    queries: namespaces.flatMap((ns) => queries.map((sql) => ({ sql, params: [ns.id] }))),
  });
  if (answers === undefined) return namespaces.map((ns) => ({ ...ns, ...namespaceCounts(db, ns.id) }));
  return namespaces.map((ns, i) => ({
    ...ns,
    ...foldNamespaceCounts(answers.slice(i * queries.length, (i + 1) * queries.length)),
  }));
}

function tableExists(db: Db, name: string): boolean {
  return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== undefined;
}

/** A backup file checked and brought to the current schema in a private working copy. */
export interface InspectedBackup {
  /** The working copy (delete it when done). */
  readonly workFile: string;
  readonly scope: BackupScope;
  readonly createdAt: string | null;
  /** The newest migration of the file before it was brought up to date. */
  readonly migration: number;
  readonly namespaces: readonly BackupNamespace[];
}

/**
 * Checks `file` and copies it to `workFile`, migrated to the current schema. Throws a
 * {@link BackupFileError} for a file that is not a SQLite database, fails its integrity check, is
 * not a knowledge store (foreign), or comes from a newer release; nothing else is touched.
 */
export async function inspectBackup(file: string, workFile: string): Promise<InspectedBackup> {
  const fd = fs.openSync(file, 'r');
  const header = Buffer.alloc(SQLITE_HEADER.length);
  try {
    fs.readSync(fd, header, 0, header.length, 0);
  } finally {
    fs.closeSync(fd);
  }
  if (!header.equals(SQLITE_HEADER))
    throw new BackupFileError('backup_corrupt', 'the file is not a SQLite database (its header is wrong)');
  fs.rmSync(workFile, { force: true });
  await fs.promises.copyFile(file, workFile);
  let db: Db | undefined;
  try {
    try {
      const check = await integrityCheck(workFile);
      if (check !== 'ok')
        throw new BackupFileError('backup_corrupt', `the database fails its integrity check: ${check}`);
      db = openDatabase(workFile, { vectors: true, synchronous: 'OFF' });
    } catch (error) {
      if (error instanceof BackupFileError) throw error;
      throw new BackupFileError('backup_corrupt', `the database cannot be read: ${(error as Error).message}`, {
        cause: error,
      });
    }
    for (const table of ['schema_migrations', 'store_meta', 'kn_namespaces'])
      if (!tableExists(db, table))
        throw new BackupFileError('backup_foreign', `the database has no ${table} table: it is not a knowledge store`);
    const recorded = db.prepare('SELECT version, name FROM schema_migrations ORDER BY version').all() as {
      version: number;
      name: string;
    }[];
    for (const m of recorded) {
      const ours = KNOWLEDGE_MIGRATIONS[m.version - 1];
      if (ours !== undefined && ours.name !== m.name)
        throw new BackupFileError(
          'backup_foreign',
          `migration ${m.version} of the file is "${m.name}", not "${ours.name}": it is not a knowledge store`,
        );
    }
    const migration = recorded.at(-1)?.version ?? 0;
    if (migration > KNOWLEDGE_MIGRATIONS.length)
      throw new BackupFileError(
        'backup_newer_version',
        `the backup has schema migration ${migration}; this release knows up to ${KNOWLEDGE_MIGRATIONS.length}: restore it with a newer release`,
      );
    const meta = new Map(
      (
        db.prepare("SELECT key, value FROM store_meta WHERE key LIKE 'backup.%'").all() as {
          key: string;
          value: string;
        }[]
      ).map((r) => [r.key, r.value]),
    );
    const format = Number(meta.get('backup.format') ?? BACKUP_FORMAT);
    if (!Number.isInteger(format) || format > BACKUP_FORMAT)
      throw new BackupFileError(
        'backup_newer_version',
        `the backup has format ${meta.get('backup.format')}; this release reads format ${BACKUP_FORMAT}`,
      );
    try {
      migrate(db, KNOWLEDGE_MIGRATIONS);
    } catch (error) {
      throw new BackupFileError(
        'backup_foreign',
        `the backup's schema cannot be brought up to date: ${(error as Error).message}`,
        {
          cause: error,
        },
      );
    }
    const rows = db
      .prepare('SELECT id, tenant, name, mode, created_at FROM kn_namespaces ORDER BY tenant, name')
      .all() as {
      id: number;
      tenant: string;
      name: string;
      mode: string;
      created_at: number;
    }[];
    return {
      workFile,
      scope: meta.get('backup.scope') === 'namespace' ? 'namespace' : 'store',
      createdAt: meta.get('backup.created_at') ?? null,
      migration,
      namespaces: await countNamespaces(db, workFile, rows),
    };
  } catch (error) {
    db?.close();
    db = undefined;
    fs.rmSync(workFile, { force: true });
    throw error;
  } finally {
    db?.close();
  }
}
