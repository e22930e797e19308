/**
 * Cron routes: trigger, pause, resume and schedule of an app's periodic process.
 */
import Router from '@koa/router';
import { compileValidator } from '../../../domain/json-schema.js';
import type { CronService } from '../../../controllers/cron/cron-service.js';
import type { IdempotencyKeys } from '../../../controllers/operations/index.js';
import { idempotency } from '../../http/idempotency.js';

/** Body of `POST /api/apps/{id}/cron/trigger|pause|resume`. */
export const actionSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    process: {
      type: 'string',
      minLength: 1,
      maxLength: 63,
      description: 'the scheduled process; optional when the app has one',
    },
    by: { type: 'string', minLength: 1, maxLength: 200, description: 'operator name recorded in the event' },
  },
} as const;
const parseAction = compileValidator<{ process?: string; by?: string }>(actionSchema, 'cron request');
export const parseSchedule = compileValidator<{ schedule: string | null; process?: string; by?: string }>(
  {
    type: 'object',
    required: ['schedule'],
    additionalProperties: false,
    properties: {
      ...actionSchema.properties,
      schedule: {
        type: ['string', 'null'],
        minLength: 1,
        maxLength: 200,
        description: 'cron expression; null returns to the spec schedule',
      },
    },
  },
  'schedule request',
);

/** `POST /api/apps/{id}/cron/trigger|pause|resume`, `PUT /api/apps/{id}/cron/schedule`. */
export function cronRoutes(service: CronService, keys: IdempotencyKeys): Router {
  const router = new Router();
  const idempotent = idempotency({ keys });
  const body = (raw: unknown) => (raw === undefined || raw === null ? {} : raw);
  router.post('/api/apps/:id/cron/trigger', idempotent, async (ctx) => {
    ctx.status = 202;
    ctx.body = await service.trigger(ctx.params.id!, parseAction(body(ctx.request.body)));
  });
  router.post('/api/apps/:id/cron/pause', idempotent, async (ctx) => {
    ctx.body = await service.setPaused(ctx.params.id!, true, parseAction(body(ctx.request.body)));
  });
  router.post('/api/apps/:id/cron/resume', idempotent, async (ctx) => {
    ctx.body = await service.setPaused(ctx.params.id!, false, parseAction(body(ctx.request.body)));
  });
  router.put('/api/apps/:id/cron/schedule', idempotent, async (ctx) => {
    ctx.body = await service.updateSchedule(ctx.params.id!, parseSchedule(body(ctx.request.body)));
  });
  return router;
}
