/**
 * Wires snapshots of app-owned databases: the snapshot service (local folder, S3 export and import
 * when `SVC_S3_*` is set), the settings of its durable operations, and the deploy pipeline's steps
 * that act on an app's database (the pre-deploy snapshot and the migrations).
 */
import type { SvcConfig } from '../../platform/config.js';
import type { PostgresTools } from '../../platform/postgres/postgres-tools.js';
import { SnapshotFolder } from '../../platform/snapshots/snapshot-folder.js';
import { S3Snapshots } from '../../platform/object-storage/s3-snapshots.js';
import { SnapshotService } from '../../controllers/snapshots/snapshot-service.js';
import {
  registerSnapshotHandlers,
  type SnapshotOperationsOptions,
} from '../../controllers/snapshots/snapshot-operations.js';
import type { AppDatabases } from '../../controllers/postgres/app-databases.js';
import type { EventEmitterPort } from '../../domain/events/event-port.js';
import type { Db } from '../../store/database.js';
import type { StartDeploysOptions } from './deploys.js';

/** The snapshot service with its S3 client, its operations' settings and the deploy steps it provides. */
export interface SnapshotsWiring {
  readonly service: SnapshotService;
  /** The S3 client of exports and imports; undefined without `SVC_S3_*`. */
  readonly s3: S3Snapshots | undefined;
  /** The settings of the snapshot, restore and migration operations; `wake` wakes the operations worker. */
  operations(wake: () => void): SnapshotOperationsOptions;
  /** The deploy pipeline's snapshot and migrate steps, and the registration of the snapshot operations' handlers. */
  readonly deploySteps: Required<Pick<StartDeploysOptions, 'snapshot' | 'migrate' | 'register'>>;
}

/** Builds the snapshot service on the app database server. */
export function wireSnapshots(
  config: Pick<
    SvcConfig,
    | 's3Endpoint'
    | 's3AccessKey'
    | 's3SecretKey'
    | 's3Region'
    | 's3ForcePathStyle'
    | 'snapshotsDir'
    | 'appsDir'
    | 'dataDir'
  >,
  parts: {
    readonly db: Db;
    readonly postgres: PostgresTools;
    readonly events: EventEmitterPort;
    readonly appDatabases: AppDatabases | undefined;
  },
): SnapshotsWiring {
  const { postgres, appDatabases } = parts;
  const s3 =
    config.s3Endpoint !== undefined && config.s3AccessKey !== undefined && config.s3SecretKey !== undefined
      ? new S3Snapshots({
          endpoint: config.s3Endpoint,
          accessKey: config.s3AccessKey,
          secretKey: config.s3SecretKey,
          region: config.s3Region,
          forcePathStyle: config.s3ForcePathStyle,
        })
      : undefined;
  const snapshots = new SnapshotService({
    db: parts.db,
    folder: new SnapshotFolder(config.snapshotsDir),
    postgres,
    ...(s3 ? { s3 } : {}),
    events: parts.events,
    ...(appDatabases ? { prepare: (app: string) => appDatabases.prepare(app) } : {}),
  });
  const snapshotOperations = (wake: () => void): SnapshotOperationsOptions => ({
    db: parts.db,
    service: snapshots,
    appsDir: config.appsDir,
    dataDir: config.dataDir,
    wake,
  });
  return {
    service: snapshots,
    s3,
    operations: snapshotOperations,
    deploySteps: {
      snapshot: async (app, commit) => {
        const entry = await snapshots.take(app, 'predeploy', commit);
        return { message: `dumped ${entry.database} to ${entry.filename} (${entry.sizeBytes} bytes)` };
      },
      migrate: async (app, dir, commit) => {
        const { database: name } = snapshots.appDatabase(app);
        await appDatabases?.prepare(app);
        const run = await postgres.applyMigrations(name, dir);
        return {
          message: `${run.applied.length} migration(s) applied to ${name}${run.applied.length ? `: ${run.applied.join(', ')}` : ''}; ${run.alreadyApplied.length} already applied (at ${commit?.slice(0, 12) ?? 'HEAD'})`,
        };
      },
      register: (handlers, wake) => registerSnapshotHandlers(handlers, snapshotOperations(wake)),
    },
  };
}
