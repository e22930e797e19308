/**
 * Edge access identity: validates the `Edge-Access-Jwt-Assertion` an edge access layer puts on
 * requests it authenticated. The assertion is a JWT signed with the team's keys (a JWKS at
 * `https://<team domain>/cdn-cgi/access/certs` unless configured otherwise); it must name the
 * team as issuer and carry the configured audience, and must not be expired. Keys are fetched
 * with jose's remote key set (cached, refetched on an unknown key id, rate-limited).
 */
import { createRemoteJWKSet, errors as joseErrors, jwtVerify } from 'jose';
import type { Logger } from '../logger.js';
import { EDGE_ASSERTION_HEADERS, type EdgeIdentity } from '../../domain/auth/edge-identity.js';

export { EDGE_ASSERTION_HEADERS, type EdgeIdentity };

export interface EdgeIdentityOptions {
  /** Team domain, e.g. `team.example.com`; the issuer is `https://<teamDomain>`. */
  readonly teamDomain: string;
  /** Audience tag the assertion must carry. */
  readonly audience: string;
  /** JWKS URL. @default https://<teamDomain>/cdn-cgi/access/certs */
  readonly certsUrl?: string;
  readonly logger: Logger;
}

/** Returns a verifier: the identity of a valid assertion, undefined for anything else. */
export function edgeIdentityVerifier(
  options: EdgeIdentityOptions,
): (assertion: string) => Promise<EdgeIdentity | undefined> {
  const issuer = `https://${options.teamDomain}`;
  const keys = createRemoteJWKSet(new URL(options.certsUrl ?? `${issuer}/cdn-cgi/access/certs`), {
    timeoutDuration: 5_000,
    cooldownDuration: 30_000,
  });
  return async (assertion) => {
    try {
      const { payload } = await jwtVerify(assertion, keys, {
        issuer,
        audience: options.audience,
        algorithms: ['RS256', 'ES256'],
        clockTolerance: 30,
      });
      if (typeof payload.sub !== 'string' || payload.sub === '') return undefined;
      return { subject: payload.sub, email: typeof payload.email === 'string' ? payload.email : undefined };
    } catch (error) {
      // An invalid assertion is a caller problem, not ours; an unreachable key set is worth a warning.
      if (
        error instanceof joseErrors.JOSEError &&
        !(error instanceof joseErrors.JWKSTimeout) &&
        error.code !== 'ERR_JOSE_GENERIC'
      ) {
        options.logger.debug({ code: error.code }, 'edge access assertion rejected');
      } else {
        options.logger.warn({ err: error }, 'edge access assertion could not be checked');
      }
      return undefined;
    }
  };
}
