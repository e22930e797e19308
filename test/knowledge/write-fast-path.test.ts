// tier: quick
import http from 'node:http';
import test, { type ExecutionContext } from 'ava';
import { Registry } from 'prom-client';
import { startHarness } from './knowledge-harness.js';
import { fastPathBesideKoa, rawPost } from '../helpers/raw-post.js';
import { knowledgeWriteFastPath } from '../../api/knowledge/write-fast-path.js';
import { KnowledgeMetrics } from '../../api/knowledge/metrics.js';
import { TenantTokens } from '../../api/knowledge/tenant-tokens.js';
import { silentLogger } from '../../platform/logger.js';

const TOKENS = 'acme:read+write:acme-secret-1,acme:read:acme-reader-1';
const writer = { authorization: 'Bearer acme:read+write:acme-secret-1' };
const write = (content: string) => JSON.stringify({ content, source_id: 'src-1' });

/** A bare server that answers through the fast path alone: what it declines is a 404. */
async function bareServer(t: ExecutionContext, handler: ReturnType<typeof knowledgeWriteFastPath>) {
  const bare = http.createServer((req, res) => {
    if (!handler(req, res)) res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => bare.close(() => resolve())));
  return `http://127.0.0.1:${(bare.address() as { port: number }).port}`;
}

test('the write fast path takes only a plain POST .../write by a writer, and Koa answers the rest', async (t) => {
  const h = await startHarness(t, { SVC_KNOWLEDGE_TOKENS: TOKENS, SVC_BODY_LIMIT: '2kb' });
  const options = {
    services: h.store.services,
    metrics: new KnowledgeMetrics(new Registry()),
    logger: silentLogger(),
    bodyLimitBytes: 2048,
  };
  const url = await bareServer(t, knowledgeWriteFastPath({ ...options, tokens: TenantTokens.load(TOKENS, undefined) }));
  const taken = await rawPost(url, '/v1/namespaces/n.1_x-z/write', { body: write('taken'), headers: writer });
  t.is(taken.status, 200, JSON.stringify(taken.body));
  t.is(taken.body.admitted, true);
  t.is((await rawPost(url, '/v1/namespaces/n/write', { body: '{"content":', headers: writer })).status, 400);
  const reader = { authorization: 'Bearer acme:read:acme-reader-1' };
  const declined: [string, Parameters<typeof rawPost>[2]][] = [
    ['/v1/namespaces/n/write?x=1', { body: write('d1'), headers: writer }],
    ['/v1/namespaces/n/write/', { body: write('d2'), headers: writer }],
    ['/v1/namespaces/n%41/write', { body: write('d3'), headers: writer }],
    ['/v1/namespaces/n/write/batch', { body: '{"writes":[]}', headers: writer }],
    ['/v1/namespaces/n/write', { body: write('d4'), headers: writer, chunked: true }],
    ['/v1/namespaces/n/write', { body: write('d5') }],
    ['/v1/namespaces/n/write', { body: write('d6'), headers: { authorization: 'Bearer acme:read+write:wrong' } }],
    ['/v1/namespaces/n/write', { body: write('d7'), headers: reader }],
    ['/v1/namespaces/n/write', { body: write('d8'), headers: { ...writer, 'content-type': 'text/plain' } }],
    ['/v1/namespaces/n/write', { body: write('x'.repeat(3000)), headers: writer }],
  ];
  for (const [path, request] of declined) t.is((await rawPost(url, path, request)).status, 404, path);
  // A store without tokens: every caller writes, as through Koa.
  const openUrl = await bareServer(
    t,
    knowledgeWriteFastPath({ ...options, tokens: TenantTokens.load(undefined, undefined) }),
  );
  t.is((await rawPost(openUrl, '/v1/namespaces/n/write', { body: write('open') })).status, 200);

  // The same requests on the store: the fast path (`.../write`) beside the Koa route (`?via=koa`).
  const { both, same } = fastPathBesideKoa(t, h.store.url, '/v1/namespaces/n/write');
  same('bad JSON', await both({ body: '{"content":', headers: writer }), 400, 'invalid_json');
  same(
    'prototype poisoning',
    await both({ body: '{"__proto__":{"x":1},"content":"c","source_id":"s"}', headers: writer }),
    400,
    'invalid_json',
  );
  same('schema', await both({ body: '{"content":"c"}', headers: writer }), 400, 'invalid_request');
  same('empty content, no vector', await both({ body: write(''), headers: writer }), 400, 'invalid_request');
  same('empty body', await both({ body: '', headers: writer }), 400, 'invalid_request');
  same('a JSON string', await both({ body: '""', headers: writer }), 400, 'invalid_request');
  same('no token', await both({ body: write('n') }), 401, 'unauthorized', ['www-authenticate']);
  same('reader', await both({ body: write('n'), headers: reader }), 403, 'permission_denied');
  same('oversize', await both({ body: write('x'.repeat(3000)), headers: writer }), 413);
  // Written on the fast path, then the same write through Koa is its duplicate; a byte order mark is
  // read past and a sane request id kept on either path.
  const withId = { ...writer, 'x-request-id': 'write-1' };
  const [first, second] = await both({
    body: `\uFEFF${JSON.stringify({ content: 'kept once', source_id: 'src-1', dedup: true })}`,
    headers: withId,
  });
  t.is(first.status, 200);
  t.is(second.status, 200);
  t.is(first.headers['x-request-id'], 'write-1');
  t.is(second.headers['x-request-id'], 'write-1');
  t.true(first.body.admitted);
  t.is(first.body.deduplicated, undefined);
  t.true(second.body.deduplicated);
  t.is(second.body.node_id, first.body.node_id);
  t.deepEqual(Object.keys(first.headers).sort(), Object.keys(second.headers).sort());
  t.regex(
    String(
      (await rawPost(h.store.url, '/v1/namespaces/n/write', { body: write('fresh'), headers: writer })).headers[
        'x-request-id'
      ],
    ),
    /^[0-9a-f-]{36}$/,
  );
  t.is(first.headers['content-length'], String(Buffer.byteLength(JSON.stringify(first.body))));
  // What the fast path wrote is read back through Koa.
  const found = await h.call(
    'GET',
    `/v1/namespaces/n/nodes/${first.body.node_id}`,
    undefined,
    'acme:read:acme-reader-1',
  );
  t.is(found.status, 200);
  t.is(found.body.content, 'kept once');
});
