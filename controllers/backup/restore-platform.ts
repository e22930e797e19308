/**
 * Restores a platform backup onto a data folder (a new host, or this one with `--yes`), while the
 * platform is stopped. The archive is read and checked whole before anything changes; the new data
 * folder is built beside the target (`<data>.restoring-<id>`) and renamed into place only when
 * complete, so a restore killed midway leaves the target as it was (or absent) and can run again.
 * An existing data folder is kept whole as the pre-restore backup (`<data>.pre-restore-<stamp>`).
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { BackupManifest } from '../../domain/backup/index.js';
import { ConflictError } from '../../domain/errors.js';
import { recreateAppUsers, type RecreatedUser } from '../../platform/backup/app-users.js';
import { cloneBundle } from '../../platform/backup/apps-bundle.js';
import { claimHostedFolder, readHostedFolder, resolveHostedFolder } from '../../platform/files/hosted-folder.js';
import { ioPace, type IoPace } from '../../platform/backup/archive-process.js';
import type { BackupKey } from '../../platform/backup/backup-key.js';
import { AppCredentials } from '../../platform/postgres/app-credentials.js';
import type { PostgresTools } from '../../platform/postgres/postgres-tools.js';
import { scramSha256Verifier } from '../../platform/postgres/scram-verifier.js';
import { KNOWN_SCHEMAS } from './platform-backup-service.js';
import { unpackAndCheck } from './verify-platform-backup.js';

/** The managed PostgreSQL server of a data folder, opened for the restore. */
export interface RestorePostgres {
  readonly tools: PostgresTools;
  /** Folder of the app roles' password files. */
  readonly credentialsDir: string;
  close(): Promise<void>;
}

/** Options of {@link restorePlatform}. */
export interface RestorePlatformOptions {
  readonly archive: string;
  readonly key: BackupKey | undefined;
  /** The data folder to restore (absent or empty, or replaced with `yes`). */
  readonly dataDir: string;
  /** The apps repository (inside the data folder or beside it). */
  readonly appsDir: string;
  /** Replace a data folder that holds a platform (kept whole as the pre-restore backup). */
  readonly yes: boolean;
  /** Whether a platform API runs on the data folder now (it must be stopped first). */
  readonly platformRunning: () => boolean;
  /**
   * Stops the app processes the platform of a data folder still runs (they outlive its API), returning
   * what it stopped; called on the replaced folder once the new one is built, just before the swap.
   * Absent: none are stopped.
   */
  readonly stopApps?: (dataDir: string) => Promise<readonly string[]>;
  /**
   * Stops the managed PostgreSQL server the platform of a data folder left running (a killed platform's
   * server outlives it), returning its pid, or undefined when none ran; called on the replaced folder
   * before the restore starts its own server, which takes the same port. Absent: none is stopped.
   */
  readonly stopPostgres?: (dataDir: string) => Promise<number | undefined>;
  /**
   * Starts the managed PostgreSQL server in a folder (the data folder being built, or its hosted
   * folder); absent: app databases are not restored.
   */
  readonly openPostgres?: (dataDir: string) => Promise<RestorePostgres>;
  /** Progress lines. */
  readonly progress?: (line: string) => void;
  /**
   * How the unpacked archive is written; @default synced every 8 MiB, no rate limit (the platform is
   * stopped: nothing of it waits behind the restore).
   */
  readonly pace?: IoPace;
}

/** What a restore did. */
export interface RestoreReport {
  readonly backupId: string;
  readonly createdAt: string;
  readonly dataDir: string;
  /** Where the replaced data folder was kept, or null when there was none. */
  readonly preRestore: string | null;
  /**
   * The new folder outside the data folder that holds what other system users reach (the PostgreSQL
   * cluster, app folders; ADR 0157), or null when they can enter the data folder itself.
   */
  readonly hostedDir: string | null;
  /** The jobs (`<region>/<job>`) of the replaced platform's apps that were stopped before the swap. */
  readonly stoppedApps: readonly string[];
  /** The pid of the replaced platform's PostgreSQL server the restore stopped, or null when none ran. */
  readonly stoppedPostgres: number | null;
  /** The platform keys put back into `<data>/keys` (none from a backup without secrets: new ones are made). */
  readonly keys: readonly string[];
  readonly databases: readonly string[];
  readonly appDatabases: readonly string[];
  /** True: the backup had no secrets, so each app database got a new password. */
  readonly newCredentials: boolean;
  readonly appUsers: readonly RecreatedUser[];
  readonly settingsFile: string | null;
  readonly checks: readonly string[];
}

/** Restores the archive; throws (with nothing changed) when it is unreadable, damaged, foreign or too new. */
export async function restorePlatform(options: RestorePlatformOptions): Promise<RestoreReport> {
  const say = options.progress ?? (() => undefined);
  const dataDir = path.resolve(options.dataDir);
  const appsDir = path.resolve(options.appsDir);
  if (options.platformRunning())
    throw new ConflictError(
      `a platform is running on ${dataDir}: stop it (svc serve, or systemctl stop svc) before restoring`,
      {
        code: 'platform_running',
      },
    );
  const occupied = holdsData(dataDir) || (!isInside(appsDir, dataDir) && holdsData(appsDir));
  if (occupied && !options.yes)
    throw new ConflictError(
      `${dataDir} already holds a platform: restoring replaces it (it is kept whole as the pre-restore backup); run again with --yes`,
      { code: 'restore_needs_yes', details: { dataDir } },
    );
  const run = randomBytes(3).toString('hex');
  const building = `${dataDir}.restoring-${run}`;
  const unpacked = `${dataDir}.restore-archive-${run}`;
  fs.mkdirSync(path.dirname(dataDir), { recursive: true });
  for (const stale of fs.readdirSync(path.dirname(dataDir)))
    if (
      stale.startsWith(`${path.basename(dataDir)}.restoring-`) ||
      stale.startsWith(`${path.basename(dataDir)}.restore-archive-`)
    )
      removeUnfinished(path.join(path.dirname(dataDir), stale));
  try {
    say(`reading and checking ${options.archive}`);
    const { manifest, checks } = await unpackAndCheck(options.archive, {
      key: options.key,
      into: unpacked,
      known: KNOWN_SCHEMAS,
      pace: options.pace ?? ioPace(0),
    });
    fs.mkdirSync(building, { recursive: true });
    // As the data folder itself (secureDataFolder): others may pass through (the PostgreSQL server's
    // user, app users to their folders) but not list it.
    fs.chmodSync(building, 0o711);
    // What other system users reach (the PostgreSQL cluster, app folders) goes to a new folder outside
    // the data folder when they cannot enter it (ADR 0157, 0162): never into one a platform left on this
    // host (a replaced data folder's stays with its pre-restore copy), so no state of it mixes in.
    const hosted = resolveHostedFolder(building, { name: path.basename(dataDir) });
    if (hosted.separate) say(`PostgreSQL and app folders go to ${hosted.path} (${hosted.reason})`);
    for (const db of manifest.databases) fs.renameSync(path.join(unpacked, db.name), path.join(building, db.name));
    const keys = restorePlatformKeys(manifest, unpacked, building);
    // A server the replaced platform left running (it was killed, or released for an API restart)
    // holds the port the restored cluster keeps and writes into the folder kept as the pre-restore
    // backup: it is stopped (a fast shutdown) before the restored one starts.
    let stoppedPostgres: number | null = null;
    if (occupied && options.stopPostgres) {
      stoppedPostgres = (await options.stopPostgres(dataDir)) ?? null;
      if (stoppedPostgres !== null) say(`stopped the replaced platform's PostgreSQL server (pid ${stoppedPostgres})`);
    }
    const appDatabases = await restoreAppDatabases(manifest, unpacked, hosted.path, options, say);
    let settingsFile: string | null = null;
    if (Object.keys(manifest.settings).length > 0) {
      settingsFile = path.join(building, 'restored-settings.env');
      const lines = Object.entries(manifest.settings).map(([k, v]) => `${k}=${JSON.stringify(v)}`);
      fs.writeFileSync(
        settingsFile,
        `# SVC_* settings in force when backup ${manifest.id} was taken\n${lines.join('\n')}\n`,
        {
          mode: 0o600,
        },
      );
    }
    const appUsers = recreateAppUsers(manifest.appUsers);
    // Every part is in place: from here the old folder is set aside and the new one takes its name.
    const stamp = new Date()
      .toISOString()
      .replace(/[-:]/g, '')
      .replace(/\.\d+Z$/, 'Z');
    let preRestore: string | null = null;
    // The replaced platform's apps still run (app processes outlive the API): stopped now, so none
    // of them goes on writing into the folder kept as the pre-restore backup, or holds its ports when
    // the restored platform starts them again.
    let stoppedApps: readonly string[] = [];
    if (holdsData(dataDir) && options.stopApps) {
      stoppedApps = await options.stopApps(dataDir);
      if (stoppedApps.length > 0) say(`stopped the replaced platform's apps: ${stoppedApps.join(', ')}`);
    }
    if (fs.existsSync(dataDir) && fs.readdirSync(dataDir).length > 0) {
      preRestore = `${dataDir}.pre-restore-${stamp}`;
      fs.renameSync(dataDir, preRestore);
    } else fs.rmSync(dataDir, { recursive: true, force: true });
    if (!isInside(appsDir, dataDir) && fs.existsSync(appsDir) && fs.readdirSync(appsDir).length > 0)
      fs.renameSync(appsDir, `${appsDir}.pre-restore-${stamp}`);
    fs.renameSync(building, dataDir);
    // Each hosted folder names its data folder: both were just renamed.
    claimHostedFolder(dataDir);
    if (preRestore !== null) claimHostedFolder(preRestore);
    if (manifest.appsBundle !== null) {
      fs.rmSync(appsDir, { recursive: true, force: true });
      say(`cloning the apps repository into ${appsDir}`);
      await cloneBundle(path.join(unpacked, manifest.appsBundle), appsDir);
    }
    say(`restored backup ${manifest.id} of ${manifest.createdAt} onto ${dataDir}`);
    return {
      backupId: manifest.id,
      createdAt: manifest.createdAt,
      dataDir,
      preRestore,
      stoppedApps,
      stoppedPostgres,
      hostedDir: hosted.separate ? hosted.path : null,
      keys,
      databases: manifest.databases.map((d) => d.name),
      appDatabases,
      newCredentials: !manifest.secrets && appDatabases.length > 0,
      appUsers,
      settingsFile: settingsFile && path.join(dataDir, path.basename(settingsFile)),
      checks,
    };
  } finally {
    fs.rmSync(unpacked, { recursive: true, force: true });
    removeUnfinished(building);
  }
}

/** Puts the archive's `keys/` files into `<building>/keys` (a link into the hosted folder when there is one), owner-only. */
function restorePlatformKeys(manifest: BackupManifest, unpacked: string, building: string): string[] {
  const names = manifest.files
    .map((f) => f.path)
    .filter((p) => p.startsWith('keys/') && !p.slice('keys/'.length).includes('/'))
    .map((p) => p.slice('keys/'.length));
  for (const name of names) {
    fs.mkdirSync(path.join(building, 'keys'), { recursive: true, mode: 0o700 });
    fs.copyFileSync(path.join(unpacked, 'keys', name), path.join(building, 'keys', name));
    fs.chmodSync(path.join(building, 'keys', name), 0o600);
  }
  return names;
}

/** Removes an unfinished restore's folder and the hosted folder it made (absent once renamed into place). */
function removeUnfinished(folder: string): void {
  const hosted = readHostedFolder(folder);
  if (hosted !== undefined) fs.rmSync(hosted, { recursive: true, force: true });
  fs.rmSync(folder, { recursive: true, force: true });
}

/**
 * Starts a fresh managed server in the new folder (`hostedDir`: the new data folder, or its hosted
 * folder) and restores each app's role and database into it.
 */
async function restoreAppDatabases(
  manifest: BackupManifest,
  unpacked: string,
  hostedDir: string,
  options: RestorePlatformOptions,
  say: (line: string) => void,
): Promise<string[]> {
  if (manifest.postgres.length === 0 || !options.openPostgres) return [];
  say(`starting PostgreSQL to restore ${manifest.postgres.length} app database(s)`);
  const server = await options.openPostgres(hostedDir);
  try {
    const credentials = new AppCredentials(server.credentialsDir);
    const restored: string[] = [];
    for (const pg of manifest.postgres) {
      if (pg.credentials) {
        fs.mkdirSync(server.credentialsDir, { recursive: true, mode: 0o700 });
        fs.copyFileSync(path.join(unpacked, pg.credentials), credentials.fileOf(pg.app));
        fs.chmodSync(credentials.fileOf(pg.app), 0o600);
      }
      // The kept password (or a new one, for a backup without secrets) becomes the role's again.
      const credential = credentials.ensure(pg.app, pg.database);
      await server.tools.ensureRoleAndDatabase(credential.role, scramSha256Verifier(credential.password), pg.database);
      await server.tools.restore(pg.database, path.join(unpacked, pg.dump));
      restored.push(pg.database);
      say(`restored database ${pg.database} of ${pg.app}`);
    }
    return restored;
  } finally {
    await server.close();
  }
}

function holdsData(dir: string): boolean {
  try {
    return fs.readdirSync(dir).length > 0;
  } catch {
    return false;
  }
}

function isInside(child: string, parent: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}
