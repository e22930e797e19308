/**
 * A local OIDC issuer of git-host workflow identities: an HTTPS key-set endpoint
 * (`/.well-known/jwks`) and a signer of workflow identity tokens with the claims the git host
 * puts in them (repository, repository_id, job_workflow_ref, ref, environment, sha, run_id,
 * run_attempt).
 */
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import { startHttpsStandIn, type HttpsStandIn } from './https-stand-in.js';
import type { TestCertificates } from './test-certificates.js';

export interface OidcIssuerStandIn extends HttpsStandIn {
  /** The issuer (`iss`): the stand-in's origin. */
  readonly issuer: string;
  /** Signs a workflow identity; `claims` override the defaults, `expiresIn` e.g. '5m'. */
  sign(
    claims: Record<string, unknown>,
    options?: { readonly audience?: string; readonly expiresIn?: string; readonly foreignKey?: boolean },
  ): Promise<string>;
}

export async function startOidcIssuerStandIn(certs: TestCertificates): Promise<OidcIssuerStandIn> {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  const foreign = await generateKeyPair('RS256');
  const jwk: JWK = { ...(await exportJWK(publicKey)), kid: 'workflow-key-1', alg: 'RS256', use: 'sig' };
  const server = await startHttpsStandIn(certs, (request) =>
    request.path === '/.well-known/jwks' ? { status: 200, body: { keys: [jwk] } } : { status: 404, body: {} },
  );
  return {
    ...server,
    issuer: server.url,
    async sign(claims, options = {}) {
      return new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', kid: 'workflow-key-1' })
        .setIssuer(server.url)
        .setAudience(options.audience ?? 'svc:staging:external-admission')
        .setSubject(`repo:${String(claims.repository)}:environment:${String(claims.environment)}`)
        .setIssuedAt()
        .setExpirationTime(options.expiresIn ?? '10m')
        .sign(options.foreignKey ? foreign.privateKey : privateKey);
    },
  };
}
