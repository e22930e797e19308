// tier: quick
import test from 'ava';
import { startHarness, axisVector } from './knowledge-harness.js';

const NIL = '00000000-0000-0000-0000-000000000000';

test('write admits a node and returns its UUID', async (t) => {
  const h = await startHarness(t);
  const res = await h.write('notes', {
    content: 'Postgres runs on port 5432',
    source_id: 'docs',
    labels: ['db'],
    properties: { team: 'infra' },
    confidence: 0.9,
    mem_type: 'semantic',
    model_id: 'm1',
    vector: [1, 0, 0],
    valid_from: '2026-01-01T00:00:00Z',
  });
  t.true(res.admitted);
  t.regex(res.node_id, /^[0-9a-f-]{36}$/);
  t.is(res.conflict_ids, undefined);
  const node = await h.call('GET', `/v1/namespaces/notes/nodes/${res.node_id}`);
  t.is(node.status, 200);
  t.like(node.body, {
    id: res.node_id,
    content: 'Postgres runs on port 5432',
    labels: ['db'],
    properties: { team: 'infra' },
    confidence: 0.9,
    mem_type: 'semantic',
    model_id: 'm1',
    has_vector: true,
    valid_from: '2026-01-01T00:00:00.000Z',
    valid_to: null,
    source_ids: ['docs'],
    version: 1,
  });
});

test('write from a source below the credibility floor is rejected with the nil UUID and a reason', async (t) => {
  const h = await startHarness(t);
  const label = await h.call('POST', '/v1/namespaces/n/sources/label', { source_id: 'rumours', credibility: 0.04 });
  t.is(label.status, 200);
  const res = await h.write('n', { content: 'The moon is cheese', source_id: 'rumours' });
  t.false(res.admitted);
  t.is(res.node_id, NIL);
  t.regex(res.reason, /credibility 0\.04, below the admission floor 0\.05/);
  await h.call('POST', '/v1/namespaces/n/sources/label', { source_id: 'edge', credibility: 0.05 });
  t.true((await h.write('n', { content: 'At the floor', source_id: 'edge' })).admitted);
});

test('write reports conflicting claims with the same subject and predicate but stays admitted', async (t) => {
  const h = await startHarness(t);
  const first = await h.write('n', {
    content: 'api runs 3 replicas',
    source_id: 'a',
    properties: { subject: 'api', predicate: 'replicas', object: 3 },
  });
  const same = await h.write('n', {
    content: 'api has three replicas',
    source_id: 'b',
    properties: { subject: 'API', predicate: 'replicas', object: 3 },
  });
  t.is(same.conflict_ids, undefined);
  const second = await h.write('n', {
    content: 'api runs 5 replicas',
    source_id: 'c',
    properties: { subject: 'api', predicate: 'replicas', object: 5 },
  });
  t.true(second.admitted);
  t.deepEqual(second.conflict_ids.sort(), [first.node_id, same.node_id].sort());
  const unrelated = await h.write('n', {
    content: 'web runs 5 replicas',
    source_id: 'c',
    properties: { subject: 'web', predicate: 'replicas', object: 5 },
  });
  t.is(unrelated.conflict_ids, undefined);
});

test('write deduplicates by fingerprint only when opted in, and adds the new source as corroboration', async (t) => {
  const h = await startHarness(t);
  const first = await h.write('n', { content: 'Disk  is FULL on db-1', source_id: 'a' });
  const plain = await h.write('n', { content: 'disk is full on db-1', source_id: 'b' });
  t.not(plain.node_id, first.node_id);
  const dedup = await h.write('n', { content: 'disk is full on DB-1 ', source_id: 'c', dedup: true });
  t.is(dedup.node_id, first.node_id);
  t.true(dedup.deduplicated);
  const node = await h.call('GET', `/v1/namespaces/n/nodes/${first.node_id}?history=true`);
  t.deepEqual(node.body.source_ids, ['a', 'c']);
  t.is(node.body.version, 2);
  t.is(node.body.history.length, 2);
  t.not(node.body.history[0].tx_to, null);
});

test('write deduplicates by server default unless skip_dedup is set', async (t) => {
  const h = await startHarness(t, { SVC_KNOWLEDGE_DEDUP_DEFAULT: 'true' });
  const first = await h.write('n', { content: 'same text', source_id: 'a' });
  const again = await h.write('n', { content: 'same text', source_id: 'a' });
  t.is(again.node_id, first.node_id);
  const skipped = await h.write('n', { content: 'same text', source_id: 'a', skip_dedup: true });
  t.not(skipped.node_id, first.node_id);
  const both = await h.call('POST', '/v1/namespaces/n/write', {
    content: 'x',
    source_id: 'a',
    dedup: true,
    skip_dedup: true,
  });
  t.is(both.status, 400);
});

test('write with a request_id is idempotent', async (t) => {
  const h = await startHarness(t);
  const first = await h.write('n', { content: 'once', source_id: 'a', request_id: 'r-1' });
  const again = await h.write('n', { content: 'once', source_id: 'a', request_id: 'r-1' });
  t.is(again.node_id, first.node_id);
  t.true(again.replayed);
  const racing = await Promise.all(
    [1, 2, 3].map(() => h.write('n', { content: 'race', source_id: 'a', request_id: 'r-2' })),
  );
  t.is(new Set(racing.map((r) => r.node_id)).size, 1);
  t.is((await h.call('GET', '/v1/namespaces/n/recovery/pending')).body.total, 0);
});

test('write creates edges to existing nodes and refuses unknown targets', async (t) => {
  const h = await startHarness(t);
  const target = await h.write('n', { content: 'target', source_id: 'a' });
  const from = await h.write('n', {
    content: 'from',
    source_id: 'a',
    edges: [{ to: target.node_id, type: 'depends_on', weight: 0.7 }],
  });
  const node = await h.call('GET', `/v1/namespaces/n/nodes/${from.node_id}`);
  t.like(node.body.edges[0], { from: from.node_id, to: target.node_id, type: 'depends_on', weight: 0.7 });
  const bad = await h.call('POST', '/v1/namespaces/n/write', {
    content: 'x',
    source_id: 'a',
    edges: [{ to: '11111111-1111-1111-1111-111111111111', type: 'depends_on' }],
  });
  t.is(bad.status, 400);
  t.is(bad.body.error.code, 'edge_target_not_found');
  const edge = await h.call('POST', `/v1/namespaces/n/nodes/${target.node_id}/edges`, {
    to: from.node_id,
    type: 'used_by',
    weight: 0.5,
  });
  t.is(edge.status, 201);
  t.like(edge.body, { from: target.node_id, to: from.node_id, type: 'used_by', weight: 0.5 });
  const self = await h.call('POST', `/v1/namespaces/n/nodes/${target.node_id}/edges`, {
    to: target.node_id,
    type: 'loops',
  });
  t.is(self.status, 409);
  const badType = await h.call('POST', `/v1/namespaces/n/nodes/${target.node_id}/edges`, {
    to: from.node_id,
    type: 'Bad Type',
  });
  t.is(badType.status, 400);
  const upper = await h.write('n', {
    content: 'upper',
    source_id: 'a',
    edges: [{ to: target.node_id.toUpperCase(), type: 'depends_on' }],
  });
  t.true(upper.admitted);
});

test('write rejects malformed bodies with 400 and problem details, never 5xx', async (t) => {
  const h = await startHarness(t);
  const cases: unknown[] = [
    {},
    { content: 'x' },
    { content: 'x', source_id: 's', confidence: 1.5 },
    { content: 'x', source_id: 's', mem_type: 'dream' },
    { content: 'x', source_id: 's', mode: 'chaos' },
    { content: 'x', source_id: 's', vector: [0, 0, 0] },
    { content: 'x', source_id: 's', vector: ['a'] },
    { content: 'x', source_id: 's', valid_from: 'yesterday' },
    { content: 'x', source_id: 's', unknown: true },
    [1, 2],
  ];
  for (const body of cases) {
    const res = await h.call('POST', '/v1/namespaces/n/write', body);
    t.is(res.status, 400, JSON.stringify(body));
    t.truthy(res.body.error.code);
  }
  const badNs = await h.call('POST', '/v1/namespaces/bad%20name/write', { content: 'x', source_id: 's' });
  t.is(badNs.status, 400);
  const raw = await fetch(`${h.store.url}/v1/namespaces/n/write`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"content":',
  });
  t.is(raw.status, 400);
});

test('write keeps a namespace mode and refuses to change it', async (t) => {
  const h = await startHarness(t);
  await h.write('beliefs', { content: 'x', source_id: 's', mode: 'belief_system' });
  await h.write('beliefs', { content: 'y', source_id: 's' });
  const clash = await h.call('POST', '/v1/namespaces/beliefs/write', {
    content: 'z',
    source_id: 's',
    mode: 'procedural',
  });
  t.is(clash.status, 409);
  t.is(clash.body.error.code, 'namespace_mode_mismatch');
});

test('write of vectors with a new dimension creates its vector table', async (t) => {
  const h = await startHarness(t);
  await h.write('n', { content: 'three', source_id: 's', vector: axisVector(3, 0) });
  await h.write('n', { content: 'five', source_id: 's', vector: axisVector(5, 0) });
  const r5 = await h.retrieve('n', { vector: axisVector(5, 0) });
  t.deepEqual(
    r5.map((r) => r.content),
    ['five'],
  );
  const stats = await h.call('GET', '/v1/stats');
  t.deepEqual(stats.body.vectors_indexed, { 3: 1, 5: 1 });
});
