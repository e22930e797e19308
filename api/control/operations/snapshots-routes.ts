/**
 * Snapshot routes. Reads: the inventory, the retention preview, the remote listing, snapshot
 * readiness. The legacy synchronous restore `POST /api/apps/{id}/snapshots/restore`. Versioned
 * mutations (Idempotency-Key required): manual snapshot, restore, retention pruning and migration
 * (durable operations), export and import.
 */
import Router from '@koa/router';
import { ValidationError } from '../../../domain/errors.js';
import { compileValidator } from '../../../domain/json-schema.js';
import type { SnapshotService } from '../../../controllers/snapshots/snapshot-service.js';
import {
  queueMigration,
  queuePrune,
  queueRestore,
  queueSnapshot,
  type SnapshotOperationsOptions,
} from '../../../controllers/snapshots/snapshot-operations.js';
import type { IdempotencyKeys } from '../../../controllers/operations/index.js';
import { idempotency } from '../../http/idempotency.js';

interface LegacyRestoreBody {
  snapshot: string;
  confirm: true;
  preRestore?: boolean;
}

export const parseLegacyRestore = compileValidator<LegacyRestoreBody>(
  {
    type: 'object',
    required: ['snapshot', 'confirm'],
    additionalProperties: false,
    properties: {
      snapshot: {
        type: 'string',
        minLength: 1,
        maxLength: 200,
        description: 'exact inventory file name, or a compact UTC timestamp naming exactly one snapshot',
      },
      confirm: { const: true, description: 'must be true: a restore replaces the database contents' },
      preRestore: { type: 'boolean', description: 'take a safety snapshot first; default snapshots.preRestore' },
    },
  },
  'restore request',
);

function keepParam(raw: unknown): number | undefined {
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string' || !/^\d{1,4}$/.test(raw))
    throw new ValidationError('keep must be a whole number from 0 to 9999', { code: 'invalid_keep' });
  return Number(raw);
}

/** Read routes and the legacy restore. */
export function snapshotReadRoutes(service: SnapshotService): Router {
  const router = new Router();
  router.get('/api/v1/apps/:id/snapshots', (ctx) => {
    ctx.body = service.inventory(ctx.params.id!);
  });
  router.get('/api/v1/apps/:id/snapshots/retention', (ctx) => {
    ctx.body = service.retentionPreview(ctx.params.id!, keepParam(ctx.query.keep));
  });
  router.get('/api/v1/apps/:id/snapshots/remote', async (ctx) => {
    ctx.body = { app: ctx.params.id, objects: await service.listRemote(ctx.params.id!) };
  });
  router.get('/api/operator/snapshot-readiness', (ctx) => {
    ctx.body = service.readiness();
  });
  router.post('/api/apps/:id/snapshots/restore', async (ctx) => {
    const body = parseLegacyRestore(ctx.request.body);
    const filename = service.resolveReference(ctx.params.id!, body.snapshot);
    ctx.body = await service.restore(
      ctx.params.id!,
      filename,
      body.preRestore === undefined ? {} : { preRestore: body.preRestore },
    );
  });
  return router;
}

/** Body of `POST /api/v1/apps/{id}/snapshots/{filename}/restore`. */
export const SNAPSHOT_RESTORE_SCHEMA = {
  type: 'object',
  required: ['confirm'],
  additionalProperties: false,
  properties: { confirm: { const: true }, preRestore: { type: 'boolean' } },
} as const;
const parseRestore = compileValidator<{ confirm: true; preRestore?: boolean }>(
  SNAPSHOT_RESTORE_SCHEMA,
  'restore request',
);
export const parseRetention = compileValidator<{ confirm: true; keep?: number }>(
  {
    type: 'object',
    required: ['confirm'],
    additionalProperties: false,
    properties: { confirm: { const: true }, keep: { type: 'integer', minimum: 0, maximum: 9999 } },
  },
  'retention request',
);
export const parseMigration = compileValidator<{ ref: string; confirm: true }>(
  {
    type: 'object',
    required: ['ref', 'confirm'],
    additionalProperties: false,
    properties: {
      ref: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[^\\s~^:?*\\[\\\\]+$' },
      confirm: { const: true },
    },
  },
  'migration request',
);
export const parseImport = compileValidator<{ key: string }>(
  {
    type: 'object',
    required: ['key'],
    additionalProperties: false,
    properties: { key: { type: 'string', minLength: 1, maxLength: 1024 } },
  },
  'import request',
);
/** The body of `POST /api/v1/apps/{id}/snapshots` (take a snapshot now): empty. */
export const SNAPSHOT_TAKE_SCHEMA = { type: 'object', additionalProperties: false, maxProperties: 0 } as const;
const emptyBody = compileValidator<Record<string, never>>(SNAPSHOT_TAKE_SCHEMA, 'request body');

/** Versioned snapshot mutations; each needs an Idempotency-Key header. */
export function snapshotMutationRoutes(
  service: SnapshotService,
  operations: SnapshotOperationsOptions,
  keys: IdempotencyKeys,
): Router {
  const router = new Router();
  const idempotent = idempotency({ keys, required: true });
  const body = (raw: unknown) => (raw === undefined || raw === null ? {} : raw);
  router.post('/api/v1/apps/:id/snapshots', idempotent, (ctx) => {
    emptyBody(body(ctx.request.body));
    ctx.status = 202;
    ctx.body = { operation: queueSnapshot(operations, ctx.params.id!) };
  });
  router.post('/api/v1/apps/:id/snapshots/retention', idempotent, (ctx) => {
    const request = parseRetention(body(ctx.request.body));
    ctx.status = 202;
    ctx.body = { operation: queuePrune(operations, ctx.params.id!, request.keep) };
  });
  router.post('/api/v1/apps/:id/snapshots/export', idempotent, async (ctx) => {
    emptyBody(body(ctx.request.body));
    ctx.body = await service.exportLatest(ctx.params.id!);
  });
  router.post('/api/v1/apps/:id/snapshots/import', idempotent, async (ctx) => {
    const request = parseImport(body(ctx.request.body));
    ctx.status = 201;
    ctx.body = await service.importRemote(ctx.params.id!, request.key);
  });
  router.post('/api/v1/apps/:id/snapshots/:filename/restore', idempotent, (ctx) => {
    const request = parseRestore(body(ctx.request.body));
    ctx.status = 202;
    ctx.body = { operation: queueRestore(operations, ctx.params.id!, ctx.params.filename!, request.preRestore) };
  });
  router.post('/api/v1/apps/:id/migrations', idempotent, (ctx) => {
    const request = parseMigration(body(ctx.request.body));
    ctx.status = 202;
    ctx.body = { operation: queueMigration(operations, ctx.params.id!, request.ref) };
  });
  return router;
}
