/**
 * Metrics routes: `GET /metrics` and `GET /api/metrics` in the text exposition format. The auth
 * middleware makes them require a principal only with SVC_REQUIRE_EXPLICIT_AUTH=true.
 */
import Router from '@koa/router';

/** A metric registry in the text exposition format (platform/metrics/control-metrics.ts is one). */
export interface MetricsText {
  text(): Promise<{ contentType: string; body: string }>;
}

/** Metrics routes over the control plane registry. */
export function metricsRoutes(metrics: MetricsText): Router {
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
