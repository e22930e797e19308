/**
 * The one error-mapping middleware each Koa app installs first.
 *
 * Domain errors become their status with `{ error: { code, message, details } }`; errors raised by
 * Koa or the body parser with an exposable 4xx status keep that status; anything else is a 500 with
 * a generic message, logged with the request id that the response also carries.
 */
import type { Context, Middleware, Next } from 'koa';
import { isDomainError } from '../../domain/errors.js';
import type { LoggerPort as Logger } from '../../domain/logger.js';

/** The JSON body of every error response. */
export interface ErrorBody {
  readonly error: {
    readonly code: string;
    readonly message: string;
    readonly details: Record<string, unknown>;
  };
}

interface HttpLikeError {
  status?: number;
  statusCode?: number;
  expose?: boolean;
  type?: string;
  name?: string;
  message?: string;
}

const HTTP_ERROR_CODES: Record<number, string> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  408: 'request_timeout',
  409: 'conflict',
  411: 'length_required',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  422: 'unprocessable',
  429: 'too_many_requests',
};

/** Maps a thrown value to a status, body and headers. Exported for GraphQL error formatting. */
export function errorResponse(error: unknown): { status: number; body: ErrorBody; headers: Record<string, string> } {
  if (isDomainError(error)) {
    return {
      status: error.status,
      body: { error: { code: error.code, message: error.message, details: error.details } },
      headers: error.headers,
    };
  }
  const http = (typeof error === 'object' && error !== null ? error : {}) as HttpLikeError;
  const status = http.status ?? http.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    // co-body reports malformed JSON as a SyntaxError with status 400.
    const badJson = status === 400 && (http.type === 'entity.parse.failed' || http.name === 'SyntaxError');
    const code = badJson ? 'invalid_json' : (HTTP_ERROR_CODES[status] ?? 'bad_request');
    const message = badJson ? `request body is not valid JSON: ${http.message ?? ''}`.trim() : (http.message ?? code);
    return { status, body: { error: { code, message, details: {} } }, headers: {} };
  }
  return {
    status: 500,
    body: { error: { code: 'internal_error', message: 'internal server error', details: {} } },
    headers: {},
  };
}

/** Catches everything below it and writes the error body. */
export function errorMiddleware(logger: Logger): Middleware {
  return async (ctx: Context, next: Next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        ctx.status = 404;
        ctx.body = { error: { code: 'route_not_found', message: `no route for ${ctx.method} ${ctx.path}`, details: {} } } satisfies ErrorBody;
      }
    } catch (error) {
      const { status, body, headers } = errorResponse(error);
      const requestId = String(ctx.state.requestId ?? '');
      if (status >= 500) {
        logger.error({ err: error, requestId, method: ctx.method, path: ctx.path }, 'unexpected error');
        body.error.details.requestId = requestId;
      }
      ctx.status = status;
      ctx.set(headers);
      ctx.body = body;
    }
  };
}
