/**
 * The knowledge store's admin listener (port 7702): health, Prometheus metrics and the admin dashboard page.
 */
import Koa from 'koa';
import Router from '@koa/router';
import type { Registry } from 'prom-client';
import type { LoggerPort as Logger } from '../../domain/logger.js';
import { errorMiddleware } from '../http/error-middleware.js';
import { requestContext } from '../http/request-context.js';
import { jsonBodyParser } from '../http/body-parser.js';
import { webPages } from '../http/web-pages.js';

export interface AdminHealthOptions {
  readonly registry: Registry;
  readonly healthy: () => boolean;
}

export interface AdminAppOptions {
  readonly logger: Logger;
  readonly bodyLimitBytes: number;
  readonly before?: readonly Koa.Middleware[];
  /** The admin routers, {@link adminHealthRoutes} among them. */
  readonly routers: readonly Router[];
  /** The built admin dashboard (`dist/web/knowledge-admin`), served at `/` and `/ui/...`: it holds no data. */
  readonly webRoot?: string;
}

/** The admin listener's own routes: `GET /healthz` and `GET /metrics` (Prometheus text). */
export function adminHealthRoutes(options: AdminHealthOptions): Router {
  const router = new Router();
  router.get('/healthz', (ctx) => {
    const ok = options.healthy();
    ctx.status = ok ? 200 : 503;
    ctx.body = { status: ok ? 'ok' : 'unhealthy' };
  });
  router.get('/metrics', async (ctx) => {
    ctx.type = options.registry.contentType;
    ctx.body = await options.registry.metrics();
  });
  return router;
}

/** Builds the admin app: the dashboard page, then the admin routers. */
export function createAdminApp(options: AdminAppOptions): Koa {
  const app = new Koa();
  app.silent = true;
  app.use(requestContext(options.logger, { quietPaths: ['/healthz', '/metrics'] }));
  app.use(errorMiddleware(options.logger));
  if (options.webRoot !== undefined) app.use(webPages({ root: options.webRoot }));
  for (const middleware of options.before ?? []) app.use(middleware);
  app.use(jsonBodyParser(options.bodyLimitBytes));
  for (const router of options.routers) {
    app.use(router.routes());
    app.use(router.allowedMethods({ throw: true }));
  }
  return app;
}
