/**
 * Admin API of the knowledge store's maintenance families (admin permission, port 7702):
 * backup and restore (docs/adr/0174), lifecycle (docs/adr/0175), the doctor's sample write
 * (docs/adr/0176) and stored ranking evaluation runs (docs/adr/0177). Thin: validate, call, serialize.
 */
import fs from 'node:fs';
import Router from '@koa/router';
import type { Context } from 'koa';
import { compileValidator } from '../../domain/json-schema.js';
import { ValidationError } from '../../domain/errors.js';
import type { KnowledgeState } from '../../knowledge/core/knowledge-state.js';
import type { BackupService } from '../../knowledge/maintenance/backup-service.js';
import {
  parseAge,
  parseRetention,
  type LifecycleRequest,
  type LifecycleService,
} from '../../knowledge/maintenance/lifecycle-service.js';
import type { DoctorSampleWrite } from '../../knowledge/maintenance/doctor-sample-write.js';
import { EVAL_LABEL_MAX, type RankingEvalSnapshots } from '../../knowledge/introspection/ranking-eval-snapshots.js';
import { RANKING_EVAL_MAX_TOP_K } from '../../knowledge/introspection/ranking-eval.js';
import { requirePermission } from './auth.js';
import { intParam, stringParam } from './query-params.js';

/** The maintenance services the admin API serves. */
export interface MaintenanceServices {
  readonly core: KnowledgeState;
  readonly backups: BackupService;
  readonly lifecycle: LifecycleService;
  readonly doctor: DoctorSampleWrite;
  readonly evalRuns: RankingEvalSnapshots;
}

const namespaceName = { type: 'string', minLength: 1, maxLength: 128 } as const;

export const validateBackupRequest = compileValidator<{ scope: 'namespace' | 'store'; namespace?: string }>(
  {
    type: 'object',
    additionalProperties: false,
    required: ['scope'],
    properties: { scope: { enum: ['namespace', 'store'] }, namespace: namespaceName },
    if: { properties: { scope: { const: 'namespace' } } },
    then: { required: ['scope', 'namespace'] },
  },
  'backup request',
);

export const validateRestoreRequest = compileValidator<{ scope: 'namespace' | 'store'; namespace?: string }>(
  {
    type: 'object',
    additionalProperties: false,
    required: ['scope'],
    properties: { scope: { enum: ['namespace', 'store'] }, namespace: namespaceName },
  },
  'restore request',
);

export const validateLifecycleRequest = compileValidator<{
  retention?: Record<string, string>;
  compaction_horizon?: string;
  namespace?: string;
}>(
  {
    type: 'object',
    additionalProperties: false,
    properties: {
      retention: { type: 'object', maxProperties: 8, additionalProperties: { type: 'string', maxLength: 16 } },
      compaction_horizon: { type: 'string', minLength: 1, maxLength: 16 },
      namespace: namespaceName,
    },
  },
  'lifecycle request',
);

export const validateEvalRun = compileValidator<{ top_k?: number; label?: string }>(
  {
    type: 'object',
    additionalProperties: false,
    properties: {
      top_k: { type: 'integer', minimum: 1, maximum: RANKING_EVAL_MAX_TOP_K },
      label: { type: 'string', minLength: 1, maxLength: EVAL_LABEL_MAX },
    },
  },
  'ranking evaluation run',
);

const SQLITE_TYPES = ['application/vnd.sqlite3', 'application/x-sqlite3', 'application/octet-stream'];

/** A lifecycle request from its JSON body: rules given replace the settings for this call. */
function lifecycleRequest(ctx: Context, core: KnowledgeState, tenant: string): LifecycleRequest {
  const body = validateLifecycleRequest(ctx.request.body ?? {});
  return {
    ...(body.retention !== undefined ? { retention: parseRetention('retention', body.retention) } : {}),
    ...(body.compaction_horizon !== undefined
      ? { compactionHorizonMs: parseAge('compaction_horizon', body.compaction_horizon, true) }
      : {}),
    ...(body.namespace !== undefined ? { nsId: core.namespace(tenant, body.namespace).id } : {}),
  };
}

/** `/admin/api/backups`, `/admin/api/lifecycle`, `/admin/api/doctor` and `/admin/api/ranking-eval/snapshots`. */
export function maintenanceRoutes(services: MaintenanceServices): Router {
  const router = new Router({ prefix: '/admin/api' });
  const { backups, lifecycle, doctor, evalRuns, core } = services;

  router.post('/backups', async (ctx) => {
    const { tenant } = requirePermission(ctx, 'admin');
    const type = ctx.request.type;
    if (SQLITE_TYPES.includes(type)) {
      ctx.status = 201;
      ctx.body = await backups.upload(tenant, ctx.req);
      return;
    }
    if (type !== '' && type !== 'application/json')
      throw new ValidationError(
        `content type ${type.slice(0, 80)}: send JSON to take a backup, or the backup file as application/vnd.sqlite3 to upload one`,
        { code: 'unsupported_media_type' },
      );
    const body = validateBackupRequest(ctx.request.body ?? {});
    ctx.status = 201;
    ctx.body = await backups.create(tenant, body);
  });

  router.get('/backups', (ctx) => {
    const { tenant } = requirePermission(ctx, 'admin');
    ctx.body = { backups: backups.list(tenant) };
  });

  router.get('/backups/:id', (ctx) => {
    const { tenant } = requirePermission(ctx, 'admin');
    ctx.body = backups.get(tenant, ctx.params.id!);
  });

  router.get('/backups/:id/file', (ctx) => {
    const { tenant } = requirePermission(ctx, 'admin');
    const { file, record } = backups.fileOf(tenant, ctx.params.id!);
    ctx.type = 'application/vnd.sqlite3';
    ctx.set('content-disposition', `attachment; filename="${record.id}.sqlite"`);
    ctx.set('x-content-sha256', record.sha256);
    ctx.length = record.bytes;
    ctx.body = fs.createReadStream(file);
  });

  router.delete('/backups/:id', (ctx) => {
    const { tenant } = requirePermission(ctx, 'admin');
    backups.remove(tenant, ctx.params.id!);
    ctx.status = 204;
  });

  router.post('/backups/:id/restore', async (ctx) => {
    const { tenant } = requirePermission(ctx, 'admin');
    const body = validateRestoreRequest(ctx.request.body ?? {});
    ctx.body = await backups.restore(tenant, ctx.params.id!, body);
  });

  router.get('/lifecycle', (ctx) => {
    requirePermission(ctx, 'admin');
    ctx.body = lifecycle.status();
  });

  router.post('/lifecycle/preview', (ctx) => {
    const { tenant } = requirePermission(ctx, 'admin');
    ctx.body = lifecycle.preview(lifecycleRequest(ctx, core, tenant));
  });

  router.post('/lifecycle/run', async (ctx) => {
    const { tenant } = requirePermission(ctx, 'admin');
    ctx.body = await lifecycle.run(lifecycleRequest(ctx, core, tenant));
  });

  router.post('/lifecycle/vacuum', (ctx) => {
    requirePermission(ctx, 'admin');
    ctx.body = lifecycle.vacuum();
  });

  router.post('/doctor/sample-write', async (ctx) => {
    const { tenant } = requirePermission(ctx, 'admin');
    ctx.body = await doctor.run(tenant);
  });

  router.post('/ranking-eval/snapshots', async (ctx) => {
    requirePermission(ctx, 'admin');
    const body = validateEvalRun(ctx.request.body ?? {});
    ctx.status = 201;
    ctx.body = await evalRuns.record(body.top_k ?? 5, body.label);
  });

  router.get('/ranking-eval/snapshots', (ctx) => {
    requirePermission(ctx, 'admin');
    ctx.body = evalRuns.list(intParam(ctx, 'limit', 50, 1000, 1), intParam(ctx, 'offset', 0, 1e9));
  });

  // Before `/:id`, so "compare" is not read as a run id.
  router.get('/ranking-eval/snapshots/compare', (ctx) => {
    requirePermission(ctx, 'admin');
    ctx.body = evalRuns.compare(stringParam(ctx, 'from'), stringParam(ctx, 'to'));
  });

  router.get('/ranking-eval/snapshots/:id', (ctx) => {
    requirePermission(ctx, 'admin');
    ctx.body = evalRuns.get(ctx.params.id!);
  });

  return router;
}
