/**
 * Metrics routes: `GET /metrics` and `GET /api/metrics` in the text exposition format. The auth
 * middleware makes them require a principal only with SVC_REQUIRE_EXPLICIT_AUTH=true.
 */
import Router from '@koa/router';
import type { ControlMetrics } from '../../../platform/metrics/control-metrics.js';

/** Metrics routes over the control plane registry. */
export function metricsRoutes(metrics: ControlMetrics): Router {
  const router = new Router();
  for (const path of ['/metrics', '/api/metrics']) {
    router.get(path, async (ctx) => {
      const { contentType, body } = await metrics.text();
      ctx.type = contentType;
      ctx.body = body;
    });
  }
  return router;
}
