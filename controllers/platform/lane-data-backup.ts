/**
 * The databases' safety copy of a platform upgrade (ADR 0089): taken once per upgrade while no API
 * runs (after the old API stopped, before the new one first starts and migrates), and kept until
 * the next upgrade takes its own, for an operator to recover from by hand. A rollback does not
 * restore it: a platform rollback does not undo schema changes (spec "Versioning" 3).
 */
import fs from 'node:fs';
import path from 'node:path';
import { backupDatabase } from '../../store/database-backup.js';
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

  /**
   * Takes the copy unless this upgrade already has a complete one (a resumed attempt keeps the
   * first: the new release may have migrated since); the copies of earlier upgrades are removed.
   */
  async take(operationId: string): Promise<string> {
    const existing = this.#index(operationId);
    if (existing) return `the backup taken at ${existing.takenAt} is kept`;
    const dir = this.folder(operationId);
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const started = Date.now();
    const databases: BackupIndex['databases'][number][] = [];
    const onThisThread: string[] = [];
    for (const name of DATABASES) {
      const live = path.join(this.options.dataDir, name);
      if (name !== 'control.db' && !fs.existsSync(live)) continue;
      const copy = await backupDatabase(name === 'control.db' ? this.options.db : live, path.join(dir, name));
      databases.push({ name, bytes: copy.bytes, migration: copy.migration });
      if (copy.why !== undefined) onThisThread.push(`${name} was copied on the agent's thread: ${copy.why}`);
    }
    writeFileAtomic(
      path.join(dir, 'backup.json'),
      JSON.stringify({ takenAt: new Date().toISOString(), databases } satisfies BackupIndex),
      0o600,
    );
    this.keepOnly(operationId);
    return `backed up ${databases.map((d) => `${d.name} (${mib(d.bytes)}, migration ${d.migration})`).join(' and ')} in ${Date.now() - started} ms${onThisThread.map((n) => `; ${n}`).join('')}`;
  }

  /** Removes the copies of every upgrade but `operationId` (the latest one is kept). */
  keepOnly(operationId: string): void {
    let names: string[] = [];
    try {
      names = fs.readdirSync(this.options.backupsDir);
    } catch {
      return;
    }
    for (const name of names)
      if (name !== operationId) fs.rmSync(path.join(this.options.backupsDir, name), { recursive: true, force: true });
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
