// tier: full
import test from 'ava';
import { generateKeyPair } from 'jose';
import { loadConfig } from '../../platform/config.js';
import { ConfigError } from '../../domain/errors.js';
import { request, startTestControlPlane } from '../helpers/servers.js';
import { testConfig } from '../helpers/test-config.js';
import { assertion, AUD, keyServer, TEAM } from './edge-access-stand-in.js';

test('a validated edge access identity is an administrator; an assertion with the wrong audience, issuer, key or expiry is not', async (t) => {
  const keys = await keyServer(t);
  const plane = await startTestControlPlane(
    t,
    testConfig(t, {
      SVC_CAPACITY_CHECK_INTERVAL: 'off',
      SVC_API_TOKEN: 'admin-token',
      SVC_REQUIRE_EXPLICIT_AUTH: 'true',
      SVC_EDGE_ACCESS_TEAM_DOMAIN: TEAM,
      SVC_EDGE_ACCESS_AUD: AUD,
      SVC_EDGE_ACCESS_CERTS_URL: keys.url,
    }),
  );
  const as = (jwt: string) => ({ 'edge-access-jwt-assertion': jwt });

  const valid = await assertion(keys.key);
  t.is((await request(`${plane.url}/api/apps`, { headers: as(valid) })).status, 200);
  t.true(keys.fetches.length >= 1 && keys.fetches.every((path) => path === '/cdn-cgi/access/certs'));
  // An administrator: may issue tokens, recorded as issued by the identity's email.
  const issued = await request(`${plane.url}/api/access/tokens`, {
    method: 'POST',
    headers: as(valid),
    json: { name: 'from edge', scopes: ['events:read'] },
  });
  t.is(issued.status, 201, issued.text);
  t.is(issued.body.token.createdBy, 'ops@example.test');
  // The edge's own header name works too.
  t.is((await request(`${plane.url}/api/apps`, { headers: { 'cf-access-jwt-assertion': valid } })).status, 200);

  const other = (await generateKeyPair('RS256')).privateKey;
  const rejected: [string, string][] = [
    ['wrong audience', await assertion(keys.key, { aud: 'someone-else' })],
    ['wrong issuer', await assertion(keys.key, { iss: 'https://evil.example.test' })],
    ['expired', await assertion(keys.key, { exp: Math.floor(Date.now() / 1000) - 120 })],
    ['another key', await assertion(other)],
    ['unknown key id', await assertion(other, { kid: 'k2' })],
    ['not a JWT', 'forged'],
    [
      'unsigned',
      `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify({ iss: `https://${TEAM}`, aud: AUD, sub: 'x', exp: 9999999999 })).toString('base64url')}.`,
    ],
  ];
  for (const [what, jwt] of rejected) {
    const answer = await request(`${plane.url}/api/apps`, { headers: as(jwt) });
    t.is(answer.status, 401, what);
    t.is(answer.body.error.code, 'missing_credentials', what);
  }
});

test('without edge access settings an identity header never grants access, and the two settings go together', async (t) => {
  const keys = await keyServer(t);
  const plane = await startTestControlPlane(
    t,
    testConfig(t, { SVC_CAPACITY_CHECK_INTERVAL: 'off', SVC_API_TOKEN: 'admin-token' }),
  );
  t.is(
    (await request(`${plane.url}/api/apps`, { headers: { 'edge-access-jwt-assertion': await assertion(keys.key) } }))
      .status,
    401,
  );
  t.is(keys.fetches.length, 0);

  const error = t.throws(() => loadConfig({ SVC_EDGE_ACCESS_TEAM_DOMAIN: TEAM }), { instanceOf: ConfigError });
  t.regex(error.message, /SVC_EDGE_ACCESS_AUD/);
  t.throws(() => loadConfig({ SVC_EDGE_ACCESS_AUD: AUD }), { instanceOf: ConfigError });
  t.throws(() => loadConfig({ SVC_EDGE_ACCESS_TEAM_DOMAIN: 'not a domain', SVC_EDGE_ACCESS_AUD: AUD }), {
    instanceOf: ConfigError,
  });
  // Edge access alone satisfies explicit auth: a validated identity can authenticate.
  t.is(
    loadConfig({
      SVC_REQUIRE_EXPLICIT_AUTH: 'true',
      SVC_EDGE_ACCESS_TEAM_DOMAIN: `https://${TEAM}/`,
      SVC_EDGE_ACCESS_AUD: AUD,
    }).edgeAccessTeamDomain,
    TEAM,
  );
});
