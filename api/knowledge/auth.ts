/**
 * Authentication and permission checks of the knowledge store (docs/adr/0026).
 */
import type { Context, Middleware, Next } from 'koa';
import { ForbiddenError, UnauthorizedError } from '../../domain/errors.js';
import { bearerToken } from '../http/bearer.js';
import { OPEN_TENANT, type TenantTokens, type Permission, type Principal } from './tenant-tokens.js';

/** Every request's principal when the store runs without tokens. */
export const OPEN_PRINCIPAL: Principal = {
  tenant: OPEN_TENANT,
  permissions: new Set<Permission>(['read', 'write', 'admin']),
};

/** Authenticates every request except `openPaths`; sets `ctx.state.principal`. */
export function authenticate(
  tokens: TenantTokens,
  options: { openPaths?: readonly string[]; protectedPrefixes?: readonly string[] } = {},
): Middleware {
  const open = new Set(options.openPaths ?? []);
  return async (ctx: Context, next: Next) => {
    const guarded =
      options.protectedPrefixes === undefined || options.protectedPrefixes.some((p) => ctx.path.startsWith(p));
    if (open.has(ctx.path) || !guarded) return next();
    if (tokens.open) {
      ctx.state.principal = OPEN_PRINCIPAL;
      return next();
    }
    const token = bearerToken(ctx);
    const principal = token === undefined ? undefined : tokens.authenticate(token);
    if (!principal) {
      ctx.set('WWW-Authenticate', 'Bearer realm="knowledge"');
      throw new UnauthorizedError('a valid bearer token (tenant:permissions:secret) is required');
    }
    ctx.state.principal = principal;
    return next();
  };
}

/** The authenticated principal, checked for `permission`. */
export function requirePermission(ctx: Context, permission: Permission): Principal {
  const principal = ctx.state.principal as Principal | undefined;
  if (!principal) throw new UnauthorizedError();
  if (!principal.permissions.has(permission)) {
    throw new ForbiddenError(`this token lacks the ${permission} permission`, {
      code: 'permission_denied',
      details: { required: permission },
    });
  }
  return principal;
}
