/**
 * The knowledge store's REST app (port 7701).
 */
import Koa from 'koa';
import type Router from '@koa/router';
import type { LoggerPort as Logger } from '../../domain/logger.js';
import { errorMiddleware } from '../http/error-middleware.js';
import { requestContext } from '../http/request-context.js';
import { jsonBodyParser } from '../http/body-parser.js';

export interface KnowledgeAppOptions {
  readonly logger: Logger;
  readonly bodyLimitBytes: number;
  /** Middleware run before the routers (authentication). */
  readonly before?: readonly Koa.Middleware[];
  readonly routers: readonly Router[];
}

/** Builds the REST app from its routers. */
export function createKnowledgeApp(options: KnowledgeAppOptions): Koa {
  const app = new Koa();
  app.silent = true;
  app.use(requestContext(options.logger, { quietPaths: ['/v1/ping'] }));
  app.use(errorMiddleware(options.logger));
  for (const middleware of options.before ?? []) app.use(middleware);
  app.use(jsonBodyParser(options.bodyLimitBytes));
  for (const router of options.routers) {
    app.use(router.routes());
    app.use(router.allowedMethods({ throw: true }));
  }
  return app;
}
