/**
 * Deploy routes: queue deploys, preflights, rollbacks, canary promotion and deploy-group deploys
 * (202 with the saga id and operation), and read deployments, their steps and sagas.
 */
import Router from '@koa/router';
import type { Middleware } from 'koa';
import { compileValidator } from '../../../domain/json-schema.js';
import { ValidationError } from '../../../domain/errors.js';
import { wholeNumberQuery } from '../../http/whole-number-query.js';
import type { DeployService } from '../../../controllers/pipeline/index.js';

/** Body of `POST /api/apps/{id}/deploy`, `/preflight` and `/api/deploy-groups/{name}/deploy`. */
export const DEPLOY_REQUEST_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: { ref: { type: 'string', minLength: 1, maxLength: 200 } },
} as const;
/** Body of `POST /api/apps/{id}/rollback`. */
export const ROLLBACK_REQUEST_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    regions: {
      type: 'array',
      minItems: 1,
      maxItems: 64,
      uniqueItems: true,
      items: { type: 'string', pattern: '^[a-z0-9][a-z0-9-]{0,62}$' },
    },
  },
} as const;
const refBody = compileValidator<{ ref?: string }>(DEPLOY_REQUEST_SCHEMA, 'deploy request');
const rollbackBody = compileValidator<{ regions?: string[] }>(ROLLBACK_REQUEST_SCHEMA, 'rollback request');
/** The body of `POST /api/apps/{id}/canary/promote`: empty. */
export const CANARY_PROMOTE_SCHEMA = { type: 'object', additionalProperties: false, properties: {} } as const;
const emptyBody = compileValidator<Record<string, never>>(CANARY_PROMOTE_SCHEMA, 'request body');

function body(raw: unknown): unknown {
  // An absent body means "no options"; a YAML or text body is not accepted here.
  if (
    raw === undefined ||
    raw === null ||
    (typeof raw === 'object' && !Array.isArray(raw) && Object.keys(raw).length === 0)
  )
    return {};
  if (typeof raw !== 'object' || Array.isArray(raw))
    throw new ValidationError('request body: must be a JSON object', { code: 'invalid_request' });
  return raw;
}

const DEPLOYMENT_KINDS = ['deploy', 'preflight', 'rollback'] as const;
const DEPLOYMENT_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'rolled_back', 'cancelled'] as const;

/** The deploy routes; `idempotent` wraps every mutation. */
export function deployRoutes(service: DeployService, idempotent: Middleware): Router {
  const router = new Router();
  router.post('/api/apps/:id/deploy', idempotent, (ctx) => {
    const input = refBody(body(ctx.request.body));
    ctx.status = 202;
    ctx.body = service.deploy(ctx.params.id!, { ...(input.ref !== undefined ? { ref: input.ref } : {}) });
  });
  router.post('/api/apps/:id/preflight', idempotent, (ctx) => {
    const input = refBody(body(ctx.request.body));
    ctx.status = 202;
    ctx.body = service.preflight(ctx.params.id!, { ...(input.ref !== undefined ? { ref: input.ref } : {}) });
  });
  router.post('/api/apps/:id/rollback', idempotent, (ctx) => {
    const input = rollbackBody(body(ctx.request.body));
    ctx.status = 202;
    ctx.body = service.rollback(ctx.params.id!, { ...(input.regions !== undefined ? { regions: input.regions } : {}) });
  });
  router.post('/api/apps/:id/canary/promote', idempotent, async (ctx) => {
    emptyBody(body(ctx.request.body));
    ctx.body = await service.promoteCanaries(ctx.params.id!);
  });
  router.post('/api/deploy-groups/:name/deploy', idempotent, (ctx) => {
    const input = refBody(body(ctx.request.body));
    ctx.status = 202;
    ctx.body = service.deployGroup(ctx.params.name!, { ...(input.ref !== undefined ? { ref: input.ref } : {}) });
  });
  router.get('/api/v1/deployments', (ctx) => {
    const { app, kind, status } = ctx.query;
    if (kind !== undefined && !DEPLOYMENT_KINDS.includes(kind as never))
      throw new ValidationError(`kind: must be one of ${DEPLOYMENT_KINDS.join(', ')}`, { code: 'invalid_query' });
    if (status !== undefined && !DEPLOYMENT_STATUSES.includes(status as never))
      throw new ValidationError(`status: must be one of ${DEPLOYMENT_STATUSES.join(', ')}`, { code: 'invalid_query' });
    if (app !== undefined && typeof app !== 'string')
      throw new ValidationError('app: give it once', { code: 'invalid_query' });
    ctx.body = {
      deployments: service.list({
        ...(typeof app === 'string' ? { app } : {}),
        ...(kind !== undefined ? { kind: kind as (typeof DEPLOYMENT_KINDS)[number] } : {}),
        ...(status !== undefined ? { status: status as (typeof DEPLOYMENT_STATUSES)[number] } : {}),
        limit: wholeNumberQuery(ctx.query.limit, 'limit', 50, 200),
        offset: wholeNumberQuery(ctx.query.offset, 'offset', 0, 1_000_000),
      }),
    };
  });
  router.get('/api/v1/deployments/:id/steps', (ctx) => {
    ctx.body = service.steps(ctx.params.id!);
  });
  router.get('/api/saga/:sagaId', (ctx) => {
    ctx.body = service.saga(ctx.params.sagaId!);
  });
  return router;
}
