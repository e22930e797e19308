/**
 * Idempotency-Key for versioned mutations, as Koa middleware any router can apply:
 *
 * - the same key with the same request (method, path, canonical JSON body) answers the original
 *   response again, with `Idempotent-Replayed: true`;
 * - the same key with a different request is refused: 422 `idempotency_key_reused`;
 * - a second request while the first with the key is still in flight: 409 `idempotency_request_in_flight`;
 * - a request that fails with an error keeps nothing, so it can be retried with the same key.
 *
 * Keys are kept at least 24 hours (see docs/adr/0081-idempotency-keys.md).
 */
import type { Context, Middleware, Next } from 'koa';
import { ConflictError, UnprocessableError, ValidationError } from '../../domain/errors.js';
import { IDEMPOTENCY_KEY_PATTERN, requestFingerprint } from '../../domain/pipeline/index.js';
import type { IdempotencyKeys } from '../../controllers/operations/index.js';

/** Options of the middleware. */
export interface IdempotencyOptions {
  readonly keys: IdempotencyKeys;
  /** Refuse requests without the header (400 `idempotency_key_required`). @default false */
  readonly required?: boolean;
}

/** The header name. */
export const IDEMPOTENCY_HEADER = 'idempotency-key';

/** Middleware applying Idempotency-Key semantics to the routes it wraps. */
export function idempotency(options: IdempotencyOptions): Middleware {
  return async (ctx: Context, next: Next) => {
    const key = ctx.get(IDEMPOTENCY_HEADER);
    if (key === '') {
      if (options.required)
        throw new ValidationError('Idempotency-Key: this mutation needs an Idempotency-Key header', {
          code: 'idempotency_key_required',
        });
      await next();
      return;
    }
    if (!IDEMPOTENCY_KEY_PATTERN.test(key))
      throw new ValidationError('Idempotency-Key: must be 1-255 printable ASCII characters without spaces', {
        code: 'invalid_idempotency_key',
      });
    const requestHash = requestFingerprint(ctx.method, ctx.path, (ctx.request as { body?: unknown }).body);
    const begin = options.keys.begin({ key, requestHash, method: ctx.method, path: ctx.path });
    switch (begin.action) {
      case 'reused':
        throw new UnprocessableError('Idempotency-Key: this key was used for a different request', {
          code: 'idempotency_key_reused',
        });
      case 'in_flight':
        throw new ConflictError('Idempotency-Key: a request with this key is still being processed', {
          code: 'idempotency_request_in_flight',
          retryAfterSeconds: 1,
        });
      case 'replay':
        ctx.status = begin.response?.status ?? 200;
        ctx.body = begin.response?.body;
        ctx.set('Idempotent-Replayed', 'true');
        return;
      case 'proceed':
        break;
    }
    try {
      await next();
    } catch (error) {
      options.keys.release(key);
      throw error;
    }
    if (ctx.status >= 500) options.keys.release(key);
    else options.keys.complete(key, ctx.status, ctx.body);
  };
}
