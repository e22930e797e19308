// tier: full
import test from 'ava';
import { request, startTestControlPlane } from '../helpers/servers.js';
import { runSvc } from '../helpers/cli.js';
import { testConfig } from '../helpers/test-config.js';

test('svc tokens create prints the secret once, list shows no secret, revoke ends it; errors exit 1 with the reason', async (t) => {
  const plane = await startTestControlPlane(
    t,
    testConfig(t, {
      SVC_CAPACITY_CHECK_INTERVAL: 'off',
      SVC_API_TOKEN: 'admin-token',
      SVC_REQUIRE_EXPLICIT_AUTH: 'true',
    }),
  );
  const env = { SVC_API_URL: plane.url, SVC_API_TOKEN: 'admin-token' };

  const created = await runSvc(
    ['tokens', 'create', '--name', 'scraper', '--scope', 'metrics:read', '--expires-in', '720h'],
    { env },
  );
  t.is(created.code, 0, created.stderr);
  const secret = created.stdout.trim();
  t.regex(secret, /^svc_pat_[a-z2-7]{32}$/);
  t.regex(created.stderr, /issued tok_\w+ "scraper" with metrics:read, expires .*shown only once/);
  t.is((await request(`${plane.url}/api/metrics`, { headers: { authorization: `Bearer ${secret}` } })).status, 200);

  const listed = await runSvc(['tokens', 'list'], { env });
  t.is(listed.code, 0, listed.stderr);
  t.regex(listed.stdout, /scraper\s+metrics:read\s+active/);
  t.false(listed.stdout.includes(secret));

  const id = /issued (tok_\w+)/.exec(created.stderr)![1]!;
  const revoked = await runSvc(['tokens', 'revoke', id], { env });
  t.is(revoked.code, 0, revoked.stderr);
  t.regex(revoked.stdout, new RegExp(`^${id} revoked at `));
  t.is((await request(`${plane.url}/api/metrics`, { headers: { authorization: `Bearer ${secret}` } })).status, 401);

  const refused = await runSvc(['tokens', 'create', '--name', 'x', '--scope', 'fleet:external-admission'], { env });
  t.is(refused.code, 1);
  t.regex(refused.stderr, /scope fleet:external-admission cannot be issued.*\(scope_not_issuable\)/);
  const anonymous = await runSvc(['tokens', 'list'], { env: { SVC_API_URL: plane.url, SVC_API_TOKEN: '' } });
  t.is(anonymous.code, 1);
  t.regex(anonymous.stderr, /missing_credentials/);
});
