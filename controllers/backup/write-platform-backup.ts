/**
 * Writes one platform backup archive: stages consistent copies in a private folder (SQLite online
 * backups, a git bundle, pg_dump of each app database, the platform's keys with secrets, records), writes the manifest with each file's
 * SHA-256 and row counts taken from the copies (the source at the copy's point in time), then packs
 * and encrypts the folder into the archive (complete under its final name only).
 */
import fs from 'node:fs';
import path from 'node:path';
import {
  BACKUP_FORMAT,
  BACKUP_FORMAT_VERSION,
  type BackupDatabaseEntry,
  type BackupFileEntry,
  type BackupManifest,
  type BackupPostgresEntry,
} from '../../domain/backup/index.js';
import { listAppUsers } from '../../platform/backup/app-users.js';
import { bundleRepository } from '../../platform/backup/apps-bundle.js';
import { DEFAULT_IO_PACE, type IoPace } from '../../platform/backup/archive-process.js';
import { hashFiles, writeArchive, type WrittenArchive } from '../../platform/backup/backup-archive.js';
import type { BackupKey } from '../../platform/backup/backup-key.js';
import { appRoleName } from '../../platform/postgres/app-credentials.js';
import { appUserName } from '../../platform/local-scheduler/index.js';
import { listApps } from '../../store/control/apps.js';
import { dropRunningBackupsInCopy } from '../../store/control/platform-backups.js';
import { backupDatabase } from '../../store/database-backup.js';
import { countDatabaseRowsOffLoop, useRollbackJournal } from '../../store/database-check.js';
import type { BackupSources } from './backup-sources.js';

/** Options of one archive. */
export interface WriteBackupOptions {
  readonly id: string;
  readonly createdAt: string;
  /** Include credentials and secret settings (then `key` is required). */
  readonly secrets: boolean;
  readonly key: BackupKey | undefined;
  /** Private scratch folder (removed by the caller). */
  readonly staging: string;
  /** The archive's final path. */
  readonly file: string;
  /** How fast the staged copies and the archive are written (docs/adr/0167); absent: synced every 8 MiB, no rate limit. */
  readonly pace?: IoPace;
}

/** Stages, packs and seals one backup; returns the archive and its manifest. */
export async function writePlatformBackup(
  sources: BackupSources,
  options: WriteBackupOptions,
): Promise<{ archive: WrittenArchive; manifest: BackupManifest; notes: string[] }> {
  const dir = options.staging;
  const pace = options.pace ?? DEFAULT_IO_PACE;
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const databases: BackupDatabaseEntry[] = [];
  // A copy a worker could not take ran on this (the API's) thread: the backup's record says why.
  const notes: string[] = [];
  for (const name of sqliteFiles(sources.dataDir)) {
    // A worker thread's connection copies each file in one step (ADR 0161): the event loop does not
    // wait, and other connections (the knowledge store's, the host agent's) go on writing.
    const copy = await backupDatabase(
      name === 'control.db' ? sources.controlDb : path.join(sources.dataDir, name),
      path.join(dir, name),
      { pace },
    );
    if (copy.why !== undefined) notes.push(`${name}: copied on the API's thread (${copy.why})`);
    useRollbackJournal(copy.file);
    // The copy records this backup as running; on a restored host it would read as interrupted.
    if (name === 'control.db') dropRunningBackupsInCopy(copy.file);
    databases.push({ name, migration: copy.migration, rows: await countDatabaseRowsOffLoop(copy.file) });
  }
  const appsBundle = (await bundleRepository(sources.appsDir, path.join(dir, 'apps.bundle'))) ? 'apps.bundle' : null;
  const postgres = await dumpAppDatabases(sources, dir, options.secrets);
  if (options.secrets) copyPlatformKeys(sources.dataDir, dir);
  const settings = Object.fromEntries(
    Object.entries(sources.settings()).filter(([name]) => options.secrets || !sources.secretSettings.has(name)),
  );
  // The users of this platform's apps only: a host may have others (another platform's, leftovers).
  const ownUsers = new Set(listApps(sources.controlDb).map((app) => appUserName(app.name)));
  const records = { appUsers: listAppUsers().filter((user) => ownUsers.has(user.name)), settings };
  // Hashed by a low-priority child process, not on the API's thread (docs/adr/0167).
  const rels = listFiles(dir);
  const sums = await hashFiles(rels.map((rel) => path.join(dir, rel)));
  const files: BackupFileEntry[] = rels.map((rel, i) => ({
    path: rel,
    bytes: sums[i]!.bytes,
    sha256: sums[i]!.sha256,
  }));
  const manifest: BackupManifest = {
    format: BACKUP_FORMAT,
    formatVersion: BACKUP_FORMAT_VERSION,
    id: options.id,
    createdAt: options.createdAt,
    platform: { version: sources.build.version, commit: sources.build.commit },
    secrets: options.secrets,
    databases,
    appsBundle,
    postgres,
    ...records,
    files,
  };
  fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2), { mode: 0o600 });
  const archive = await writeArchive(dir, options.file, options.key, pace);
  return { archive, manifest, notes };
}

/** The SQLite files at the top of the data folder, control.db first. */
export function sqliteFiles(dataDir: string): string[] {
  const names = fs.existsSync(dataDir)
    ? fs.readdirSync(dataDir).filter((n) => n.endsWith('.db') && fs.statSync(path.join(dataDir, n)).isFile())
    : [];
  return ['control.db', ...names.filter((n) => n !== 'control.db').sort()];
}

async function dumpAppDatabases(sources: BackupSources, dir: string, secrets: boolean): Promise<BackupPostgresEntry[]> {
  if (!sources.postgres) return [];
  const entries: BackupPostgresEntry[] = [];
  const apps = listApps(sources.controlDb).filter((a) => a.spec?.infrastructure?.postgres?.database !== undefined);
  for (const app of apps) {
    const database = app.spec!.infrastructure!.postgres!.database;
    const dump = `postgres/${database}.dump`;
    fs.mkdirSync(path.join(dir, 'postgres'), { recursive: true, mode: 0o700 });
    if (!(await databaseExists(sources, database))) continue;
    await sources.postgres.tools.dump(database, path.join(dir, dump));
    let credentials: string | undefined;
    const pgpass = sources.postgres.credentialsDir && path.join(sources.postgres.credentialsDir, `${app.name}.pgpass`);
    if (secrets && pgpass && fs.existsSync(pgpass)) {
      credentials = `postgres/credentials/${app.name}.pgpass`;
      fs.mkdirSync(path.join(dir, 'postgres', 'credentials'), { recursive: true, mode: 0o700 });
      fs.copyFileSync(pgpass, path.join(dir, credentials));
      fs.chmodSync(path.join(dir, credentials), 0o600);
    }
    entries.push({
      app: app.name,
      database,
      role: appRoleName(app.name),
      dump,
      ...(credentials ? { credentials } : {}),
    });
  }
  return entries;
}

/** Whether the server has `database` (an app that declares one but never deployed has none yet). */
async function databaseExists(sources: BackupSources, database: string): Promise<boolean> {
  const out = await sources.postgres!.tools.query(
    'postgres',
    `SELECT 1 FROM pg_database WHERE datname = '${database.replaceAll("'", "''")}'`,
  );
  return out.trim() === '1';
}

/**
 * The platform's keys (`<data>/keys`, in the hosted folder when there is one: the age identity that
 * decrypts committed secrets, the audit signing key) into `keys/` of the staging folder: without them a
 * restored platform could not decrypt the apps' secrets. Secrets, so only in a backup with secrets.
 */
function copyPlatformKeys(dataDir: string, dir: string): void {
  const keys = path.join(dataDir, 'keys');
  if (!fs.existsSync(keys)) return;
  for (const entry of fs.readdirSync(keys, { withFileTypes: true })) {
    if (!entry.isFile() && !(entry.isSymbolicLink() && fs.statSync(path.join(keys, entry.name)).isFile())) continue;
    fs.mkdirSync(path.join(dir, 'keys'), { recursive: true, mode: 0o700 });
    fs.copyFileSync(path.join(keys, entry.name), path.join(dir, 'keys', entry.name));
    fs.chmodSync(path.join(dir, 'keys', entry.name), 0o600);
  }
}

function listFiles(dir: string, prefix = ''): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(path.join(dir, prefix), { withFileTypes: true })) {
    const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) out.push(...listFiles(dir, rel));
    else if (entry.name !== 'manifest.json' || prefix !== '') out.push(rel);
  }
  return out.sort();
}
