/**
 * Notification channel routes: list, create, delete, test. Tokens and user keys are accepted,
 * stored and never returned.
 */
import Router from '@koa/router';
import { compileValidator } from '../../../domain/json-schema.js';
import type { Severity } from '../../../domain/events/event-port.js';
import type { EventServices } from '../../../controllers/events/event-services.js';
import type { CreateChannelRequest } from '../../../controllers/events/notification-service.js';
import { CREATE_CHANNEL_SCHEMA } from './events-schemas.js';
import { bodyOf } from './events-routes.js';

const validateCreate = compileValidator<CreateChannelRequest & { severityFilter?: Severity[] }>(CREATE_CHANNEL_SCHEMA);

/** Channel routes. */
export function notificationsRoutes(services: EventServices): Router {
  const router = new Router();
  router.get('/api/notifications/channels', (ctx) => {
    ctx.body = { channels: services.notifications.list() };
  });
  router.post('/api/notifications/channels', (ctx) => {
    const body = validateCreate(bodyOf(ctx));
    ctx.status = 201;
    ctx.body = services.notifications.create({ ...body, severities: body.severities ?? body.severityFilter });
  });
  router.delete('/api/notifications/channels/:id', (ctx) => {
    services.notifications.remove(ctx.params.id!);
    ctx.status = 204;
  });
  router.post('/api/notifications/channels/:id/test', async (ctx) => {
    ctx.body = await services.notifications.test(ctx.params.id!);
  });
  return router;
}
