/**
 * Wires platform backups (ADR 0173): the service with its sources (control.db's handle, the data
 * folder, the apps repository, the app database server), the operator key and the schedule; and the
 * offline restore `svc restore` runs, which opens the managed PostgreSQL server of the data folder
 * it builds through the server's own layout.
 */
import { VARIABLES, type SvcConfig } from '../../platform/config.js';
import type { Logger } from '../../platform/logger.js';
import { buildInfo } from '../../platform/build-info.js';
import type { VariableSpec } from '../../platform/config-parsers.js';
import { ioPace } from '../../platform/backup/archive-process.js';
import { parseBackupKey, type BackupKey } from '../../platform/backup/backup-key.js';
import { ManagedPostgres, managedPostgresLayout } from '../../platform/postgres/managed-postgres.js';
import { stopLeftPostgres } from '../../platform/postgres/postmaster-pid.js';
import { PostgresTools } from '../../platform/postgres/postgres-tools.js';
import { PLATFORM_BACKUP_PREFIX, S3PlatformBackups } from '../../platform/object-storage/s3-platform-backups.js';
import fs from 'node:fs';
import path from 'node:path';
import { apiAlive, readApiProcess } from '../../platform/platform-lane/api-process.js';
import { LocalRegistry } from '../../platform/local-registry/index.js';
import { LocalScheduler } from '../../platform/local-scheduler/index.js';
import { PlatformBackupService } from '../../controllers/backup/platform-backup-service.js';
import { restorePlatform, type RestoreReport } from '../../controllers/backup/restore-platform.js';
import type { EventEmitterPort } from '../../domain/events/index.js';
import type { Db } from '../../store/database.js';

/** The settings that are secrets (left out of backups without secrets). */
export const SECRET_SETTINGS: ReadonlySet<string> = new Set(
  Object.values(VARIABLES as Record<string, VariableSpec<unknown>>)
    .filter((v) => v.secret === true)
    .map((v) => v.name),
);

/** The `SVC_*` variables in force (from the environment, where the installed settings file puts them too). */
export function settingsInForce(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env)
      .filter((e): e is [string, string] => e[0].startsWith('SVC_') && typeof e[1] === 'string' && e[1] !== '')
      .sort(([a], [b]) => a.localeCompare(b)),
  );
}

/** Parses SVC_BACKUP_KEY (or `raw`), naming the variable when it is malformed. */
export async function backupKeyOf(raw: string | undefined): Promise<BackupKey | undefined> {
  if (raw === undefined || raw === '') return undefined;
  try {
    return await parseBackupKey(raw);
  } catch (error) {
    throw new Error(`SVC_BACKUP_KEY: ${(error as Error).message}`, { cause: error });
  }
}

/** Builds the backup service of a control plane and starts its schedule. */
export async function startPlatformBackups(
  config: SvcConfig,
  parts: {
    readonly db: Db;
    readonly postgres: { readonly tools: PostgresTools; readonly credentialsDir?: string } | undefined;
    readonly events: EventEmitterPort;
    readonly logger: Logger;
  },
): Promise<PlatformBackupService> {
  const key = await backupKeyOf(config.backupKey);
  const remote = remoteOf(config);
  const service = new PlatformBackupService({
    sources: {
      controlDb: parts.db,
      dataDir: config.dataDir,
      appsDir: config.appsDir,
      ...(parts.postgres ? { postgres: parts.postgres } : {}),
      settings: () => settingsInForce(),
      secretSettings: SECRET_SETTINGS,
      build: buildInfo(),
    },
    backupsDir: config.backupDir,
    key,
    keep: config.backupKeep,
    pace: ioPace(config.backupIoMbps),
    events: parts.events,
    ...(remote ? { remote } : {}),
  });
  await service.recover();
  service.schedule(config.backupIntervalMs, key === undefined);
  if (config.backupIntervalMs > 0)
    parts.logger.info(
      { intervalMs: config.backupIntervalMs, secrets: key !== undefined },
      key ? 'scheduled platform backups on' : 'scheduled platform backups on, without secrets (no SVC_BACKUP_KEY)',
    );
  return service;
}

/** The off-site target: SVC_BACKUP_S3_BUCKET on the SVC_S3_* store of snapshots. */
function remoteOf(config: SvcConfig): { store: S3PlatformBackups; bucket: string } | undefined {
  if (config.backupS3Bucket === undefined) return undefined;
  if (config.s3Endpoint === undefined || config.s3AccessKey === undefined || config.s3SecretKey === undefined)
    throw new Error('SVC_BACKUP_S3_BUCKET: needs SVC_S3_ENDPOINT, SVC_S3_ACCESS_KEY and SVC_S3_SECRET_KEY');
  return {
    bucket: config.backupS3Bucket,
    store: new S3PlatformBackups({
      endpoint: config.s3Endpoint,
      accessKey: config.s3AccessKey,
      secretKey: config.s3SecretKey,
      region: config.s3Region,
      forcePathStyle: config.s3ForcePathStyle,
    }),
  };
}

/** `svc restore`: restores `archive` onto the configured data folder (the platform stopped). */
export async function restorePlatformFromArchive(
  config: SvcConfig,
  logger: Logger,
  options: { archive: string; key: string | undefined; yes: boolean; progress?: (line: string) => void },
): Promise<RestoreReport> {
  const key = await backupKeyOf(options.key ?? config.backupKey);
  let archive = options.archive;
  let downloaded: string | undefined;
  if (archive.startsWith(PLATFORM_BACKUP_PREFIX) && !fs.existsSync(archive)) {
    const remote = remoteOf(config);
    if (!remote) throw new Error(`${archive} looks like an S3 key, but SVC_BACKUP_S3_BUCKET is not set`);
    downloaded = path.join(path.dirname(path.resolve(config.dataDir)), `.${path.basename(archive)}.download`);
    options.progress?.(`downloading ${archive} from bucket ${remote.bucket}`);
    fs.mkdirSync(path.dirname(downloaded), { recursive: true });
    try {
      await remote.store.download(remote.bucket, archive, downloaded);
    } finally {
      remote.store.destroy();
    }
    archive = downloaded;
  }
  try {
    return await restoreArchive(config, logger, options, archive, key);
  } finally {
    if (downloaded) fs.rmSync(downloaded, { force: true });
  }
}

function restoreArchive(
  config: SvcConfig,
  logger: Logger,
  options: { yes: boolean; progress?: (line: string) => void },
  archive: string,
  key: BackupKey | undefined,
): Promise<RestoreReport> {
  return restorePlatform({
    archive,
    key,
    dataDir: config.dataDir,
    appsDir: config.appsDir,
    yes: options.yes,
    platformRunning: () => apiAlive(readApiProcess(config.platformDir)),
    stopApps: (dataDir: string) => stopAppsOf(dataDir, logger),
    ...(config.postgresManaged
      ? { stopPostgres: (dataDir: string) => stopLeftPostgres(managedPostgresLayout(dataDir).cluster) }
      : {}),
    ...(options.progress ? { progress: options.progress } : {}),
    ...(config.postgresManaged
      ? {
          openPostgres: async (dataDir: string) => {
            const managed = await ManagedPostgres.open({
              dataDir,
              logger,
              ...(config.postgresBinDir === undefined ? {} : { binDir: config.postgresBinDir }),
            });
            const c = managed.connection();
            return {
              tools: new PostgresTools({
                host: c.socketDir,
                port: c.port,
                user: c.user,
                passwordFile: c.passwordFile,
                binDir: c.binDir,
                asDatabaseOwner: true,
              }),
              credentialsDir: managed.layout.credentials,
              close: () => managed.close(),
            };
          },
        }
      : {}),
  });
}

/**
 * Stops every job the local drivers of the data folder `dataDir` still run (the API is stopped; app
 * processes outlive it by design), through each region's driver as the app controller stops a job:
 * the driver drains and ends each allocation's process group and records the job dead, so the
 * replaced folder's state says what ran. Returns `<region>/<job>` of each job stopped.
 */
export async function stopAppsOf(dataDir: string, logger: Logger): Promise<string[]> {
  const targets: { dir: string; region: string }[] = [{ dir: dataDir, region: 'local' }];
  const regions = path.join(dataDir, 'regions');
  if (fs.existsSync(regions))
    for (const region of fs.readdirSync(regions)) targets.push({ dir: path.join(regions, region), region });
  const stopped: string[] = [];
  for (const { dir, region } of targets) {
    if (!fs.existsSync(path.join(dir, 'scheduler'))) continue;
    const scheduler = await LocalScheduler.open({
      dataDir: dir,
      registry: new LocalRegistry(),
      logger: logger.child({ driver: 'local', region, during: 'restore' }),
      region,
      releasesDir: path.join(dataDir, 'releases'),
      appSecretsDir: path.join(dataDir, 'secrets'),
    });
    try {
      for (const job of await scheduler.listJobs()) {
        if (job.status !== 'running' && (await scheduler.listAllocations({ jobId: job.spec.id })).length === 0)
          continue;
        await scheduler.stopJob(job.spec.id);
        stopped.push(`${region}/${job.spec.id}`);
      }
    } finally {
      await scheduler.close();
    }
  }
  return stopped;
}
