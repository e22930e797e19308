// tier: quick
import test from 'ava';
import { startHarness, axisVector } from './knowledge-harness.js';

function sumBreakdown(r: any): number {
  return (
    r.score_breakdown.similarity + r.score_breakdown.confidence + r.score_breakdown.recency + r.score_breakdown.utility
  );
}

test('retrieve by vector ranks the nearest node first with raw components and a breakdown summing to the score', async (t) => {
  const h = await startHarness(t);
  const near = await h.write('n', { content: 'near', source_id: 's', vector: axisVector(4, 0), confidence: 0.8 });
  await h.write('n', { content: 'far', source_id: 's', vector: axisVector(4, 2) });
  const results = await h.retrieve('n', { vector: axisVector(4, 0, 0.2) });
  t.is(results[0].id, near.node_id);
  for (const r of results) {
    t.true(Math.abs(sumBreakdown(r) - r.score) < 1e-9);
    t.is(r.retrieval_source, 'vector');
    for (const key of ['similarity_score', 'confidence_score', 'recency_score', 'utility_score'])
      t.true(r[key] >= 0 && r[key] <= 1);
  }
  // general mode weights .40/.30/.20/.10: similarity contribution is .4 x raw similarity.
  t.true(Math.abs(results[0].score_breakdown.similarity - 0.4 * results[0].similarity_score) < 1e-12);
  t.true(Math.abs(results[0].confidence_score - 0.8 * 0.6) < 1e-9);
});

test('retrieve uses per-mode default weights and score_params overrides', async (t) => {
  const h = await startHarness(t);
  await h.write('b', { content: 'belief', source_id: 's', vector: [1, 0], mode: 'belief_system' });
  const [r] = await h.retrieve('b', { vector: [1, 0] });
  t.true(Math.abs(r.score_breakdown.confidence - 0.45 * r.confidence_score) < 1e-12);
  t.true(Math.abs(r.score_breakdown.similarity - 0.3 * r.similarity_score) < 1e-12);
  const [o] = await h.retrieve('b', {
    vector: [1, 0],
    score_params: { similarity_weight: 1, confidence_weight: 0, recency_weight: 0, utility_weight: 0 },
  });
  t.is(o.score, o.similarity_score);
  t.deepEqual(o.score_breakdown, { similarity: o.similarity_score, confidence: 0, recency: 0, utility: 0 });
});

test('retrieve defaults top_k to 10 and honours top_k', async (t) => {
  const h = await startHarness(t);
  for (let i = 0; i < 15; i++) await h.write('n', { content: `item ${i}`, source_id: 's', vector: axisVector(16, i) });
  t.is((await h.retrieve('n', { vector: axisVector(16, 0) })).length, 10);
  t.is((await h.retrieve('n', { vector: axisVector(16, 0), top_k: 3 })).length, 3);
});

test('retrieve with several vectors fuses their candidates', async (t) => {
  const h = await startHarness(t);
  const a = await h.write('n', { content: 'a', source_id: 's', vector: axisVector(4, 0) });
  const b = await h.write('n', { content: 'b', source_id: 's', vector: axisVector(4, 1) });
  await h.write('n', { content: 'c', source_id: 's', vector: axisVector(4, 2) });
  const results = await h.retrieve('n', { vectors: [axisVector(4, 0), axisVector(4, 1)], top_k: 2 });
  t.deepEqual(results.map((r) => r.id).sort(), [a.node_id, b.node_id].sort());
  t.is(results[0].retrieval_source, 'vectors');
});

test('retrieve by text matches mixed identifiers and quoted phrases literally', async (t) => {
  const h = await startHarness(t);
  const id = await h.write('n', { content: 'Incident ERR-4021 hit the payment gateway', source_id: 's' });
  await h.write('n', { content: 'Incident ERR 4021x was a different code', source_id: 's' });
  await h.write('n', { content: 'err code 4021 mentioned separately', source_id: 's' });
  const phrase = await h.write('n', { content: 'the quick brown fox jumps', source_id: 's' });
  await h.write('n', { content: 'the brown quick fox sleeps', source_id: 's' });
  t.deepEqual(
    (await h.retrieve('n', { text: 'ERR-4021' })).map((r) => r.id),
    [id.node_id],
  );
  t.deepEqual(
    (await h.retrieve('n', { text: 'what about err-4021 in payments?' })).map((r) => r.id),
    [id.node_id],
  );
  t.deepEqual(
    (await h.retrieve('n', { text: '"quick brown fox"' })).map((r) => r.id),
    [phrase.node_id],
  );
  const words = await h.retrieve('n', { text: 'fox' });
  t.is(words.length, 2);
  t.is(words[0].retrieval_source, 'text');
  t.deepEqual(await h.retrieve('n', { text: '"nothing like this"' }), []);
});

test('retrieve by seed_ids walks edges to neighbours', async (t) => {
  const h = await startHarness(t);
  const seed = await h.write('n', { content: 'seed', source_id: 's' });
  const strong = await h.write('n', {
    content: 'strong',
    source_id: 's',
    edges: [{ to: seed.node_id, type: 'about', weight: 0.9 }],
  });
  const weak = await h.write('n', { content: 'weak', source_id: 's' });
  await h.call('POST', `/v1/namespaces/n/nodes/${seed.node_id}/edges`, {
    to: weak.node_id,
    type: 'mentions',
    weight: 0.2,
  });
  const twoHop = await h.write('n', {
    content: 'two hops',
    source_id: 's',
    edges: [{ to: strong.node_id, type: 'about', weight: 1 }],
  });
  await h.write('n', { content: 'isolated', source_id: 's' });
  const results = await h.retrieve('n', {
    seed_ids: [seed.node_id],
    score_params: { similarity_weight: 1, confidence_weight: 0, recency_weight: 0, utility_weight: 0 },
  });
  t.deepEqual(
    results.map((r) => r.id),
    [strong.node_id, twoHop.node_id, weak.node_id],
  );
  t.is(results[0].retrieval_source, 'graph');
  t.is(results[0].similarity_score, 0.9);
  t.is(results[1].similarity_score, 0.45);
});

test('retrieve keeps only nodes having all requested labels', async (t) => {
  const h = await startHarness(t);
  const both = await h.write('n', { content: 'both', source_id: 's', labels: ['a', 'b'], vector: [1, 0] });
  await h.write('n', { content: 'one', source_id: 's', labels: ['a'], vector: [1, 0.01] });
  const r = await h.retrieve('n', { vector: [1, 0], labels: ['a', 'b'] });
  t.deepEqual(
    r.map((x) => x.id),
    [both.node_id],
  );
});

test('retrieve filters by include and exclude source ids and removes excluded evidence from ranking', async (t) => {
  const h = await startHarness(t, { SVC_KNOWLEDGE_DEDUP_DEFAULT: 'true' });
  const shared = await h.write('n', { content: 'shared fact', source_id: 'a', vector: [1, 0] });
  await h.write('n', { content: 'shared fact', source_id: 'b', vector: [1, 0] });
  const onlyB = await h.write('n', { content: 'b only', source_id: 'b', vector: [0, 1] });
  const inc = await h.retrieve('n', { vector: [1, 0], include_source_ids: ['a'] });
  t.deepEqual(
    inc.map((r) => r.id),
    [shared.node_id],
  );
  const all = await h.retrieve('n', { vector: [1, 0] });
  const sharedAll = all.find((r) => r.id === shared.node_id);
  t.deepEqual(sharedAll.source_ids, ['a', 'b']);
  const exc = await h.retrieve('n', { vector: [1, 0], exclude_source_ids: ['b'] });
  t.deepEqual(
    exc.map((r) => r.id),
    [shared.node_id],
  );
  t.deepEqual(exc[0].source_ids, ['a']);
  t.true(exc[0].confidence_score < sharedAll.confidence_score);
  t.false(exc.some((r) => r.id === onlyB.node_id));
});

test('retrieve fills top_k even when filters reject most nearest neighbours', async (t) => {
  const h = await startHarness(t);
  for (let i = 0; i < 120; i++) {
    await h.write('n', {
      content: `noise ${i}`,
      source_id: 's',
      labels: ['noise'],
      vector: axisVector(8, 0, 0.001 * i),
    });
  }
  for (let i = 0; i < 5; i++)
    await h.write('n', {
      content: `wanted ${i}`,
      source_id: 's',
      labels: ['wanted'],
      vector: axisVector(8, 2 + i, 0.2, 0),
    });
  const r = await h.retrieve('n', { vector: axisVector(8, 0), labels: ['wanted'], top_k: 5, candidate_k: 10 });
  t.is(r.length, 5);
});

const SAME = [0, 0, 1, 0, 0, 0, 0, 0];

test('retrieve returns every admitted node that shares a vector, by vector and by text', async (t) => {
  const h = await startHarness(t);
  for (const content of ['tok both', 'tok red', 'tok blue'])
    t.true((await h.write('n', { content, source_id: 'one', vector: SAME })).admitted);
  const byVector = await h.retrieve('n', { vector: SAME, top_k: 50 });
  t.deepEqual(byVector.map((r) => r.content).sort(), ['tok blue', 'tok both', 'tok red']);
  const byText = await h.retrieve('n', { text: 'tok', top_k: 50 });
  t.deepEqual(byText.map((r) => r.content).sort(), ['tok blue', 'tok both', 'tok red']);
});

test('retrieve fills top_k from nodes with identical vectors', async (t) => {
  const h = await startHarness(t);
  for (let i = 0; i < 12; i++) await h.write('n', { content: `tok ${i}`, source_id: 'one', vector: SAME });
  t.is((await h.retrieve('n', { vector: SAME, top_k: 3 })).length, 3);
  t.is((await h.retrieve('n', { text: 'tok', top_k: 3 })).length, 3);
  t.is((await h.retrieve('n', { vector: SAME, top_k: 12 })).length, 12);
});

test('label, source and retraction filters over same-vector nodes keep exactly the matching ones', async (t) => {
  const h = await startHarness(t);
  const red = await h.write('n', { content: 'tok red', source_id: 'alpha', vector: SAME, labels: ['color', 'warm'] });
  await h.write('n', { content: 'tok blue', source_id: 'beta', vector: SAME, labels: ['color'] });
  const gone = await h.write('n', { content: 'tok grey', source_id: 'gamma', vector: SAME, labels: ['color'] });
  await h.write('n', { content: 'tok plain', source_id: 'alpha', vector: SAME });
  t.is(
    (
      await h.call('POST', `/v1/namespaces/n/nodes/${gone.node_id}/retract-source`, {
        source_id: 'gamma',
        reason: 'wrong',
      })
    ).status,
    204,
  );
  const contents = async (body: Record<string, unknown>) =>
    (await h.retrieve('n', { vector: SAME, top_k: 50, ...body })).map((r) => r.content).sort();
  t.deepEqual(await contents({}), ['tok blue', 'tok plain', 'tok red']);
  t.deepEqual(await contents({ labels: ['color'] }), ['tok blue', 'tok red']);
  t.deepEqual(await contents({ labels: ['color', 'warm'] }), ['tok red']);
  t.deepEqual(await contents({ include_source_ids: ['alpha'] }), ['tok plain', 'tok red']);
  t.deepEqual(await contents({ exclude_source_ids: ['alpha'] }), ['tok blue']);
  t.deepEqual(await contents({ include_retracted: true }), ['tok blue', 'tok grey', 'tok plain', 'tok red']);
  t.deepEqual(
    (await h.retrieve('n', { text: 'tok', labels: ['warm'] })).map((r) => r.id),
    [red.node_id],
  );
});

test('retrieve sends the fused candidates to a configured reranker, up to rerank_k', async (t) => {
  const seen: number[] = [];
  const h = await startHarness(
    t,
    {},
    {
      reranker: {
        async rerank(_q, candidates) {
          seen.push(candidates.length);
          return candidates.map((c) => (c.content === 'last' ? 1 : 0));
        },
      },
    },
  );
  await h.write('n', { content: 'first', source_id: 's', vector: [1, 0] });
  await h.write('n', { content: 'last', source_id: 's', vector: [0, 1] });
  const r = await h.retrieve('n', {
    vector: [1, 0.01],
    rerank_k: 2,
    score_params: { similarity_weight: 1, confidence_weight: 0, recency_weight: 0, utility_weight: 0 },
  });
  t.is(r[0].content, 'last');
  t.deepEqual(seen, [2]);
});

test('retrieve rejects an empty query and unknown namespaces cleanly', async (t) => {
  const h = await startHarness(t);
  await h.write('n', { content: 'x', source_id: 's' });
  const empty = await h.call('POST', '/v1/namespaces/n/retrieve', {});
  t.is(empty.status, 400);
  const missing = await h.call('POST', '/v1/namespaces/nope/retrieve', { text: 'x' });
  t.is(missing.status, 404);
  t.is(missing.body.error.code, 'namespace_not_found');
  const bad = await h.call('POST', '/v1/namespaces/n/retrieve', { text: 'x', top_k: 0 });
  t.is(bad.status, 400);
  const badTime = await h.call('POST', '/v1/namespaces/n/retrieve', { text: 'x', valid_at: '2020-13-45' });
  t.is(badTime.status, 400);
});

test('retrieve scores recency by memory type decay', async (t) => {
  const h = await startHarness(t);
  const tenHoursAgo = new Date(Date.now() - 10 * 3_600_000).toISOString();
  await h.write('n', {
    content: 'episodic',
    source_id: 's',
    vector: [1, 0],
    mem_type: 'episodic',
    valid_from: tenHoursAgo,
  });
  await h.write('n', {
    content: 'semantic',
    source_id: 's',
    vector: [1, 0.6],
    mem_type: 'semantic',
    valid_from: tenHoursAgo,
  });
  await h.write('n', {
    content: 'working',
    source_id: 's',
    vector: [0.3, 1],
    mem_type: 'working',
    valid_from: tenHoursAgo,
  });
  const r = await h.retrieve('n', { vector: [1, 0] });
  const by = Object.fromEntries(r.map((x) => [x.content, x.recency_score]));
  t.true(Math.abs(by.episodic - Math.exp(-0.08 * 10)) < 1e-3);
  t.true(Math.abs(by.semantic - Math.exp(-0.02 * 10)) < 1e-3);
  t.true(by.working < 1e-9);
});
