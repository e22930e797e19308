// tier: quick
import test from 'ava';
import { request, startHarness } from './knowledge-harness.js';
import { startKnowledgeStore } from '../../wiring/knowledge-store.js';
import { silentLogger } from '../../platform/logger.js';
import { testConfig } from '../helpers/test-config.js';

test('retract-source writes new versions that keep the past readable in valid and transaction time', async (t) => {
  const h = await startHarness(t);
  const w = await h.write('n', {
    content: 'service X is healthy',
    source_id: 'monitor',
    vector: [1, 0],
    valid_from: '2026-01-01T00:00:00Z',
  });
  const beforeRetraction = new Date().toISOString();
  await new Promise((r) => setImmediate(r));
  const res = await h.call('POST', `/v1/namespaces/n/nodes/${w.node_id}/retract-source`, {
    source_id: 'monitor',
    reason: 'sensor broken',
    effective_at: '2026-06-01T00:00:00Z',
  });
  t.is(res.status, 204);
  const afterRetraction = new Date(Date.now() + 1).toISOString();

  // Now, valid in March: the split-off past part is still supported.
  const march = await h.call('GET', `/v1/namespaces/n/nodes/${w.node_id}?valid_at=2026-03-01T00:00:00Z`);
  t.like(march.body, { retracted: false, source_ids: ['monitor'], valid_to: '2026-06-01T00:00:00.000Z' });
  // Now, valid in July: retracted, no supporter left.
  const july = await h.call('GET', `/v1/namespaces/n/nodes/${w.node_id}?valid_at=2026-07-01T00:00:00Z`);
  t.like(july.body, { retracted: true, source_ids: [], valid_from: '2026-06-01T00:00:00.000Z' });
  // As known before the retraction, July still shows the original version.
  const julyKnownBefore = await h.call(
    'GET',
    `/v1/namespaces/n/nodes/${w.node_id}?valid_at=2026-07-01T00:00:00Z&known_at=${beforeRetraction}`,
  );
  t.like(julyKnownBefore.body, { retracted: false, version: 1, source_ids: ['monitor'] });

  // Retrieval applies the same rules.
  const retrieveAt = (extra: Record<string, unknown>) => h.retrieve('n', { vector: [1, 0], ...extra });
  t.is((await retrieveAt({ valid_at: '2026-03-01T00:00:00Z' })).length, 1);
  t.is((await retrieveAt({ as_of: '2026-03-01T00:00:00Z' })).length, 1);
  t.is((await retrieveAt({ valid_at: '2026-07-01T00:00:00Z' })).length, 0);
  t.is((await retrieveAt({ valid_at: '2026-07-01T00:00:00Z', known_at: beforeRetraction })).length, 1);
  t.is((await retrieveAt({ valid_at: '2026-07-01T00:00:00Z', known_at: afterRetraction })).length, 0);
  t.is((await retrieveAt({ valid_at: '2026-07-01T00:00:00Z', include_retracted: true })).length, 1);
  t.is((await retrieveAt({ valid_at: '2025-12-01T00:00:00Z' })).length, 0);
  // Lexical retrieval obeys the same anchors.
  t.is((await h.retrieve('n', { text: 'healthy', valid_at: '2026-07-01T00:00:00Z' })).length, 0);
  t.is(
    (await h.retrieve('n', { text: 'healthy', valid_at: '2026-07-01T00:00:00Z', known_at: beforeRetraction })).length,
    1,
  );
  t.is((await h.retrieve('n', { text: 'healthy', valid_at: '2026-03-01T00:00:00Z' })).length, 1);

  // Nothing was overwritten: the history has the original, the past part and the retracted part.
  const history = await h.call('GET', `/v1/namespaces/n/nodes/${w.node_id}?valid_at=2026-03-01T00:00:00Z&history=true`);
  t.deepEqual(
    history.body.history.map((v: any) => [v.version, v.change, v.retracted, v.tx_to === null]),
    [
      [1, 'create', false, false],
      [2, 'retract-split', false, true],
      [3, 'retract-source', true, true],
    ],
  );
});

test('retract-source keeps other sources corroboration and only retracts when the last supporter goes', async (t) => {
  const h = await startHarness(t, { SVC_KNOWLEDGE_DEDUP_DEFAULT: 'true' });
  const w = await h.write('n', { content: 'fact', source_id: 'a' });
  await h.write('n', { content: 'fact', source_id: 'b' });
  t.is(
    (await h.call('POST', `/v1/namespaces/n/nodes/${w.node_id}/retract-source`, { source_id: 'a', reason: 'wrong' }))
      .status,
    204,
  );
  const afterA = await h.call('GET', `/v1/namespaces/n/nodes/${w.node_id}`);
  t.like(afterA.body, { retracted: false, source_ids: ['b'] });
  t.is((await h.retrieve('n', { text: 'fact' })).length, 1);
  t.is(
    (
      await h.call('POST', `/v1/namespaces/n/nodes/${w.node_id}/retract-source`, {
        source_id: 'b',
        reason: 'also wrong',
      })
    ).status,
    204,
  );
  const afterB = await h.call('GET', `/v1/namespaces/n/nodes/${w.node_id}`);
  t.like(afterB.body, { retracted: true, source_ids: [] });
  t.is((await h.retrieve('n', { text: 'fact' })).length, 0);
  const again = await h.call('POST', `/v1/namespaces/n/nodes/${w.node_id}/retract-source`, {
    source_id: 'b',
    reason: 'twice',
  });
  t.is(again.status, 404);
  t.is(again.body.error.code, 'support_not_found');
});

test('node reads answer 404 for unknown nodes, other namespaces and times before validity', async (t) => {
  const h = await startHarness(t);
  const w = await h.write('n', { content: 'x', source_id: 's', valid_from: '2026-01-01T00:00:00Z' });
  await h.write('m', { content: 'y', source_id: 's' });
  t.is((await h.call('GET', `/v1/namespaces/m/nodes/${w.node_id}`)).status, 404);
  t.is((await h.call('GET', '/v1/namespaces/n/nodes/not-a-uuid')).status, 404);
  const early = await h.call('GET', `/v1/namespaces/n/nodes/${w.node_id}?valid_at=2025-01-01T00:00:00Z`);
  t.is(early.status, 404);
  t.is(early.body.error.code, 'node_not_visible');
  t.is((await h.call('GET', `/v1/namespaces/n/nodes/${w.node_id}?known_at=nonsense`)).status, 400);
});

test('bi-temporal vector reads survive a restart that rebuilds the vector index from sqlite-vec', async (t) => {
  const config = testConfig(t);
  const first = await startKnowledgeStore(config, silentLogger());
  const post = (base: string, path: string, json: unknown) => request(base + path, { method: 'POST', json });
  const w = await post(first.url, '/v1/namespaces/n/write', {
    content: 'cached fact',
    source_id: 'a',
    vector: [0, 1, 0],
  });
  const known = new Date().toISOString();
  await new Promise((r) => setImmediate(r));
  t.is(
    (
      await post(first.url, `/v1/namespaces/n/nodes/${w.body.node_id}/retract-source`, {
        source_id: 'a',
        reason: 'stale',
      })
    ).status,
    204,
  );
  await first.close();
  const second = await startKnowledgeStore(config, silentLogger());
  t.teardown(() => second.close());
  const now = await post(second.url, '/v1/namespaces/n/retrieve', { vector: [0, 1, 0] });
  t.deepEqual(now.body.results, []);
  const before = await post(second.url, '/v1/namespaces/n/retrieve', { vector: [0, 1, 0], known_at: known });
  t.deepEqual(
    before.body.results.map((r: any) => r.id),
    [w.body.node_id],
  );
  const retracted = await post(second.url, '/v1/namespaces/n/retrieve', { vector: [0, 1, 0], include_retracted: true });
  t.deepEqual(
    retracted.body.results.map((r: any) => [r.id, r.retracted]),
    [[w.body.node_id, true]],
  );
});
