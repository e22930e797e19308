/**
 * Control plane authentication: `Authorization: Bearer <SVC_API_TOKEN>`.
 *
 * Public routes never need it. Metrics and the service manifest need it only when
 * `SVC_REQUIRE_EXPLICIT_AUTH=true`. Without a configured token the API runs open (development only;
 * the production profile refuses to start without one) and says so at start.
 */
import type { Context, Middleware, Next } from 'koa';
import { UnauthorizedError } from '../../domain/errors.js';
import { bearerToken, secretEquals, sha256Hex } from '../http/bearer.js';

export interface ControlAuthOptions {
  readonly apiToken: string | undefined;
  readonly requireExplicitAuth: boolean;
}

const PUBLIC = [/^\/api\/health$/, /^\/api\/version$/, /^\/api\/webhooks\//, /^\/api\/access\/edge\/logpush$/];
const EXPLICIT_ONLY = [/^\/metrics$/, /^\/api\/metrics$/, /^\/api\/services\/manifest$/, /^\/api\/v1\/services\/manifest$/];

/** True when `path` never needs a bearer token. */
export function isPublicPath(path: string): boolean {
  return PUBLIC.some((re) => re.test(path));
}

/** Rejects unauthenticated requests to protected routes with 401. */
export function controlAuth(options: ControlAuthOptions): Middleware {
  const tokenHash = options.apiToken === undefined ? undefined : sha256Hex(options.apiToken);
  return async (ctx: Context, next: Next) => {
    ctx.state.principal = undefined;
    const given = bearerToken(ctx);
    if (tokenHash !== undefined && given !== undefined && secretEquals(given, tokenHash)) {
      ctx.state.principal = { kind: 'control-token' };
    }
    const needsAuth =
      (tokenHash !== undefined || options.requireExplicitAuth) &&
      !isPublicPath(ctx.path) &&
      (!EXPLICIT_ONLY.some((re) => re.test(ctx.path)) || options.requireExplicitAuth);
    if (needsAuth && ctx.state.principal === undefined) {
      ctx.set('WWW-Authenticate', 'Bearer');
      throw new UnauthorizedError(given === undefined ? 'this endpoint needs Authorization: Bearer <token>' : 'the bearer token is not valid', {
        code: given === undefined ? 'missing_credentials' : 'invalid_credentials',
      });
    }
    await next();
  };
}
