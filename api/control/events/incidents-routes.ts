/**
 * Incident routes: `POST /api/incidents/action` (acknowledge, snooze, open, resolve a group).
 */
import Router from '@koa/router';
import { compileValidator } from '../../../domain/json-schema.js';
import type { EventServices } from '../../../controllers/events/event-services.js';
import type { IncidentActionRequest } from '../../../controllers/events/incident-actions.js';
import { INCIDENT_ACTION_SCHEMA } from './events-schemas.js';
import { bodyOf } from './events-routes.js';

const validateAction = compileValidator<IncidentActionRequest>(INCIDENT_ACTION_SCHEMA);

/** Incident action route. */
export function incidentsRoutes(services: EventServices): Router {
  const router = new Router();
  router.post('/api/incidents/action', async (ctx) => {
    ctx.body = await services.events.incidentAction(validateAction(bodyOf(ctx)));
  });
  return router;
}
