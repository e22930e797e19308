// tier: full
import test from 'ava';
import WebSocket from 'ws';
import { ScopedTokens } from '../../controllers/auth/scoped-tokens.js';
import { openControlStore } from '../../store/index.js';
import { request, startTestControlPlane } from '../helpers/servers.js';
import { closePlaneAndStopApps } from '../helpers/stop-apps.js';
import { tempDir } from '../helpers/temp-dir.js';
import { testConfig } from '../helpers/test-config.js';
import { startControlPlane } from '../../wiring/control-plane.js';
import { silentLogger } from '../../platform/logger.js';

const ADMIN = { authorization: 'Bearer admin-token' };
const quiet = { SVC_CAPACITY_CHECK_INTERVAL: 'off', SVC_API_TOKEN: 'admin-token', SVC_REQUIRE_EXPLICIT_AUTH: 'true' };
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** The HTTP status the event stream answers an upgrade with (101 when it opens). */
function streamStatus(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`${url.replace('http', 'ws')}/api/v1/events`, { headers });
    ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    ws.on('message', (data: Buffer) => {
      if (JSON.parse(data.toString()).kind === 'ready') {
        ws.close();
        resolve(101);
      }
    });
    ws.on('error', () => undefined);
  });
}

test('an administrator issues scoped tokens that reach only their scopes, are listed without secrets, and stop working when revoked', async (t) => {
  const plane = await startTestControlPlane(t, testConfig(t, quiet));

  // Only an administrator issues tokens.
  t.is(
    (await request(`${plane.url}/api/access/tokens`, { method: 'POST', json: { name: 'x', scopes: ['metrics:read'] } }))
      .status,
    401,
  );
  const issued = await request(`${plane.url}/api/access/tokens`, {
    method: 'POST',
    headers: ADMIN,
    json: { name: 'prometheus scraper', scopes: ['metrics:read'] },
  });
  t.is(issued.status, 201, issued.text);
  t.is(issued.headers.get('cache-control'), 'no-store');
  const metricsToken = issued.body.token.token as string;
  t.regex(metricsToken, /^svc_pat_[a-z2-7]{32}$/);
  t.deepEqual(issued.body.token.scopes, ['metrics:read']);
  t.is(issued.body.token.state, 'active');
  t.is(issued.body.token.expiresAt, null);
  const events = await request(`${plane.url}/api/access/tokens`, {
    method: 'POST',
    headers: ADMIN,
    json: { name: 'dashboard', scopes: ['events:read'], expiresIn: '24h' },
  });
  const eventsToken = events.body.token.token as string;
  t.true(Date.parse(events.body.token.expiresAt) > Date.now() + 23 * 3_600_000);

  // metrics:read reaches the metrics and the manifest, nothing else; a scoped token cannot issue tokens.
  t.is((await request(`${plane.url}/api/metrics`, { headers: bearer(metricsToken) })).status, 200);
  t.is((await request(`${plane.url}/api/services/manifest`, { headers: bearer(metricsToken) })).status, 200);
  const apps = await request(`${plane.url}/api/apps`, { headers: bearer(metricsToken) });
  t.is(apps.status, 403);
  t.is(apps.body.error.code, 'insufficient_scope');
  t.is(
    (
      await request(`${plane.url}/api/access/tokens`, {
        method: 'POST',
        headers: bearer(metricsToken),
        json: { name: 'more', scopes: ['events:read'] },
      })
    ).status,
    403,
  );
  t.is((await request(`${plane.url}/api/webhooks/deliveries`, { headers: bearer(metricsToken) })).status, 403);
  t.is((await request(`${plane.url}/api/metrics`, { headers: bearer(eventsToken) })).status, 403);

  // events:read opens the stream; a token without it gets 403, an unknown one 401.
  t.is(await streamStatus(plane.url, bearer(eventsToken)), 101);
  t.is(await streamStatus(plane.url, bearer(metricsToken)), 403);
  t.is(await streamStatus(plane.url, bearer('svc_pat_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa')), 401);
  t.is(await streamStatus(plane.url, ADMIN), 101);

  // The list shows names, scopes and states, never a secret.
  const listed = await request(`${plane.url}/api/access/tokens`, { headers: ADMIN });
  t.deepEqual(listed.body.tokens.map((token: { name: string }) => token.name).sort(), [
    'dashboard',
    'prometheus scraper',
  ]);
  t.false(listed.text.includes(metricsToken) || listed.text.includes(eventsToken));
  t.false(listed.text.includes('secret'));

  // Revoked: at once, and idempotently.
  const revoked = await request(`${plane.url}/api/access/tokens/${issued.body.token.id}`, {
    method: 'DELETE',
    headers: ADMIN,
  });
  t.is(revoked.body.token.state, 'revoked');
  t.is((await request(`${plane.url}/api/metrics`, { headers: bearer(metricsToken) })).status, 401);
  const again = await request(`${plane.url}/api/access/tokens/${issued.body.token.id}`, {
    method: 'DELETE',
    headers: ADMIN,
  });
  t.is(again.body.token.revokedAt, revoked.body.token.revokedAt);
  t.is((await request(`${plane.url}/api/access/tokens/tok_missing`, { method: 'DELETE', headers: ADMIN })).status, 404);
});

test('token requests are validated: unknown and non-issuable scopes, bad names and expiries get 400 with the reason', async (t) => {
  const plane = await startTestControlPlane(t, testConfig(t, quiet));
  const issue = (json: unknown) => request(`${plane.url}/api/access/tokens`, { method: 'POST', headers: ADMIN, json });
  const cases: [unknown, string][] = [
    [{ name: 'x', scopes: ['fleet:external-admission'] }, 'scope_not_issuable'],
    [{ name: 'x', scopes: ['root'] }, 'scope_not_issuable'],
    [{ name: 'x', scopes: [] }, 'invalid_request'],
    [{ scopes: ['events:read'] }, 'invalid_request'],
    [{ name: '<script>', scopes: ['events:read'] }, 'invalid_request'],
    [{ name: 'x', scopes: ['events:read'], expiresIn: 'soon' }, 'invalid_duration'],
    [{ name: 'x', scopes: ['events:read'], expiresIn: '-5m' }, 'invalid_expiry'],
    [{ name: 'x', scopes: ['events:read'], expiresIn: '9000h' }, 'invalid_expiry'],
    [{ name: 'x', scopes: ['events:read'], admin: true }, 'invalid_request'],
    [[1, 2], 'invalid_request'],
  ];
  for (const [body, code] of cases) {
    const answer = await issue(body);
    t.is(answer.status, 400, JSON.stringify(body));
    t.is(answer.body.error.code, code, JSON.stringify(body));
  }
  t.deepEqual(
    (await request(`${plane.url}/api/access/tokens`, { headers: ADMIN })).body.tokens,
    [],
    'nothing was stored',
  );
});

test('tokens are durable across a restart and expire at their time', async (t) => {
  const config = testConfig(t, quiet);
  const first = await startControlPlane(config, silentLogger());
  const issued = await request(`${first.url}/api/access/tokens`, {
    method: 'POST',
    headers: ADMIN,
    json: { name: 'kept', scopes: ['metrics:read'] },
  });
  await closePlaneAndStopApps(first, config);
  const second = await startControlPlane(config, silentLogger());
  t.teardown(() => closePlaneAndStopApps(second, config));
  t.is((await request(`${second.url}/api/metrics`, { headers: bearer(issued.body.token.token) })).status, 200);

  // Expiry with a clock we move (the service's own code, over a real control.db).
  const store = openControlStore(tempDir(t));
  t.teardown(() => store.db.close());
  let now = new Date('2026-01-01T00:00:00Z');
  const tokens = new ScopedTokens({ db: store.db, now: () => now });
  const { token } = tokens.issue({ name: 'short', scopes: ['events:read'], expiresIn: '1h' }, 'test');
  t.is(tokens.authenticate(token)?.kind, 'scoped-token');
  now = new Date('2026-01-01T01:00:01Z');
  t.is(tokens.authenticate(token), undefined);
  t.is(tokens.list()[0]!.state, 'expired');
  t.is(tokens.authenticate('admin-token'), undefined, 'a secret without the prefix is never looked up');
});
