/**
 * The knowledge store's REST app (port 7701).
 */
import Koa from 'koa';
import type Router from '@koa/router';
import type { LoggerPort as Logger } from '../../domain/logger.js';
import { errorMiddleware } from '../http/error-middleware.js';
import { requestContext } from '../http/request-context.js';
import { jsonBodyParser } from '../http/body-parser.js';
import { BATCH_BODY_LIMIT_BYTES, BATCH_PATH } from './write-batch-route.js';

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
  const bodies = jsonBodyParser(options.bodyLimitBytes);
  // The batch write route alone takes larger bodies (1,000 writes with their vectors).
  const batchBodies = jsonBodyParser(Math.max(options.bodyLimitBytes, BATCH_BODY_LIMIT_BYTES));
  app.use((ctx, next) => (BATCH_PATH.test(ctx.path) ? batchBodies(ctx, next) : bodies(ctx, next)));
  for (const router of options.routers) {
    app.use(router.routes());
    app.use(router.allowedMethods({ throw: true }));
  }
  return app;
}
