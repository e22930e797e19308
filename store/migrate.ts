/**
 * Migration runner: numbered, append-only schema migrations recorded in `schema_migrations`.
 *
 * Each migration runs in its own transaction together with its bookkeeping row. A checksum of the
 * SQL is stored, so editing a migration that a database already applied is refused at start
 * instead of silently diverging: fix forward with a new migration.
 *
 * A database a newer release migrated further is accepted, its extra migrations left alone and
 * reported (`ahead`): a platform rollback does not undo schema changes, and releases stay backward
 * compatible with the active schema during the rollback window (spec "Versioning" 3, ADR 0089).
 */
import { createHash } from 'node:crypto';
import type { Db } from './database.js';

/** One schema change. `version` numbers start at 1 and increase by one. */
export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

/** A migration as recorded in a database. */
export interface AppliedMigration {
  readonly version: number;
  readonly name: string;
  readonly checksum: string;
  readonly appliedAt: string;
}

export interface MigrationResult {
  readonly applied: readonly Migration[];
  readonly latest: number;
  /** Migrations the database has that this release does not know (written by a newer release). */
  readonly ahead: readonly AppliedMigration[];
}

/** The SHA-256 of a migration's SQL, as stored beside it. */
export function migrationChecksum(migration: Migration): string {
  return createHash('sha256').update(migration.sql).digest('hex');
}

/** Throws unless versions are 1..n in order with unique names. */
export function assertMigrationList(migrations: readonly Migration[]): void {
  migrations.forEach((migration, index) => {
    if (migration.version !== index + 1) {
      throw new Error(
        `migration "${migration.name}" has version ${migration.version}, expected ${index + 1}: versions are contiguous and append-only`,
      );
    }
  });
  const names = new Set(migrations.map((m) => m.name));
  if (names.size !== migrations.length) throw new Error('migration names must be unique');
}

/** Lists the migrations a database has applied. */
export function appliedMigrations(db: Db): AppliedMigration[] {
  ensureTable(db);
  return db
    .prepare('SELECT version, name, checksum, applied_at AS appliedAt FROM schema_migrations ORDER BY version')
    .all() as AppliedMigration[];
}

/** Applies every migration not yet recorded, in order. */
export function migrate(db: Db, migrations: readonly Migration[]): MigrationResult {
  assertMigrationList(migrations);
  const applied = new Map(appliedMigrations(db).map((m) => [m.version, m]));
  const ahead: AppliedMigration[] = [];
  for (const recorded of applied.values()) {
    const known = migrations[recorded.version - 1];
    if (!known) {
      ahead.push(recorded);
      continue;
    }
    if (migrationChecksum(known) !== recorded.checksum) {
      throw new Error(
        `migration ${recorded.version} (${recorded.name}) changed after it was applied: migrations are append-only`,
      );
    }
  }
  const insert = db.prepare('INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES (?, ?, ?, ?)');
  const done: Migration[] = [];
  for (const migration of migrations) {
    if (applied.has(migration.version)) continue;
    db.transaction(() => {
      db.exec(migration.sql);
      insert.run(migration.version, migration.name, migrationChecksum(migration), new Date().toISOString());
    })();
    done.push(migration);
  }
  return { applied: done, latest: migrations.length, ahead };
}

function ensureTable(db: Db): void {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    checksum TEXT NOT NULL,
    applied_at TEXT NOT NULL
  )`);
}
