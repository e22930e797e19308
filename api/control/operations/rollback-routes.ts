/**
 * The versioned rollback route `POST /api/v1/apps/{id}/rollback`: the legacy route's request and
 * answer (202 with the saga, deployment and operation), under the versioned conventions: an
 * Idempotency-Key is required, and a retry with it answers the original response.
 */
import Router from '@koa/router';
import { compileValidator } from '../../../domain/json-schema.js';
import type { DeployService } from '../../../controllers/pipeline/index.js';
import type { IdempotencyKeys } from '../../../controllers/operations/index.js';
import { idempotency } from '../../http/idempotency.js';
import { ROLLBACK_REQUEST_SCHEMA } from './deploy-routes.js';

const parseRollback = compileValidator<{ regions?: string[] }>(ROLLBACK_REQUEST_SCHEMA, 'rollback request');

/** The versioned rollback route; the Idempotency-Key header is required. */
export function versionedRollbackRoutes(service: DeployService, keys: IdempotencyKeys): Router {
  const router = new Router();
  router.post('/api/v1/apps/:id/rollback', idempotency({ keys, required: true }), (ctx) => {
    const raw: unknown = ctx.request.body;
    const input = parseRollback(raw === undefined || raw === null ? {} : raw);
    ctx.status = 202;
    ctx.body = service.rollback(ctx.params.id!, input.regions === undefined ? {} : { regions: input.regions });
  });
  return router;
}
