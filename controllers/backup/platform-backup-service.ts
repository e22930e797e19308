/**
 * Platform backups (ADR 0173): take one (written, then verified by reading it back), list them with
 * their verification, apply retention, and run them on a schedule. A backup that fails or cannot be
 * verified records a critical event, which `svc inbox` shows.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { BackupStatus, type KnownSchemas, type PlatformBackupRecord } from '../../domain/backup/index.js';
import { ConflictError, NotFoundError, ValidationError } from '../../domain/errors.js';
import { discardEvents, type EventEmitterPort } from '../../domain/events/index.js';
import type { IoPace } from '../../platform/backup/archive-process.js';
import { canDecrypt, type BackupKey } from '../../platform/backup/backup-key.js';
import type { RemoteBackup, S3PlatformBackups } from '../../platform/object-storage/s3-platform-backups.js';
import { CONTROL_MIGRATIONS } from '../../store/control/migrations.js';
import {
  deletePlatformBackup,
  finishPlatformBackup,
  getPlatformBackup,
  insertPlatformBackup,
  listPlatformBackups,
  markInterruptedPlatformBackups,
  setPlatformBackupRemoteKey,
} from '../../store/control/platform-backups.js';
import { KNOWLEDGE_MIGRATIONS } from '../../store/knowledge/migrations.js';
import type { BackupSources } from './backup-sources.js';
import { checkArchiveOf, checkUnpacked } from './verify-platform-backup.js';
import { writePlatformBackup } from './write-platform-backup.js';

/** The newest schema of each store this release knows. */
export const KNOWN_SCHEMAS: KnownSchemas = {
  'control.db': Math.max(...CONTROL_MIGRATIONS.map((m) => m.version)),
  'knowledge.db': Math.max(...KNOWLEDGE_MIGRATIONS.map((m) => m.version)),
};

/** Options of {@link PlatformBackupService}. */
export interface PlatformBackupServiceOptions {
  readonly sources: BackupSources;
  /** Folder of the archives (`SVC_BACKUP_DIR`). */
  readonly backupsDir: string;
  /** The operator key (`SVC_BACKUP_KEY`); absent: only backups without secrets. */
  readonly key: BackupKey | undefined;
  /** Verified backups kept locally; older ones are removed after each new good one. @default 7 */
  readonly keep?: number;
  readonly events?: EventEmitterPort;
  readonly now?: () => Date;
  /** Off-site copies: each verified backup is exported to this bucket, with the same retention. */
  readonly remote?: { readonly store: S3PlatformBackups; readonly bucket: string };
  /** How fast the staged copies and the archive are written (`SVC_BACKUP_IO_MBPS`, docs/adr/0167). */
  readonly pace?: IoPace;
}

/** What a caller asks of one backup. */
export interface TakeBackupRequest {
  /** Leave credentials and secret settings out (the only choice without a key). */
  readonly noSecrets?: boolean;
  /** `api`, `scheduled`, `cli`. */
  readonly trigger?: string;
}

/** Platform backups of this host. */
export class PlatformBackupService {
  readonly #events: EventEmitterPort;
  readonly #now: () => Date;
  #running: Promise<PlatformBackupRecord> | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: PlatformBackupServiceOptions) {
    this.#events = options.events ?? discardEvents;
    this.#now = options.now ?? (() => new Date());
  }

  /** Marks backups a stopped process left running as interrupted and reports them; call once at start. */
  async recover(): Promise<void> {
    const ids = markInterruptedPlatformBackups(this.options.sources.controlDb, this.#now().toISOString());
    for (const id of ids) {
      const row = getPlatformBackup(this.options.sources.controlDb, id);
      if (row) fs.rmSync(path.join(this.options.backupsDir, `${row.file}.partial`), { force: true });
      // Its staged copies too (the size of the databases): nothing else would ever remove them.
      fs.rmSync(path.join(this.options.backupsDir, `.staging-${id}`), { recursive: true, force: true });
      await this.#critical(id, 'the platform stopped while the backup ran: it is not usable');
    }
  }

  /** Backups, newest first, each with its verification. */
  list(limit = 100): PlatformBackupRecord[] {
    return listPlatformBackups(this.options.sources.controlDb, limit);
  }

  /** One backup. */
  get(id: string): PlatformBackupRecord {
    const row = getPlatformBackup(this.options.sources.controlDb, id);
    if (!row) throw new NotFoundError(`no platform backup ${id}`, { code: 'backup_not_found', details: { id } });
    return row;
  }

  /** The archive path of a backup. */
  archivePath(record: PlatformBackupRecord): string {
    return path.join(this.options.backupsDir, record.file);
  }

  /**
   * Takes a backup now and verifies it; resolves with its record whatever the outcome (status
   * `verified` or `failed`). One at a time: a second request while one runs is a conflict.
   */
  async take(request: TakeBackupRequest = {}): Promise<PlatformBackupRecord> {
    if (this.#running) throw new ConflictError('a platform backup is already running', { code: 'backup_running' });
    const secrets = request.noSecrets !== true;
    if (secrets && !this.options.key)
      throw new ValidationError(
        'a platform backup holds secrets and is encrypted with the operator key: set SVC_BACKUP_KEY (an age recipient or identity, or a passphrase), or ask for a backup without secrets (--no-secrets)',
        { code: 'backup_key_required' },
      );
    this.#running = this.#take(secrets, request.trigger ?? 'api');
    try {
      return await this.#running;
    } finally {
      this.#running = undefined;
    }
  }

  async #take(secrets: boolean, trigger: string): Promise<PlatformBackupRecord> {
    const db = this.options.sources.controlDb;
    const at = this.#now();
    // To the millisecond, so archive names (local and remote) sort by time.
    const stamp = at.toISOString().replace(/[-:.]/g, '');
    const id = `bk-${stamp}-${randomBytes(3).toString('hex')}`;
    const key = secrets ? this.options.key : undefined;
    const file = `svc-backup-${stamp}-${id.slice(-6)}${key ? '.age' : '.tar'}`;
    insertPlatformBackup(db, { id, file, secrets, encrypted: key !== undefined, trigger, createdAt: at.toISOString() });
    const staging = path.join(this.options.backupsDir, `.staging-${id}`);
    const verifyDir = path.join(this.options.backupsDir, `.verify-${id}`);
    const archivePath = path.join(this.options.backupsDir, file);
    let written: { bytes: number; sha256: string } | undefined;
    try {
      const { archive, notes } = await writePlatformBackup(this.options.sources, {
        id,
        createdAt: at.toISOString(),
        secrets,
        key,
        staging,
        file: archivePath,
        ...(this.options.pace ? { pace: this.options.pace } : {}),
      });
      written = archive;
      const tools = this.options.sources.postgres?.tools;
      let checks: string[];
      if (!key || canDecrypt(key)) {
        // The archive is read whole and every byte checked against the manifest; what it holds is the
        // staged files byte for byte, checked there (no second copy on the disk: docs/adr/0167).
        ({ checks } = await checkArchiveOf(archivePath, staging, {
          key,
          into: verifyDir,
          known: KNOWN_SCHEMAS,
          ...(tools ? { tools } : {}),
          ...(this.options.pace ? { pace: this.options.pace } : {}),
        }));
      } else {
        // A recipient alone cannot decrypt: the staged copy is checked instead.
        ({ checks } = await checkUnpacked(staging, { known: KNOWN_SCHEMAS, ...(tools ? { tools } : {}) }, [
          'archive encrypted to an age recipient: the staged copy was checked (the identity is needed to read the archive)',
        ]));
      }
      finishPlatformBackup(db, id, {
        status: BackupStatus.verified,
        finishedAt: this.#now().toISOString(),
        bytes: archive.bytes,
        sha256: archive.sha256,
        verification: [...checks, ...notes],
      });
      this.#retain();
      await this.#export(id, archivePath);
      await this.#events.emit({
        type: 'platform.backup.verified',
        severity: 'info',
        title: `platform backup ${id} written and verified`,
        metadata: { backupId: id, bytes: archive.bytes },
      });
    } catch (error) {
      finishPlatformBackup(db, id, {
        status: BackupStatus.failed,
        finishedAt: this.#now().toISOString(),
        bytes: written?.bytes ?? null,
        sha256: written?.sha256 ?? null,
        verification: [],
        error: (error as Error).message,
      });
      await this.#critical(id, (error as Error).message);
    } finally {
      fs.rmSync(staging, { recursive: true, force: true });
      fs.rmSync(verifyDir, { recursive: true, force: true });
      fs.rmSync(`${archivePath}.partial`, { force: true });
    }
    return this.get(id);
  }

  /** Removes verified backups beyond the newest `keep`, and failed ones older than the newest verified one. */
  #retain(): void {
    const keep = this.options.keep ?? 7;
    const rows = this.list(10_000);
    const verified = rows.filter((r) => r.status === BackupStatus.verified);
    const newestGood = verified[0]?.createdAt;
    const drop = [
      ...verified.slice(keep),
      ...rows.filter(
        (r) =>
          r.status !== BackupStatus.verified &&
          r.status !== BackupStatus.running &&
          newestGood !== undefined &&
          r.createdAt < newestGood,
      ),
    ];
    for (const row of drop) {
      fs.rmSync(path.join(this.options.backupsDir, row.file), { force: true });
      deletePlatformBackup(this.options.sources.controlDb, row.id);
    }
  }

  /** The archives in the off-site bucket, newest first; a 422 without one configured. */
  async listRemote(): Promise<RemoteBackup[]> {
    const remote = this.options.remote;
    if (!remote)
      throw new ValidationError('no off-site target: set SVC_BACKUP_S3_BUCKET and SVC_S3_*', {
        code: 'backup_remote_not_configured',
      });
    return remote.store.list(remote.bucket);
  }

  /** Uploads a verified archive and applies retention remotely; a failure is reported, the local backup stays good. */
  async #export(id: string, archivePath: string): Promise<void> {
    const remote = this.options.remote;
    if (!remote) return;
    try {
      const key = await remote.store.upload(remote.bucket, archivePath);
      setPlatformBackupRemoteKey(this.options.sources.controlDb, id, key);
      const keep = this.options.keep ?? 7;
      for (const old of (await remote.store.list(remote.bucket)).slice(keep))
        await remote.store.delete(remote.bucket, old.key);
    } catch (error) {
      await this.#events.emit({
        type: 'platform.backup.export_failed',
        severity: 'critical',
        title: `platform backup ${id} was not copied off-site`,
        body: (error as Error).message,
        metadata: { backupId: id },
      });
    }
  }

  /** Runs a backup every `intervalMs` (0: never); a failure is recorded and reported like any other. */
  schedule(intervalMs: number, noSecrets: boolean): void {
    if (intervalMs <= 0) return;
    this.#timer = setInterval(() => {
      if (this.#running) return;
      void this.take({ noSecrets, trigger: 'scheduled' }).catch(async (error: Error) =>
        this.#critical('scheduled', error.message),
      );
    }, intervalMs);
    this.#timer.unref();
  }

  /** Stops the schedule and waits for a running backup. */
  async close(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    await this.#running?.catch(() => undefined);
    this.options.remote?.store.destroy();
  }

  async #critical(id: string, message: string): Promise<void> {
    await this.#events.emit({
      type: 'platform.backup.failed',
      severity: 'critical',
      title: `platform backup ${id} failed or is not verified: it must not be relied on`,
      body: message,
      metadata: { backupId: id },
    });
  }
}
