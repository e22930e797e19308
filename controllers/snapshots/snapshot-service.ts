/**
 * Snapshots of app-owned PostgreSQL databases: take, restore (with a safety snapshot), retention
 * (preview, then execute), declared migrations, and export/import through object storage.
 * Only the database an app declares in `infrastructure.postgres.database` is app-owned.
 */
import fs from 'node:fs';
import { NotFoundError, UnavailableError, UnprocessableError } from '../../domain/errors.js';
import type { CanonicalAppSpec } from '../../domain/spec/index.js';
import {
  formatSnapshotName,
  planRetention,
  requireSnapshotName,
  resolveSnapshotReference,
  type RetentionEntry,
  type SnapshotKind,
} from '../../domain/snapshots/index.js';
import { discardEvents, type EventEmitterPort } from '../../domain/events/index.js';
import type { PostgresTools, MigrationRun } from '../../platform/postgres/postgres-tools.js';
import type { S3Snapshots, RemoteSnapshot } from '../../platform/object-storage/s3-snapshots.js';
import type { SnapshotEntry, SnapshotFolder } from '../../platform/snapshots/snapshot-folder.js';
import type { Db } from '../../store/database.js';
import { getApp, listApps, type AppRow } from '../../store/control/apps.js';

export interface SnapshotServiceOptions {
  readonly db: Db;
  readonly folder: SnapshotFolder;
  readonly postgres: PostgresTools;
  /** Object storage; absent when SVC_S3_* is not configured. */
  readonly s3?: S3Snapshots;
  readonly events?: EventEmitterPort;
  readonly now?: () => Date;
  /** Makes the app's database exist before it is dumped or restored (the managed server creates it on first use). */
  readonly prepare?: (app: string) => Promise<void>;
}

/** The typed terminal receipt of a restore. */
export interface RestoreReceipt {
  readonly app: string;
  readonly database: string;
  readonly restoredSnapshot: string;
  readonly safetySnapshot: string | null;
  readonly startedAt: string;
  readonly finishedAt: string;
}

/** What retention would do: each snapshot, newest first, kept or to be pruned. */
export interface RetentionPreview {
  readonly app: string;
  readonly database: string;
  readonly keep: number;
  readonly entries: RetentionEntry[];
}

/** The receipt of an applied retention. */
export interface RetentionReceipt {
  readonly app: string;
  readonly database: string;
  readonly keep: number;
  readonly deleted: readonly string[];
  readonly kept: readonly string[];
}

/** The receipt of a standalone migration. */
export interface MigrationReceipt extends MigrationRun {
  readonly app: string;
  readonly database: string;
  readonly preMigrationSnapshot: string;
}

/** Snapshot operations for every app. */
export class SnapshotService {
  readonly #events: EventEmitterPort;
  readonly #now: () => Date;

  constructor(private readonly options: SnapshotServiceOptions) {
    this.#events = options.events ?? discardEvents;
    this.#now = options.now ?? (() => new Date());
  }

  /** The app's spec, requiring a declared database. */
  appDatabase(app: string): { spec: CanonicalAppSpec; database: string } {
    const row = getApp(this.options.db, app);
    const spec = row?.spec;
    if (!row || !spec)
      throw new NotFoundError(`app "${app}" is not discovered or has no valid spec`, {
        code: 'app_not_found',
        details: { app },
      });
    const database = spec.infrastructure?.postgres?.database;
    if (!database)
      throw new UnprocessableError(`app "${app}" declares no infrastructure.postgres.database`, {
        code: 'no_postgres',
        details: { app },
      });
    return { spec, database };
  }

  /** The app's dumps, newest first, with the retention policy. */
  inventory(app: string): { app: string; database: string; keep: number; snapshots: SnapshotEntry[] } {
    const { spec, database } = this.appDatabase(app);
    return {
      app,
      database,
      keep: spec.snapshots?.keep ?? 3,
      snapshots: this.options.folder.list().filter((e) => e.database === database),
    };
  }

  /** Dumps the app's database now. */
  async take(app: string, kind: SnapshotKind, commit?: string | null): Promise<SnapshotEntry> {
    const { database } = this.appDatabase(app);
    await this.options.prepare?.(app);
    // Names are to the second and dumps are never overwritten: a second snapshot of the same kind
    // and commit within one second (a migration retried at once) takes the next free second.
    const taken = new Set(this.options.folder.list().map((entry) => entry.filename));
    let at = this.#now();
    let filename = formatSnapshotName({ database, kind, commit: commit ?? null, at });
    while (taken.has(filename)) {
      at = new Date(at.getTime() + 1000);
      filename = formatSnapshotName({ database, kind, commit: commit ?? null, at });
    }
    const temp = this.options.folder.incomingPath();
    try {
      await this.options.postgres.dump(database, temp);
    } catch (error) {
      fs.rmSync(temp, { force: true });
      throw error;
    }
    return this.options.folder.publish(temp, filename);
  }

  /**
   * Restores a dump into the app's database in one transaction (fail fast, rolled back on error),
   * after a safety snapshot when `preRestore` (default: the spec's `snapshots.preRestore`).
   */
  async restore(
    app: string,
    filename: string,
    options: { preRestore?: boolean; beforeMutation?: () => void } = {},
  ): Promise<RestoreReceipt> {
    const { spec, database } = this.appDatabase(app);
    const name = requireSnapshotName(filename);
    if (name.database !== database)
      throw new UnprocessableError(`snapshot ${filename} belongs to database ${name.database}, not ${database}`, {
        code: 'snapshot_not_app_owned',
      });
    const file = this.options.folder.pathOf(filename);
    await this.options.prepare?.(app);
    const startedAt = this.#now().toISOString();
    const safety =
      (options.preRestore ?? spec.snapshots?.preRestore ?? false) ? await this.take(app, 'prerestore') : null;
    options.beforeMutation?.();
    await this.options.postgres.restore(database, file);
    const receipt: RestoreReceipt = {
      app,
      database,
      restoredSnapshot: filename,
      safetySnapshot: safety?.filename ?? null,
      startedAt,
      finishedAt: this.#now().toISOString(),
    };
    await this.#emit(app, 'snapshot.restored', 'warning', `restored ${database} from ${filename}`, {
      restoredSnapshot: filename,
      safetySnapshot: receipt.safetySnapshot,
      database,
    });
    return receipt;
  }

  /** Legacy restore argument: an exact file name, or a compact timestamp naming exactly one dump. */
  resolveReference(app: string, reference: string): string {
    const { snapshots } = this.inventory(app);
    return resolveSnapshotReference(
      reference,
      snapshots.map((s) => s.filename),
    );
  }

  /** What retention would do: the newest `keep` kept, older would-prune. */
  retentionPreview(app: string, keep?: number): RetentionPreview {
    const inventory = this.inventory(app);
    const effective = keep ?? inventory.keep;
    return {
      app,
      database: inventory.database,
      keep: effective,
      entries: planRetention(
        inventory.snapshots.map((s) => s.filename),
        effective,
      ),
    };
  }

  /** Deletes the dumps the preview marks would-prune. */
  async applyRetention(app: string, keep?: number): Promise<RetentionReceipt> {
    const preview = this.retentionPreview(app, keep);
    const deleted: string[] = [];
    for (const entry of preview.entries) {
      if (entry.action !== 'would-prune') continue;
      this.options.folder.remove(entry.filename);
      deleted.push(entry.filename);
    }
    const receipt: RetentionReceipt = {
      app,
      database: preview.database,
      keep: preview.keep,
      deleted,
      kept: preview.entries.filter((e) => e.action === 'keep').map((e) => e.filename),
    };
    await this.#emit(
      app,
      'snapshot.retention.applied',
      'info',
      `pruned ${deleted.length} snapshot(s) of ${preview.database}`,
      { deleted, keep: preview.keep },
    );
    return receipt;
  }

  /** Runs the declared migrations in `migrationsDir` once, after a pre-migration snapshot. */
  async migrate(
    app: string,
    migrationsDir: string,
    commit?: string | null,
    beforeMutation?: () => void,
  ): Promise<MigrationReceipt> {
    const { database } = this.appDatabase(app);
    const snapshot = await this.take(app, 'premigrate', commit);
    beforeMutation?.();
    const run = await this.options.postgres.applyMigrations(database, migrationsDir);
    return { app, database, preMigrationSnapshot: snapshot.filename, ...run };
  }

  #remote(app: string): { s3: S3Snapshots; bucket: string } {
    const { spec } = this.appDatabase(app);
    const bucket = spec.snapshots?.exportBucket;
    if (!bucket)
      throw new UnprocessableError(`app "${app}" sets no snapshots.exportBucket`, { code: 'no_export_bucket' });
    if (!this.options.s3)
      throw new UnavailableError(
        'object storage is not configured (SVC_S3_ENDPOINT, SVC_S3_ACCESS_KEY, SVC_S3_SECRET_KEY)',
        { code: 'object_storage_not_configured' },
      );
    return { s3: this.options.s3, bucket };
  }

  /** Uploads the latest local dump of the app's database. */
  async exportLatest(app: string): Promise<RemoteSnapshot> {
    const { s3, bucket } = this.#remote(app);
    const latest = this.inventory(app).snapshots[0];
    if (!latest) throw new UnprocessableError(`app "${app}" has no local snapshot to export`, { code: 'no_snapshot' });
    const remote = await s3.upload(bucket, app, this.options.folder, latest.filename);
    await this.#emit(app, 'snapshot.exported', 'info', `exported ${latest.filename} to ${bucket}`, {
      key: remote.key,
      bucket,
    });
    return remote;
  }

  /** Remote dumps of the app, newest first. */
  async listRemote(app: string): Promise<RemoteSnapshot[]> {
    const { s3, bucket } = this.#remote(app);
    return s3.list(bucket, app);
  }

  /** Imports a remote dump by key into the local folder. */
  async importRemote(app: string, key: string): Promise<SnapshotEntry> {
    const { s3, bucket } = this.#remote(app);
    const entry = await s3.download(bucket, app, key, this.options.folder);
    await this.#emit(app, 'snapshot.imported', 'info', `imported ${entry.filename} from ${bucket}`, { key, bucket });
    return entry;
  }

  /**
   * Per app with a declared database: dumps, overage, latest restore point, export and pre-restore
   * policy. `rows` are the apps, read here unless a caller that polls hands in its cached rows.
   */
  readiness(rows: readonly AppRow[] = listApps(this.options.db)) {
    const all = this.options.folder.list();
    const apps = [];
    for (const row of rows) {
      const spec = row.spec;
      const database = spec?.infrastructure?.postgres?.database;
      if (!spec || !database) continue;
      const snapshots = all.filter((e) => e.database === database);
      const keep = spec.snapshots?.keep ?? 3;
      apps.push({
        app: row.name,
        database,
        snapshots: snapshots.length,
        keep,
        overLimit: Math.max(0, snapshots.length - keep),
        latestRestorePoint: snapshots[0]
          ? { filename: snapshots[0].filename, createdAt: snapshots[0].createdAt, sizeBytes: snapshots[0].sizeBytes }
          : null,
        export: {
          bucket: spec.snapshots?.exportBucket ?? null,
          configured: Boolean(spec.snapshots?.exportBucket && this.options.s3),
        },
        preRestore: spec.snapshots?.preRestore ?? false,
      });
    }
    return { apps };
  }

  async #emit(
    app: string,
    type: string,
    severity: 'info' | 'warning',
    title: string,
    metadata: Record<string, unknown>,
  ): Promise<void> {
    await this.#events.emit({
      type,
      severity,
      app,
      title,
      metadata: { ...metadata, correlationKey: `${app}:snapshots` },
    });
  }
}
