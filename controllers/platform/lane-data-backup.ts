/**
 * The databases' safety copy around a platform upgrade (ADR 0089): taken once per upgrade while no
 * API runs (after the old API stopped, before the new one starts and migrates), restored on
 * rollback only into a database the failed release migrated past what the copy knows, since an
 * older release refuses a database a newer one migrated. The lane's own rows of the upgrade are
 * carried across the restore; everything else the failed release wrote is discarded with its schema.
 */
import fs from 'node:fs';
import path from 'node:path';
import { backupDatabase, latestMigration, restoreDatabase } from '../../store/database-backup.js';
import { readLaneRecords, writeLaneRecords } from '../../store/control/platform-lane-records.js';
import type { Db } from '../../store/database.js';
import { writeFileAtomic } from '../../platform/files/write-file-atomic.js';

/** The databases of the data folder, by file name. */
const DATABASES = ['control.db', 'knowledge.db'] as const;
type DatabaseName = (typeof DATABASES)[number];

/** `backup.json`: written last, so a folder without it holds no usable copy. */
interface BackupIndex {
  readonly takenAt: string;
  readonly databases: readonly { name: DatabaseName; bytes: number; migration: number }[];
}

/** Options of {@link LaneDataBackup}. */
export interface LaneDataBackupOptions {
  /** The agent's own control.db handle (it stays open across a restore). */
  readonly db: Db;
  readonly dataDir: string;
  /** `<platform dir>/backups`: one folder per upgrade operation. */
  readonly backupsDir: string;
}

/** Backups of control.db and knowledge.db, one per upgrade. */
export class LaneDataBackup {
  constructor(private readonly options: LaneDataBackupOptions) {}

  /** The folder of operation `operationId`'s copy. */
  folder(operationId: string): string {
    return path.join(this.options.backupsDir, operationId);
  }

  /** Takes the copy unless this upgrade already has a complete one (a resumed attempt keeps the first). */
  async take(operationId: string): Promise<string> {
    const existing = this.#index(operationId);
    if (existing) return `the backup taken at ${existing.takenAt} is kept`;
    const dir = this.folder(operationId);
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const started = Date.now();
    const databases: BackupIndex['databases'][number][] = [];
    for (const name of DATABASES) {
      const live = path.join(this.options.dataDir, name);
      if (name !== 'control.db' && !fs.existsSync(live)) continue;
      const copy = await backupDatabase(name === 'control.db' ? this.options.db : live, path.join(dir, name));
      databases.push({ name, bytes: copy.bytes, migration: copy.migration });
    }
    writeFileAtomic(path.join(dir, 'backup.json'), JSON.stringify({ takenAt: new Date().toISOString(), databases } satisfies BackupIndex), 0o600);
    return `backed up ${databases.map((d) => `${d.name} (${mib(d.bytes)}, migration ${d.migration})`).join(' and ')} in ${Date.now() - started} ms`;
  }

  /**
   * Restores each database the failed release migrated past the copy; says what it did. Without a
   * complete copy nothing is restored (and a database a newer release migrated then keeps the older
   * release from starting: the message says so).
   */
  async restoreIfMigrated(operationId: string): Promise<string> {
    const index = this.#index(operationId);
    if (!index) return 'no database backup was taken for this upgrade';
    const notes: string[] = [];
    for (const entry of index.databases) {
      const live = path.join(this.options.dataDir, entry.name);
      const now = latestMigration(live);
      if (now <= entry.migration) continue;
      const copy = path.join(this.folder(operationId), entry.name);
      if (entry.name === 'control.db') {
        const records = readLaneRecords(this.options.db, operationId);
        await restoreDatabase(copy, live);
        writeLaneRecords(this.options.db, records);
      } else {
        await restoreDatabase(copy, live);
      }
      notes.push(`${entry.name} restored from the backup of ${index.takenAt} (migration ${now} -> ${entry.migration}; what the failed release wrote is discarded)`);
    }
    return notes.length === 0 ? 'no database was migrated by the failed release' : notes.join('; ');
  }

  /** Removes the copy (the upgrade ended: promoted for good, or rolled back). */
  discard(operationId: string): void {
    fs.rmSync(this.folder(operationId), { recursive: true, force: true });
  }

  #index(operationId: string): BackupIndex | undefined {
    try {
      return JSON.parse(fs.readFileSync(path.join(this.folder(operationId), 'backup.json'), 'utf8')) as BackupIndex;
    } catch {
      return undefined;
    }
  }
}

function mib(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}
