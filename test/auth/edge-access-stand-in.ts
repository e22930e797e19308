/**
 * A local stand-in for the edge's access service: its key endpoint (one RSA public key as a JWKS)
 * and the assertions it signs for a signed-in user.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ExecutionContext } from 'ava';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';

export const TEAM = 'team.example.test';
export const AUD = 'aud-7f3c';

/** A local stand-in for the edge's key endpoint: serves one RSA public key as a JWKS and counts fetches. */
export async function keyServer(t: ExecutionContext): Promise<{ url: string; key: CryptoKey; fetches: string[] }> {
  const { publicKey, privateKey } = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  const fetches: string[] = [];
  const server = http.createServer((req, res) => {
    fetches.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/cdn-cgi/access/certs`,
    key: privateKey,
    fetches,
  };
}

export function assertion(
  key: CryptoKey,
  claims: { iss?: string; aud?: string; exp?: number | string; sub?: string; email?: string; kid?: string } = {},
): Promise<string> {
  return new SignJWT({ email: claims.email ?? 'ops@example.test' })
    .setProtectedHeader({ alg: 'RS256', kid: claims.kid ?? 'k1' })
    .setIssuer(claims.iss ?? `https://${TEAM}`)
    .setAudience(claims.aud ?? AUD)
    .setSubject(claims.sub ?? 'user-1')
    .setIssuedAt()
    .setExpirationTime(claims.exp ?? '5m')
    .sign(key);
}
