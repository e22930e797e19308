/**
 * The caller of a WebSocket handshake, as the HTTP routes find theirs (auth.ts): a bearer token
 * (`Authorization`, or the `svc.bearer.<base64url token>` subprotocol entry a browser can send),
 * else a validated edge access identity (`Edge-Access-Jwt-Assertion`, which the edge's access
 * service sets on the handshake as on any request), and then the socket's scope.
 */
import type http from 'node:http';
import { grants, type Principal, type Scope } from '../../../domain/auth/index.js';
import type { UpgradeRefusal } from '../../http/upgrade.js';
import { bearerPrincipal, edgeAssertion, type EdgeIdentityCheck } from './auth.js';

/** Prefix of the subprotocol entry that carries a base64url bearer token. */
export const BEARER_PROTOCOL_PREFIX = 'svc.bearer.';

/** How a socket authenticates its callers. */
export interface UpgradeAuth {
  /** SHA-256 of the control token, when one is set. */
  readonly tokenHash: string | undefined;
  readonly scopedToken?: ((secret: string) => Principal | undefined) | undefined;
  readonly edgeIdentity?: EdgeIdentityCheck | undefined;
}

/** The bearer token of an upgrade: the Authorization header, else the `svc.bearer.` subprotocol entry. */
export function upgradeBearerToken(req: Pick<http.IncomingMessage, 'headers'>): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
  if (match?.[1] !== undefined) return match[1];
  const offered = (req.headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim());
  const entry = offered.find((p) => p.startsWith(BEARER_PROTOCOL_PREFIX));
  if (entry === undefined) return undefined;
  const encoded = entry.slice(BEARER_PROTOCOL_PREFIX.length);
  if (!/^[A-Za-z0-9_-]+$/.test(encoded)) return undefined;
  const token = Buffer.from(encoded, 'base64url').toString('utf8');
  return token === '' ? undefined : token;
}

/**
 * The principal of a handshake that needs `scope`, or the refusal to answer it with (401 without a
 * valid credential, 403 without the scope). `needs` names the socket and its scope in messages.
 */
export async function upgradePrincipal(
  req: Pick<http.IncomingMessage, 'headers'>,
  auth: UpgradeAuth,
  scope: Scope,
  needs: string,
): Promise<{ readonly principal: Principal } | { readonly refusal: UpgradeRefusal }> {
  const token = upgradeBearerToken(req);
  let principal = bearerPrincipal(token, auth.tokenHash, auth.scopedToken);
  if (principal === undefined && auth.edgeIdentity !== undefined) principal = await auth.edgeIdentity(req.headers);
  const unauthorized = (code: string, message: string) => ({
    refusal: { status: 401, code, message, headers: { 'WWW-Authenticate': 'Bearer' } },
  });
  if (principal === undefined) {
    if (token !== undefined) return unauthorized('invalid_credentials', 'the bearer token is not valid');
    if (auth.edgeIdentity !== undefined && edgeAssertion(req.headers) !== undefined)
      return unauthorized('invalid_credentials', 'the edge access assertion is not valid');
    const edge = auth.edgeIdentity !== undefined ? ', or a validated edge access identity,' : '';
    return unauthorized(
      'missing_credentials',
      `${needs} needs Authorization: Bearer <token> (or the svc.bearer.<base64url token> subprotocol)${edge} with scope ${scope}`,
    );
  }
  if (!grants(principal, scope))
    return {
      refusal: {
        status: 403,
        code: 'insufficient_scope',
        message: `the bearer token does not carry scope ${scope}`,
        details: { scope },
      },
    };
  return { principal };
}
