/**
 * The manifest of a platform backup (`manifest.json`, the archive's first entry): what the archive
 * holds, each file's SHA-256, the schema versions and row counts of its databases at the copy's
 * point in time, and the platform release that wrote it. A restore reads nothing before it checks it.
 */
import { UnprocessableError } from '../errors.js';

/** The archive format this release writes and reads. */
export const BACKUP_FORMAT = 'svc-platform-backup';
export const BACKUP_FORMAT_VERSION = 1;

/** One file of the archive. */
export interface BackupFileEntry {
  /** Path inside the archive (`control.db`, `postgres/ledger.dump`). */
  readonly path: string;
  readonly bytes: number;
  readonly sha256: string;
}

/** A SQLite database of the data folder, copied online. */
export interface BackupDatabaseEntry {
  /** File name in the data folder and in the archive (`control.db`). */
  readonly name: string;
  /** Newest schema migration of the copy. */
  readonly migration: number;
  /** Row count per ordinary table of the copy. */
  readonly rows: Readonly<Record<string, number>>;
}

/** An app database of the managed PostgreSQL server. */
export interface BackupPostgresEntry {
  readonly app: string;
  readonly database: string;
  readonly role: string;
  /** `postgres/<database>.dump` */
  readonly dump: string;
  /** `postgres/credentials/<app>.pgpass`, absent in a backup without secrets. */
  readonly credentials?: string;
}

/** A per-app system user of the host. */
export interface BackupAppUser {
  readonly name: string;
  readonly uid: number;
  readonly gid: number;
}

/** `manifest.json`. */
export interface BackupManifest {
  readonly format: typeof BACKUP_FORMAT;
  readonly formatVersion: number;
  readonly id: string;
  readonly createdAt: string;
  readonly platform: { readonly version: string; readonly commit: string | null };
  /** False: credentials and secret settings were left out (`--no-secrets`). */
  readonly secrets: boolean;
  readonly databases: readonly BackupDatabaseEntry[];
  /** `apps.bundle`, or null when the apps folder is not a git repository with commits. */
  readonly appsBundle: string | null;
  readonly postgres: readonly BackupPostgresEntry[];
  readonly appUsers: readonly BackupAppUser[];
  /** The `SVC_*` settings in force (secret ones only when {@link secrets}). */
  readonly settings: Readonly<Record<string, string>>;
  readonly files: readonly BackupFileEntry[];
}

/** The newest schema each store of this release knows. */
export interface KnownSchemas {
  readonly [database: string]: number;
}

/**
 * Checks that `value` is a manifest this release can restore: the format, its version, and no
 * database migrated past what this release knows. Throws an {@link UnprocessableError} naming the problem.
 */
export function checkManifest(value: unknown, known: KnownSchemas): BackupManifest {
  const m = value as Partial<BackupManifest> | null;
  if (m === null || typeof m !== 'object' || m.format !== BACKUP_FORMAT)
    throw new UnprocessableError('the archive is not an svc platform backup (its manifest names another format)', {
      code: 'not_a_backup',
    });
  if (typeof m.formatVersion !== 'number' || m.formatVersion > BACKUP_FORMAT_VERSION)
    throw new UnprocessableError(
      `the archive has backup format ${String(m.formatVersion)}; this release reads format ${BACKUP_FORMAT_VERSION} and older: restore it with a newer release`,
      { code: 'backup_too_new', details: { formatVersion: m.formatVersion } },
    );
  if (!Array.isArray(m.files) || !Array.isArray(m.databases) || !Array.isArray(m.postgres))
    throw new UnprocessableError('the archive manifest is incomplete', { code: 'backup_damaged' });
  for (const db of m.databases) {
    const newest = known[db.name];
    if (newest !== undefined && db.migration > newest)
      throw new UnprocessableError(
        `${db.name} in the archive has schema migration ${db.migration}; this release knows up to ${newest}: restore it with the release that wrote it (${m.platform?.version ?? 'unknown'}) or newer`,
        { code: 'backup_too_new', details: { database: db.name, migration: db.migration, known: newest } },
      );
  }
  return m as BackupManifest;
}

/** Tables whose row counts differ between two counts, for a verification report. */
export function rowCountDifferences(
  expected: Readonly<Record<string, number>>,
  actual: Readonly<Record<string, number>>,
): string[] {
  const names = new Set([...Object.keys(expected), ...Object.keys(actual)]);
  return [...names]
    .filter((n) => expected[n] !== actual[n])
    .map((n) => `${n}: ${expected[n] ?? 'absent'} in the manifest, ${actual[n] ?? 'absent'} in the copy`);
}
