/**
 * Control plane authentication and authorization.
 *
 * Callers authenticate with `Authorization: Bearer <token>`: the static control token
 * (SVC_API_TOKEN) or an issued scoped access token (`svc_pat_...`), or with a validated edge
 * access identity (`Edge-Access-Jwt-Assertion`, when the edge access settings are configured).
 * The control token and an edge identity are administrators; a scoped token reaches only the
 * routes its scopes name (`metrics:read`: `/metrics`, `/api/metrics`, the service manifest;
 * `apps:exec`: the exec routes; the event stream and the exec socket check their scope themselves).
 *
 * Public routes never need a caller. Metrics and the service manifest need one only when
 * `SVC_REQUIRE_EXPLICIT_AUTH=true`. Without any configured mechanism the API runs open
 * (development only; the production profile refuses to start without a token) and says so.
 */
import type { Context, Middleware, Next } from 'koa';
import { grants, isAdministrator, Scope, type Principal } from '../../../domain/auth/index.js';
import { ForbiddenError, UnauthorizedError } from '../../../domain/errors.js';
import { bearerToken, secretEquals, sha256Hex } from '../../http/bearer.js';
import { EDGE_ASSERTION_HEADERS, type EdgeIdentity } from '../../../domain/auth/edge-identity.js';

export interface ControlAuthOptions {
  readonly apiToken: string | undefined;
  readonly requireExplicitAuth: boolean;
  /** Resolves an issued scoped token's secret. */
  readonly scopedToken?: (secret: string) => Principal | undefined;
  /** Validates the edge access identity of a request (undefined when not configured or absent). */
  readonly edgeIdentity?: EdgeIdentityCheck;
}

/** Request headers as Node gives them (lower-case names). */
export type RequestHeaders = Readonly<Record<string, string | string[] | undefined>>;

/** Validates the edge access identity in a request's headers: an administrator principal, or undefined when absent or invalid. */
export type EdgeIdentityCheck = (headers: RequestHeaders) => Promise<Principal | undefined>;

const PUBLIC = [
  /^\/api\/health$/,
  /^\/api\/version$/,
  /^\/api\/webhooks\//,
  /^\/api\/access\/edge\/logpush$/,
  /^\/schemas\/[^/]*$/,
  /^\/api\/openapi\.json$/,
  // Restricted mode: the workflow identity in the body is the credential of the exchange; a device
  // enrollment request grants nothing until an administrator approves it.
  /^\/api\/v1\/fleet\/external-admission\/token$/,
  /^\/api\/v1\/fleet\/devices\/enroll(\/[^/]+)?$/,
];
/** External admission routes: only the `fleet:external-admission` scope reaches them (no administrator substitutes). */
const ADMISSION = /^\/api\/v1\/apps\/[^/]+\/external-deployments(\/[^/]+)*$/;
/** Exec sessions and compatibility exec: scope `apps:exec` (administrators hold it too). */
const EXEC = /^\/api\/(v1\/exec-sessions(\/.*)?|apps\/[^/]+\/exec)$/;
/** App logs: `logs:read` reaches them. */
const LOGS = /^\/api\/v1\/apps\/[^/]+\/logs$/;
/** Routes that need a caller only when `SVC_REQUIRE_EXPLICIT_AUTH=true` (and `metrics:read` suffices). */
export const EXPLICIT_AUTH_ONLY_ROUTES: readonly string[] = [
  'GET /metrics',
  'GET /api/metrics',
  'GET /api/services/manifest',
  'GET /api/v1/services/manifest',
];
const EXPLICIT_ONLY = EXPLICIT_AUTH_ONLY_ROUTES.map(
  (route) => new RegExp(`^${route.split(' ')[1]!.replace(/[/.]/g, '\\$&')}$`),
);

/** True when `path` never needs a bearer token. */
export function isPublicPath(path: string): boolean {
  return PUBLIC.some((re) => re.test(path));
}

/** The scope a scoped token needs for `path`; undefined when only administrators may call it. */
export function scopeForPath(path: string): Scope | undefined {
  if (ADMISSION.test(path)) return Scope.fleetExternalAdmission;
  if (EXEC.test(path)) return Scope.appsExec;
  if (LOGS.test(path)) return Scope.logsRead;
  return EXPLICIT_ONLY.some((re) => re.test(path)) ? Scope.metricsRead : undefined;
}

/** Authenticates a bearer secret: the control token, else an issued scoped token. */
export function bearerPrincipal(
  secret: string | undefined,
  apiTokenHash: string | undefined,
  scopedToken: ControlAuthOptions['scopedToken'],
): Principal | undefined {
  if (secret === undefined) return undefined;
  if (apiTokenHash !== undefined && secretEquals(secret, apiTokenHash)) return { kind: 'control-token' };
  return scopedToken?.(secret);
}

/** The edge access assertion of a request: the first assertion header present. */
export function edgeAssertion(headers: RequestHeaders): string | undefined {
  for (const name of EDGE_ASSERTION_HEADERS) {
    const value = headers[name];
    const first = Array.isArray(value) ? value[0] : value;
    if (first !== undefined && first !== '') return first;
  }
  return undefined;
}

/**
 * Adapts an edge identity verifier to a request's headers (an HTTP request's or a WebSocket
 * handshake's): reads the assertion header, returns an administrator principal when valid.
 */
export function edgeIdentityPrincipal(
  verify: (assertion: string) => Promise<EdgeIdentity | undefined>,
): EdgeIdentityCheck {
  return async (headers) => {
    const assertion = edgeAssertion(headers);
    if (assertion === undefined) return undefined;
    const identity = await verify(assertion);
    return identity === undefined
      ? undefined
      : { kind: 'edge-identity', subject: identity.subject, email: identity.email };
  };
}

/** True when a request to `path` needs a caller (the control token is set or explicit auth is required, and the path is not public). */
export function pathNeedsCaller(
  path: string,
  options: { readonly tokenSet: boolean; readonly requireExplicitAuth: boolean },
): boolean {
  return (
    (options.tokenSet || options.requireExplicitAuth) &&
    !isPublicPath(path) &&
    (!EXPLICIT_ONLY.some((re) => re.test(path)) || options.requireExplicitAuth)
  );
}

/** Rejects unauthenticated requests to protected routes with 401, and scoped tokens outside their scopes with 403. */
export function controlAuth(options: ControlAuthOptions): Middleware {
  const tokenHash = options.apiToken === undefined ? undefined : sha256Hex(options.apiToken);
  return async (ctx: Context, next: Next) => {
    const given = bearerToken(ctx);
    let principal = bearerPrincipal(given, tokenHash, options.scopedToken);
    if (principal === undefined && options.edgeIdentity !== undefined)
      principal = await options.edgeIdentity(ctx.headers);
    ctx.state.principal = principal;
    const needsAuth = pathNeedsCaller(ctx.path, {
      tokenSet: tokenHash !== undefined,
      requireExplicitAuth: options.requireExplicitAuth,
    });
    if (needsAuth && principal === undefined) {
      ctx.set('WWW-Authenticate', 'Bearer');
      throw new UnauthorizedError(
        given === undefined ? 'this endpoint needs Authorization: Bearer <token>' : 'the bearer token is not valid',
        {
          code: given === undefined ? 'missing_credentials' : 'invalid_credentials',
        },
      );
    }
    if (needsAuth && (!isAdministrator(principal) || ADMISSION.test(ctx.path))) {
      const scope = scopeForPath(ctx.path);
      if (scope === undefined || !grants(principal, scope)) {
        throw new ForbiddenError(
          scope === undefined
            ? 'a scoped token cannot call this endpoint; use the control token'
            : `this endpoint needs scope ${scope}`,
          {
            code: 'insufficient_scope',
            details: { ...(scope === undefined ? {} : { scope }), path: ctx.path },
          },
        );
      }
    }
    await next();
  };
}
