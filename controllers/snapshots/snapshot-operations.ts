/**
 * Snapshots, restores, retention pruning and standalone migrations as durable operations: the handlers the operation
 * worker runs, and the functions that queue them. A restore or migration marks its mutable stage
 * before it touches the database, so one interrupted after that is failed for operator review and
 * never replayed (ADR 0080).
 */
import fs from 'node:fs';
import path from 'node:path';
import { UnprocessableError } from '../../domain/errors.js';
import { readSnapshotPrunePayload, readSnapshotRestorePayload, type Operation } from '../../domain/operations/index.js';
import { requireSnapshotName } from '../../domain/snapshots/index.js';
import type { Db } from '../../store/database.js';
import { getApp } from '../../store/control/apps.js';
import { enqueueOperation } from '../../store/control/operations/operations.js';
import type { OperationHandlers } from '../operations/operation-handlers.js';
import { appSource, cloneStep } from '../pipeline/source-steps.js';
import type { SnapshotService } from './snapshot-service.js';
import { StepFailure } from '../errors.js';

export interface SnapshotOperationsOptions {
  readonly db: Db;
  readonly service: SnapshotService;
  readonly appsDir: string;
  readonly dataDir: string;
  /** Wakes the worker after an operation is queued. */
  readonly wake: () => void;
}

/** Registers the `app.snapshot`, `app.snapshot-restore`, `app.snapshot-prune` and `app.migrate` handlers. */
export function registerSnapshotHandlers(handlers: OperationHandlers, options: SnapshotOperationsOptions): void {
  handlers.register('app.snapshot', {
    async run({ operation, stage }) {
      stage('dump', false);
      const entry = await options.service.take(operation.app!, 'manual', operation.ref);
      return { snapshot: entry.filename, database: entry.database, sizeBytes: entry.sizeBytes };
    },
  });
  handlers.register('app.snapshot-restore', {
    async run({ operation, stage }) {
      const payload = readSnapshotRestorePayload(operation.payload);
      if (!payload) throw new StepFailure(`operation ${operation.id} names no snapshot file to restore`);
      stage('safety-snapshot', false);
      const receipt = await options.service.restore(operation.app!, payload.filename, {
        ...(payload.preRestore === undefined ? {} : { preRestore: payload.preRestore }),
        beforeMutation: () => stage('restore', true),
      });
      return { ...receipt };
    },
  });
  handlers.register('app.snapshot-prune', {
    async run({ operation, stage }) {
      const payload = readSnapshotPrunePayload(operation.payload);
      if (!payload) throw new StepFailure(`operation ${operation.id} carries a keep that is not a whole number`);
      stage('prune', true);
      const receipt = await options.service.applyRetention(operation.app!, payload.keep);
      return { ...receipt };
    },
  });
  handlers.register('app.migrate', {
    async run({ operation, stage }) {
      const app = operation.app!;
      const row = getApp(options.db, app);
      const spec = row?.spec;
      if (!row || !spec?.migrations)
        throw new UnprocessableError(`app "${app}" declares no migrations folder`, { code: 'no_migrations' });
      stage('prepare', false);
      const work = path.join(options.dataDir, 'work', 'migrate', operation.id);
      try {
        const checkout = await cloneStep(
          appSource(spec, row.file, options.appsDir),
          path.join(options.dataDir, 'mirrors', app),
          operation.ref ?? 'HEAD',
          work,
        );
        stage('pre-migration-snapshot', false);
        const receipt = await options.service.migrate(app, path.join(work, spec.migrations), checkout.commit, () =>
          stage('migrate', true),
        );
        return { ...receipt, commit: checkout.commit, ref: operation.ref ?? 'HEAD' };
      } finally {
        fs.rmSync(work, { recursive: true, force: true });
      }
    },
  });
}

/** Queues a manual snapshot of `app`'s database. */
export function queueSnapshot(options: SnapshotOperationsOptions, app: string): Operation {
  options.service.appDatabase(app);
  const operation = enqueueOperation(options.db, { kind: 'app.snapshot', app, payload: {} });
  options.wake();
  return operation;
}

/** Queues a restore of `filename` into `app`'s database. */
export function queueRestore(
  options: SnapshotOperationsOptions,
  app: string,
  filename: string,
  preRestore?: boolean,
): Operation {
  requireSnapshotName(filename);
  const { database } = options.service.appDatabase(app);
  const inventory = options.service.inventory(app);
  if (!inventory.snapshots.some((s) => s.filename === filename)) {
    throw new UnprocessableError(`snapshot ${filename} is not in the inventory of ${database}`, {
      code: 'snapshot_not_found',
      details: { filename },
    });
  }
  // Restores are never retried automatically: one attempt, then operator review.
  const operation = enqueueOperation(options.db, {
    kind: 'app.snapshot-restore',
    app,
    payload: { filename, ...(preRestore === undefined ? {} : { preRestore }) },
    maxAttempts: 1,
  });
  options.wake();
  return operation;
}

/**
 * Queues retention pruning of `app`'s snapshots: keep the newest `keep` (else `snapshots.keep`,
 * else 3) and delete the rest, as the preview would show when the operation runs.
 */
export function queuePrune(options: SnapshotOperationsOptions, app: string, keep?: number): Operation {
  options.service.appDatabase(app);
  const operation = enqueueOperation(options.db, {
    kind: 'app.snapshot-prune',
    app,
    payload: keep === undefined ? {} : { keep },
  });
  options.wake();
  return operation;
}

/** Queues the declared migrations of `app` at `ref`. */
export function queueMigration(options: SnapshotOperationsOptions, app: string, ref: string): Operation {
  const { spec } = options.service.appDatabase(app);
  if (!spec.migrations)
    throw new UnprocessableError(`app "${app}" declares no migrations folder`, { code: 'no_migrations' });
  const operation = enqueueOperation(options.db, { kind: 'app.migrate', app, ref, payload: {}, maxAttempts: 1 });
  options.wake();
  return operation;
}
