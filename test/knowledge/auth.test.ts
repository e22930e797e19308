// tier: quick
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { startHarness } from './knowledge-harness.js';
import { tempDir } from '../helpers/temp-dir.js';
import { TenantTokens } from '../../api/knowledge/tenant-tokens.js';

const TOKENS =
  'acme:read+write:acme-secret-1,acme:read:acme-reader-1,beta:read+write:beta-secret-1,ops:admin:ops-secret-01';

test('auth requires a bearer token when tokens are configured, except for ping', async (t) => {
  const h = await startHarness(t, { SVC_KNOWLEDGE_TOKENS: TOKENS });
  t.is((await h.call('GET', '/v1/ping')).status, 200);
  const none = await h.call('POST', '/v1/namespaces/n/write', { content: 'x', source_id: 's' });
  t.is(none.status, 401);
  t.is(none.body.error.code, 'unauthorized');
  t.is(none.headers.get('www-authenticate'), 'Bearer realm="knowledge"');
  t.is((await h.call('GET', '/v1/version')).status, 401);
  t.is((await h.call('GET', '/v1/version', undefined, 'acme:read+write:wrong-secret')).status, 401);
  t.is(
    (await h.call('GET', '/v1/version', undefined, 'acme:read:acme-secret-1')).status,
    401,
    'permissions must match the configured token',
  );
  t.is((await h.call('GET', '/v1/version', undefined, 'garbage')).status, 401);
  t.is((await h.call('GET', '/v1/version', undefined, 'acme:read+write:acme-secret-1')).status, 200);
  const graphql = await h.call('POST', '/graphql', { query: '{ features { name } }' });
  t.is(graphql.status, 401);
  t.is((await h.call('POST', '/graphql', { query: '{ features { name } }' }, 'ops:admin:ops-secret-01')).status, 200);
});

test('auth requires the write permission for mutations', async (t) => {
  const h = await startHarness(t, { SVC_KNOWLEDGE_TOKENS: TOKENS });
  const w = await h.write('n', { content: 'hello', source_id: 's' }, 'acme:read+write:acme-secret-1');
  const reader = 'acme:read:acme-reader-1';
  const denied = await h.call('POST', '/v1/namespaces/n/write', { content: 'x', source_id: 's' }, reader);
  t.is(denied.status, 403);
  t.is(denied.body.error.code, 'permission_denied');
  t.is(
    (
      await h.call(
        'POST',
        `/v1/namespaces/n/nodes/${w.node_id}/retract-source`,
        { source_id: 's', reason: 'r' },
        reader,
      )
    ).status,
    403,
  );
  t.is((await h.call('POST', '/v1/namespaces/n/sources/label', { source_id: 's' }, reader)).status, 403);
  t.is((await h.call('POST', '/v1/namespaces/n/recovery/reconcile', { execute: true }, reader)).status, 403);
  t.is((await h.call('POST', '/v1/namespaces/n/retrieve', { text: 'hello' }, reader)).status, 200);
  t.is((await h.call('GET', `/v1/namespaces/n/nodes/${w.node_id}`, undefined, reader)).status, 200);
});

test('auth confines each tenant to its own namespaces', async (t) => {
  const h = await startHarness(t, { SVC_KNOWLEDGE_TOKENS: TOKENS });
  const acme = 'acme:read+write:acme-secret-1';
  const beta = 'beta:read+write:beta-secret-1';
  const w = await h.write('shared-name', { content: 'acme private fact', source_id: 's' }, acme);
  t.is((await h.call('GET', `/v1/namespaces/shared-name/nodes/${w.node_id}`, undefined, beta)).status, 404);
  t.is((await h.call('POST', '/v1/namespaces/shared-name/retrieve', { text: 'private' }, beta)).status, 404);
  await h.write('shared-name', { content: 'beta fact', source_id: 's' }, beta);
  const betaResults = await h.retrieve('shared-name', { text: 'fact' }, beta);
  t.deepEqual(
    betaResults.map((r) => r.content),
    ['beta fact'],
  );
  const acmeResults = await h.retrieve('shared-name', { text: 'fact' }, acme);
  t.deepEqual(
    acmeResults.map((r) => r.content),
    ['acme private fact'],
  );
  const graphql = await h.call(
    'POST',
    '/graphql',
    { query: '{ search(namespace: "shared-name", query: "fact") { totalCount nodes { content } } }' },
    beta,
  );
  t.deepEqual(graphql.body.data.search.nodes, [{ content: 'beta fact' }]);
});

test('auth protects the admin listener with the admin permission but leaves health and metrics open', async (t) => {
  const h = await startHarness(t, { SVC_KNOWLEDGE_TOKENS: TOKENS });
  t.is((await h.admin('GET', '/healthz')).status, 200);
  t.is((await h.admin('GET', '/metrics')).status, 200);
  t.is((await h.admin('GET', '/debug/pprof/')).status, 401);
  t.is((await h.admin('GET', '/debug/pprof/', undefined, 'acme:read+write:acme-secret-1')).status, 403);
  t.is((await h.admin('GET', '/debug/pprof/', undefined, 'ops:admin:ops-secret-01')).status, 200);
  t.is(
    (
      await h.admin(
        'POST',
        '/admin/api/explain-rank',
        {
          namespace: 'n',
          node_id: '11111111-1111-1111-1111-111111111111',
          other_node_id: '22222222-2222-2222-2222-222222222222',
        },
        'acme:read+write:acme-secret-1',
      )
    ).status,
    403,
  );
});

test('auth reads tokens from a token file, one per line with comments', async (t) => {
  const dir = tempDir(t);
  const file = path.join(dir, 'tokens');
  fs.writeFileSync(file, '# operators\nfile:read+write:file-secret-1\n\n  other:read:other-secret-1  \n');
  const h = await startHarness(t, { SVC_KNOWLEDGE_TOKENS_FILE: file });
  t.is((await h.call('GET', '/v1/features', undefined, 'file:read+write:file-secret-1')).status, 200);
  t.is((await h.call('GET', '/v1/features', undefined, 'other:read:other-secret-1')).status, 200);
  t.is((await h.call('GET', '/v1/features')).status, 401);
});

test('access tokens refuse malformed entries naming where they are', (t) => {
  t.throws(() => TenantTokens.load('acme:read', undefined), {
    message: /SVC_KNOWLEDGE_TOKENS: a token must be tenant:permissions:secret/,
  });
  t.throws(() => TenantTokens.load('acme:fly:secret-long', undefined), {
    message: /permission "fly" is not one of read, write, admin/,
  });
  t.throws(() => TenantTokens.load('acme:read:short', undefined), { message: /at least 8 characters/ });
  t.throws(() => TenantTokens.load(undefined, '/nonexistent/tokens'), {
    message: /SVC_KNOWLEDGE_TOKENS_FILE: cannot read the token file/,
  });
  const tokens = TenantTokens.load('a:read+write:secret:with:colons', undefined);
  t.deepEqual([...tokens.authenticate('a:read+write:secret:with:colons')!.permissions].sort(), ['read', 'write']);
  t.is(TenantTokens.load(undefined, undefined).open, true);
});

test('auth is open without tokens and every request acts as the default tenant', async (t) => {
  const h = await startHarness(t);
  t.is((await h.call('GET', '/v1/version')).status, 200);
  t.is((await h.admin('GET', '/debug/pprof/')).status, 200);
});
