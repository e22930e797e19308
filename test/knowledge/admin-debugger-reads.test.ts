// tier: quick
/**
 * The belief debugger's reads on the admin listener (docs/adr/0132): a node's versions, a source's
 * trust timeline, one node's feedback events and a query's ranked results with their breakdown,
 * with the admin permission and the caller's tenant, answering the same bodies as the REST routes.
 */
import test from 'ava';
import { startHarness } from './knowledge-harness.js';

const ALL = 'team:read+write+admin:team-all-secret';
const RW = 'team:read+write:team-rw-secret';
const OTHER = 'other:admin:other-admin-secret';
const TOKENS = { SVC_KNOWLEDGE_TOKENS: [ALL, RW, OTHER].join(',') };

test('the admin debugger reads answer versions, source trust, node feedback and a scored query like the REST routes', async (t) => {
  const h = await startHarness(t, TOKENS);
  const tok = ALL;
  const first = await h.write(
    'ops',
    { content: 'The billing service listens on port 8080', labels: ['billing'], source_id: 'wiki' },
    tok,
  );
  await h.write(
    'ops',
    { content: 'The search service listens on port 9200', labels: ['search'], source_id: 'runbook' },
    tok,
  );
  const validated = await h.call(
    'POST',
    `/v1/namespaces/ops/nodes/${first.node_id}/validate`,
    { reason: 'checked' },
    tok,
  );
  t.is(validated.status, 200, validated.text);

  const node = await h.admin('GET', `/admin/api/node?ns=ops&id=${first.node_id}`, undefined, tok);
  t.is(node.status, 200, node.text);
  t.deepEqual(
    node.body,
    (await h.call('GET', `/v1/namespaces/ops/nodes/${first.node_id}?history=true`, undefined, tok)).body,
  );
  t.true(node.body.history.length >= 2, 'the validation recorded a new version');
  t.truthy(node.body.history[0].tx_from);

  const trust = await h.admin('GET', '/admin/api/source-trust?ns=ops&source_id=wiki', undefined, tok);
  t.is(trust.status, 200);
  t.deepEqual(trust.body, (await h.call('GET', '/v1/namespaces/ops/sources/wiki/trust', undefined, tok)).body);
  t.is(trust.body.timeline.length, 1);

  const feedback = await h.admin(
    'GET',
    `/admin/api/feedback?ns=ops&node_id=${first.node_id.toUpperCase()}`,
    undefined,
    tok,
  );
  t.is(feedback.status, 200);
  t.is(feedback.body.count, 1);
  t.like(feedback.body.events[0], { node_id: first.node_id, action: 'validate', source_id: 'wiki', reason: 'checked' });

  const before = (await h.admin('GET', '/admin/api/metrics', undefined, tok)).body.retrieval.total;
  const scored = await h.admin(
    'POST',
    '/admin/api/retrieve',
    { namespace: 'ops', text: 'billing port', top_k: 5 },
    tok,
  );
  t.is(scored.status, 200, scored.text);
  t.is(scored.body.results[0].id, first.node_id);
  t.deepEqual(Object.keys(scored.body.results[0].score_breakdown).sort(), [
    'confidence',
    'recency',
    'similarity',
    'utility',
  ]);
  t.is(
    (await h.admin('GET', '/admin/api/metrics', undefined, tok)).body.retrieval.total,
    before,
    'a debugger read is not caller traffic',
  );
});

test('the admin debugger reads refuse a missing namespace, other tenants, and tokens without admin', async (t) => {
  const h = await startHarness(t, TOKENS);
  const node = await h.write('ops', { content: 'A fact', source_id: 's' }, ALL);
  const missing = await h.admin('GET', `/admin/api/node?id=${node.node_id}`, undefined, ALL);
  t.is(missing.status, 400);
  t.is(missing.body.error.code, 'invalid_request');
  t.is((await h.admin('POST', '/admin/api/retrieve', { text: 'fact' }, ALL)).status, 400);
  t.is(
    (await h.admin('POST', '/admin/api/retrieve', { namespace: 'ops', text: 'fact', nonsense: 1 }, ALL)).status,
    400,
  );
  t.is((await h.admin('GET', '/admin/api/feedback?ns=ops', undefined, ALL)).status, 400, 'node_id is required');
  t.is((await h.admin('GET', `/admin/api/node?ns=ops&id=${node.node_id}`, undefined, RW)).status, 403);
  t.is((await h.admin('GET', `/admin/api/node?ns=ops&id=${node.node_id}`)).status, 401);
  t.is(
    (await h.admin('GET', `/admin/api/node?ns=ops&id=${node.node_id}`, undefined, OTHER)).status,
    404,
    "another tenant's namespace is not there",
  );
});
