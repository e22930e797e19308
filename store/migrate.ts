/**
 * Migration runner: numbered, append-only schema migrations recorded in `schema_migrations`.
 *
 * Each migration runs in its own transaction together with its bookkeeping row. A checksum of the
 * SQL is stored, so editing a migration that a database already applied is refused at start
 * instead of silently diverging: fix forward with a new migration.
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
}

/** The SHA-256 of a migration's SQL, as stored beside it. */
export function migrationChecksum(migration: Migration): string {
  return createHash('sha256').update(migration.sql).digest('hex');
}

/** Throws unless versions are 1..n in order with unique names. */
export function assertMigrationList(migrations: readonly Migration[]): void {
  migrations.forEach((migration, index) => {
    if (migration.version !== index + 1) {
      throw new Error(`migration "${migration.name}" has version ${migration.version}, expected ${index + 1}: versions are contiguous and append-only`);
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

/** Options of {@link migrate}. */
export interface MigrateOptions {
  /**
   * Accept a database a newer release migrated further (its extra migrations are left alone). Only
   * for the host agent, which must finish rolling such a release back (ADR 0089); every service
   * refuses such a database.
   */
  readonly allowNewer?: boolean;
}

/** Applies every migration not yet recorded, in order. */
export function migrate(db: Db, migrations: readonly Migration[], options: MigrateOptions = {}): MigrationResult {
  assertMigrationList(migrations);
  const applied = new Map(appliedMigrations(db).map((m) => [m.version, m]));
  for (const recorded of applied.values()) {
    const known = migrations[recorded.version - 1];
    if (!known) {
      if (options.allowNewer) continue;
      throw new Error(`database has migration ${recorded.version} (${recorded.name}) that this release does not know: it was written by a newer release`);
    }
    if (migrationChecksum(known) !== recorded.checksum) {
      throw new Error(`migration ${recorded.version} (${recorded.name}) changed after it was applied: migrations are append-only`);
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
  return { applied: done, latest: migrations.length };
}

function ensureTable(db: Db): void {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    checksum TEXT NOT NULL,
    applied_at TEXT NOT NULL
  )`);
}
