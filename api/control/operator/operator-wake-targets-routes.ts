/**
 * `GET /api/operator/wake-targets`: public, private and local endpoints with readiness and the wake
 * gateway URL (read-only).
 */
import Router from '@koa/router';
import type { Routing } from '../../../controllers/routing/routing.js';

/** The operator's wake targets view. */
export function operatorWakeTargetsRoutes(routing: Routing, controlUrl: () => string): Router {
  const router = new Router();
  router.get('/api/operator/wake-targets', async (ctx) => {
    const view = await routing.wakeTargets(controlUrl());
    const stats = routing.gateway.stats;
    ctx.body = {
      ...view,
      gateway: {
        scaleUps: stats.scaleUps,
        wakes: stats.wakes,
        timeouts: stats.timeouts,
        proxied: stats.proxied,
        idleScaledDown: routing.idle.scaledDown,
      },
    };
  });
  return router;
}
