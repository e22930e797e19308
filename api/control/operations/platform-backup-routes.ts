/**
 * Platform backup routes (ADR 0173): take a backup now (written, then verified by reading it back;
 * answered with its record once verified or failed), list backups with their verification, read one.
 */
import Router from '@koa/router';
import type { Middleware } from 'koa';
import { compileValidator } from '../../../domain/json-schema.js';
import { ValidationError } from '../../../domain/errors.js';
import type { PlatformBackupService } from '../../../controllers/backup/platform-backup-service.js';
import type { Capability } from '../server/meta-routes.js';

/** Capability entry of platform backups. */
export const PLATFORM_BACKUP_CAPABILITY: Capability = {
  name: 'platform-backups',
  routes: [
    'POST /api/v1/platform/backups',
    'GET /api/v1/platform/backups',
    'GET /api/v1/platform/backups/remote',
    'GET /api/v1/platform/backups/{id}',
  ],
  description:
    'Whole-platform backups: control.db and knowledge.db copied online, the apps repository, app databases, app users and settings in one encrypted archive, each verified by a restore into a throwaway folder.',
};

/** Body of `POST /api/v1/platform/backups`. */
export const PLATFORM_BACKUP_REQUEST_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: { noSecrets: { type: 'boolean' } },
} as const;
const backupBody = compileValidator<{ noSecrets?: boolean }>(PLATFORM_BACKUP_REQUEST_SCHEMA, 'platform backup request');

function body(raw: unknown): unknown {
  if (raw === undefined || raw === null) return {};
  if (typeof raw !== 'object' || Array.isArray(raw))
    throw new ValidationError('request body: must be a JSON object', { code: 'invalid_request' });
  return raw;
}

/** The routes; `idempotent` wraps the mutation. */
export function platformBackupRoutes(service: PlatformBackupService, idempotent: Middleware): Router {
  const router = new Router();
  router.post('/api/v1/platform/backups', idempotent, async (ctx) => {
    const input = backupBody(body(ctx.request.body));
    const backup = await service.take({
      ...(input.noSecrets === undefined ? {} : { noSecrets: input.noSecrets }),
      trigger: 'api',
    });
    ctx.status = 201;
    ctx.body = { backup };
  });
  router.get('/api/v1/platform/backups', (ctx) => {
    const raw = ctx.query.limit;
    const limit = raw === undefined ? 100 : Number(raw);
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
      throw new ValidationError('limit must be an integer from 1 to 1000', { code: 'invalid_limit' });
    ctx.body = { backups: service.list(limit) };
  });
  router.get('/api/v1/platform/backups/remote', async (ctx) => {
    ctx.body = { backups: await service.listRemote() };
  });
  router.get('/api/v1/platform/backups/:id', (ctx) => {
    ctx.body = { backup: service.get(ctx.params.id!) };
  });
  return router;
}
