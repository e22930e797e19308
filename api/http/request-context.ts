/**
 * Request id and access logging: every request gets an id (a caller's `X-Request-Id` is kept when
 * it is sane), echoed in the response, and one log line when it finishes.
 */
import { randomUUID } from 'node:crypto';
import type { Context, Middleware, Next } from 'koa';
import type { LoggerPort as Logger } from '../../domain/logger.js';

const SANE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The request's id: the caller's `X-Request-Id` when it is sane (`''` when absent), else a new UUID. */
export function requestIdFor(incoming: string): string {
  return SANE_ID.test(incoming) ? incoming : randomUUID();
}

/** Assigns `ctx.state.requestId` and logs method, path, status and duration. */
export function requestContext(logger: Logger, options: { quietPaths?: readonly string[] } = {}): Middleware {
  const quiet = new Set(options.quietPaths ?? []);
  return async (ctx: Context, next: Next) => {
    const requestId = requestIdFor(ctx.get('x-request-id'));
    ctx.state.requestId = requestId;
    ctx.set('X-Request-Id', requestId);
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      if (!quiet.has(ctx.path)) {
        logger.info(
          { requestId, method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round(ms * 100) / 100 },
          'request',
        );
      }
    }
  };
}
