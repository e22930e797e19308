/**
 * The platform self-upgrade lane's routes: queue a preflight, an upgrade or a smoke check for
 * the host agent (202 with the operation), and read one lane operation with its steps.
 */
import Router from '@koa/router';
import type { Middleware } from 'koa';
import { compileValidator } from '../../../domain/json-schema.js';
import { ValidationError } from '../../../domain/errors.js';
import type { PlatformLaneService } from '../../../controllers/platform/index.js';
import type { Capability } from '../server/meta-routes.js';

/** Capability entry of the lane. */
export const PLATFORM_LANE_CAPABILITY: Capability = {
  name: 'platform-lane',
  routes: [
    'POST /api/platform/preflight',
    'POST /api/platform/upgrade',
    'POST /api/platform/smoke',
    'GET /api/platform/operations/{id}',
  ],
  description:
    'Platform self-upgrade: a host agent stages a release, boots a candidate API, drains, promotes the current link, restarts only the API and checks it, rolling back when the check fails.',
};

/** Body of `POST /api/platform/upgrade` and `/preflight`. */
export const PLATFORM_LANE_REQUEST_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['source'],
  properties: {
    source: { type: 'string', minLength: 1, maxLength: 1000 },
    label: { type: 'string', pattern: '^[A-Za-z0-9._+-]{1,100}$' },
    drainMode: { enum: ['fail', 'wait', 'force'] },
  },
} as const;
const laneBody = compileValidator<{ source: string; label?: string; drainMode?: string }>(
  PLATFORM_LANE_REQUEST_SCHEMA,
  'platform lane request',
);
export const emptyBody = compileValidator<Record<string, never>>(
  { type: 'object', additionalProperties: false, properties: {} },
  'request body',
);

function body(raw: unknown): unknown {
  if (raw === undefined || raw === null) return {};
  if (typeof raw !== 'object' || Array.isArray(raw))
    throw new ValidationError('request body: must be a JSON object', { code: 'invalid_request' });
  return raw;
}

/** The routes; `idempotent` wraps every mutation. */
export function platformLaneRoutes(service: PlatformLaneService, idempotent: Middleware): Router {
  const router = new Router();
  router.post('/api/platform/upgrade', idempotent, (ctx) => {
    const input = laneBody(body(ctx.request.body));
    ctx.status = 202;
    ctx.body = service.queue('platform.upgrade', input);
  });
  router.post('/api/platform/preflight', idempotent, (ctx) => {
    const input = laneBody(body(ctx.request.body));
    if (input.drainMode !== undefined)
      throw new ValidationError('drainMode applies to upgrades only', { code: 'invalid_drain_mode' });
    ctx.status = 202;
    ctx.body = service.queue('platform.preflight', input);
  });
  router.post('/api/platform/smoke', idempotent, (ctx) => {
    emptyBody(body(ctx.request.body));
    ctx.status = 202;
    ctx.body = service.queue('platform.smoke', {});
  });
  router.get('/api/platform/operations/:id', (ctx) => {
    ctx.body = service.get(ctx.params.id!);
  });
  return router;
}
