/**
 * The control plane's Koa app (port 8800): middleware order, then the routers each capability adds.
 */
import Koa, { type Middleware } from 'koa';
import type Router from '@koa/router';
import type { LoggerPort as Logger } from '../../../domain/logger.js';
import { errorMiddleware } from '../../http/error-middleware.js';
import { requestContext } from '../../http/request-context.js';
import { jsonBodyParser } from '../../http/body-parser.js';
import { controlAuth, type EdgeIdentityCheck } from '../auth/auth.js';
import { webPages } from '../../http/web-pages.js';
import type { Principal } from '../../../domain/auth/index.js';
import { SCRAPE_PATHS, type AccessRecorder } from '../../../domain/observability/recent-access.js';

export interface ControlAppOptions {
  readonly logger: Logger;
  readonly bodyLimitBytes: number;
  readonly apiToken: string | undefined;
  readonly requireExplicitAuth: boolean;
  readonly routers: readonly Router[];
  /** Resolves issued scoped tokens. */
  readonly scopedToken?: (secret: string) => Principal | undefined;
  /** Validates a request's edge access identity (when edge access is configured). */
  readonly edgeIdentity?: EdgeIdentityCheck;
  /** The built operator console (`dist/web/console`), served at `/` and `/ui/...` before authentication: it holds no data. */
  readonly webRoot?: string;
  /** Middleware run before authentication, so its headers are on every answer, refusals included. */
  readonly beforeAuth?: readonly Middleware[];
  /** Middleware run after authentication and body parsing, before the routers (audit receipts). */
  readonly afterAuth?: readonly Middleware[];
  /** Receives the final status of every answered request except scrapes of `/metrics` (the recent access ring). */
  readonly access?: AccessRecorder;
}

/** Builds the control plane app from its routers. */
export function createControlApp(options: ControlAppOptions): Koa {
  const app = new Koa();
  app.proxy = false;
  app.silent = true;
  const access = options.access;
  if (access !== undefined) {
    const scrapes = new Set(SCRAPE_PATHS);
    // Outermost, so it sees the status the error middleware chose.
    app.use(async (ctx, next) => {
      try {
        await next();
      } finally {
        if (!scrapes.has(ctx.path)) access.record(ctx.status);
      }
    });
  }
  app.use(requestContext(options.logger, { quietPaths: ['/api/health', '/metrics', '/api/metrics'] }));
  app.use(errorMiddleware(options.logger));
  if (options.webRoot !== undefined) app.use(webPages({ root: options.webRoot }));
  for (const middleware of options.beforeAuth ?? []) app.use(middleware);
  app.use(
    controlAuth({
      apiToken: options.apiToken,
      requireExplicitAuth: options.requireExplicitAuth,
      ...(options.scopedToken ? { scopedToken: options.scopedToken } : {}),
      ...(options.edgeIdentity ? { edgeIdentity: options.edgeIdentity } : {}),
    }),
  );
  app.use(jsonBodyParser(options.bodyLimitBytes));
  for (const middleware of options.afterAuth ?? []) app.use(middleware);
  for (const router of options.routers) {
    app.use(router.routes());
    app.use(router.allowedMethods({ throw: true }));
  }
  return app;
}
