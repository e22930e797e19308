/**
 * Operations routes: one operation, the active queue with the drain state, cancelling a queued operation.
 */
import Router from '@koa/router';
import type { Middleware } from 'koa';
import type { OperationsService } from '../../../controllers/operations/index.js';

/** The operations routes; `idempotent` wraps the cancel mutation. */
export function operationsRoutes(service: OperationsService, idempotent: Middleware): Router {
  const router = new Router();
  router.get('/api/v1/operations/:id', (ctx) => {
    ctx.body = service.get(ctx.params.id!);
  });
  router.get('/api/operations/active', (ctx) => {
    ctx.body = service.active();
  });
  router.post('/api/v1/operations/:id/cancel', idempotent, (ctx) => {
    ctx.body = { operation: service.cancel(ctx.params.id!) };
  });
  return router;
}
