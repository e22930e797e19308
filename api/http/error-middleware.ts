/**
 * The edge's one error table, and the error-mapping middleware each Koa app installs first.
 *
 * Domain errors carry no HTTP: {@link STATUS_OF_KIND} gives each kind its status and `retryAfterSeconds`
 * becomes `Retry-After`; the body is `{ error: { code, message, details } }`. Errors raised by Koa or
 * the body parser with an exposable 4xx status keep that status; anything else is a 500 with a generic
 * message, logged with the request id that the response also carries. GraphQL and the wake gateway's
 * raw HTTP answers use the same table through {@link errorResponse} and {@link domainErrorResponse}.
 */
import type { Context, Middleware, Next } from 'koa';
import { isDomainError, type DomainError, type ErrorKind } from '../../domain/errors.js';
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

/** The HTTP status of each kind of domain error (ADR 0002). */
export const STATUS_OF_KIND: Readonly<Record<ErrorKind, number>> = {
  validation: 400,
  unauthorized: 401,
  forbidden: 403,
  notFound: 404,
  conflict: 409,
  payloadTooLarge: 413,
  unprocessable: 422,
  tooManyRequests: 429,
  unavailable: 503,
  timeout: 504,
};

/** A status, an error body and the headers that go with it. */
export interface ErrorResponse {
  readonly status: number;
  readonly body: ErrorBody;
  readonly headers: Record<string, string>;
}

/** The response of a domain error: its kind's status, its body, and `Retry-After` when it has one. */
export function domainErrorResponse(error: DomainError): ErrorResponse {
  return {
    status: STATUS_OF_KIND[error.kind],
    body: { error: { code: error.code, message: error.message, details: error.details } },
    headers: error.retryAfterSeconds === undefined ? {} : { 'Retry-After': String(error.retryAfterSeconds) },
  };
}

/** Maps a thrown value to a status, body and headers. Exported for GraphQL error formatting. */
export function errorResponse(error: unknown): ErrorResponse {
  if (isDomainError(error)) return domainErrorResponse(error);
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
        ctx.body = {
          error: { code: 'route_not_found', message: `no route for ${ctx.method} ${ctx.path}`, details: {} },
        } satisfies ErrorBody;
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
