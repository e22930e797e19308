// tier: quick
/**
 * The origin's REST request structs (antiartificial/contextdb internal/server/rest.go) on the
 * routes no SDK wraps: every field is accepted with the origin's meaning, `mode` is applied to the
 * namespace, and fields neither the spec nor the origin defines are still refused.
 */
import test from 'ava';
import { startHarness, type Harness } from '../knowledge-harness.js';
import { gql } from '../review-helpers.js';

const NS = '/v1/namespaces/rs';

async function pair(h: Harness) {
  const a = (
    await h.write('rs', {
      mode: 'general',
      content: 'Claim A about caching',
      source_id: 's1',
      labels: ['cache'],
      vector: [1, 0, 0],
      confidence: 0.9,
    })
  ).node_id as string;
  const b = (
    await h.write('rs', {
      mode: 'general',
      content: 'Claim B about caching',
      source_id: 's2',
      labels: ['cache'],
      vector: [0, 1, 0],
      confidence: 0.4,
      edges: [{ to: a, type: 'supports' }],
    })
  ).node_id as string;
  const c = (
    await h.write('rs', {
      content: 'Claim C two hops away',
      source_id: 's3',
      vector: [0, 0, 1],
      edges: [{ to: b, type: 'related' }],
    })
  ).node_id as string;
  return { a, b, c };
}

test('rank/explain accepts {mode, node_id, other_node_id, text, vector, score_params, as_of, max_depth}', async (t) => {
  const h = await startHarness(t);
  const { a, b, c } = await pair(h);
  const body = {
    mode: 'general',
    node_id: a,
    other_node_id: b,
    text: 'caching',
    vector: [1, 0, 0],
    score_params: { similarity_weight: 0, confidence_weight: 0, recency_weight: 0, utility_weight: 0, decay_alpha: 0 },
    as_of: new Date().toISOString(),
    max_depth: 2,
  };
  const res = await h.call('POST', `${NS}/rank/explain`, body);
  t.is(res.status, 200, res.text);
  t.is(res.body.winner_node_id, a);
  const links = res.body.other.evidence.links.map((l: any) => l.node_id);
  t.true(links.includes(c) && links.includes(a), 'max_depth 2 walks two hops of edges for evidence');
  const shallow = await h.call('POST', `${NS}/rank/explain`, { ...body, max_depth: 0 });
  t.false(
    shallow.body.node.evidence.links.map((l: any) => l.node_id).includes(c),
    'max_depth 0 is the origin unset: one hop',
  );
  const past = await h.call('POST', `${NS}/rank/explain`, { ...body, as_of: '2000-01-01T00:00:00Z' });
  t.is(past.status, 404, 'as_of anchors valid time: neither node was valid in 2000');
});

test('feedback accepts {mode, reason, quality}; quality grades how far useful moves utility', async (t) => {
  const h = await startHarness(t);
  const { a, b } = await pair(h);
  const refute = await h.call('POST', `${NS}/nodes/${a}/refute`, {
    mode: 'general',
    reason: 'contradicted by the runbook',
  });
  t.is(refute.status, 200, refute.text);
  t.like(refute.body, { node_id: a, action: 'refute' });
  t.is(typeof refute.body.confidence, 'number');
  const full = await h.call('POST', `${NS}/nodes/${b}/useful`, { mode: 'general', quality: 5 });
  t.is(full.body.utility, 0.1);
  const half = await h.call('POST', `${NS}/nodes/${a}/useful`, { mode: 'general', quality: 2 });
  t.is(half.body.utility, 0.04);
  const unset = await h.call('POST', `${NS}/nodes/${a}/stale`, { mode: 'general', reason: '', quality: 0 });
  t.is(unset.status, 200, 'the origin sends zero values for unset fields');
  const events = (await h.call('GET', `${NS}/feedback/events`)).body.events;
  t.is(events[0].reason, 'contradicted by the runbook');
  t.is((await h.call('POST', `${NS}/nodes/${a}/useful`, { quality: 6 })).status, 400);
});

test('gaps and acquisition/plan accept {mode, top_k, min_gap_size, max_gaps, budget}; min_gap_size keeps sparser gaps only', async (t) => {
  const h = await startHarness(t);
  await pair(h);
  const all = await h.call('POST', `${NS}/gaps`, { mode: 'general', top_k: 20, max_gaps: 10 });
  t.is(all.status, 200, all.text);
  const sparse = await h.call('POST', `${NS}/gaps`, { mode: 'general', top_k: 20, min_gap_size: 0.5, max_gaps: 10 });
  t.is(sparse.status, 200, sparse.text);
  t.true(sparse.body.gaps.every((g: any) => g.density_score < 0.5));
  t.deepEqual(
    sparse.body.gaps.map((g: any) => g.id),
    all.body.gaps.filter((g: any) => g.density_score < 0.5).map((g: any) => g.id),
  );
  const plan = await h.call('POST', `${NS}/acquisition/plan`, {
    mode: 'general',
    top_k: 20,
    min_gap_size: 0.5,
    max_gaps: 3,
    budget: 5,
  });
  t.is(plan.status, 200, plan.text);
  t.like(plan.body, { namespace: 'rs', budget: 5 });
  t.true(Array.isArray(plan.body.tasks));
});

test('mode creates a namespace on create routes and a conflicting mode is a clear 409 everywhere', async (t) => {
  const h = await startHarness(t);
  t.is(
    (
      await h.call('POST', '/v1/namespaces/beliefs/sources/label', {
        mode: 'belief_system',
        external_id: 'x',
        labels: [],
      })
    ).status,
    200,
  );
  const conflict = await h.call('POST', '/v1/namespaces/beliefs/write', {
    mode: 'general',
    content: 'c',
    source_id: 's',
  });
  t.is(conflict.status, 409);
  t.like(conflict.body.error, { code: 'namespace_mode_mismatch', details: { mode: 'belief_system' } });
  const w = await h.write('beliefs', { mode: 'belief_system', content: 'c', source_id: 's' });
  for (const [path, body] of [
    ['gaps', {}],
    ['acquisition/plan', {}],
    [`nodes/${w.node_id}/validate`, {}],
    ['review/decisions', { review_id: `low_confidence:${w.node_id}`, status: 'assigned' }],
  ] as const) {
    const res = await h.call('POST', `/v1/namespaces/beliefs/${path}`, { ...body, mode: 'procedural' });
    t.is(res.status, 409, path);
    t.is(res.body.error.code, 'namespace_mode_mismatch', path);
  }
  t.is((await h.call('POST', '/v1/namespaces/beliefs/gaps', { mode: 'belief_system' })).status, 200);
  t.is((await h.call('POST', '/v1/namespaces/beliefs/gaps', { mode: 'sideways' })).status, 400);
});

test('fields neither the spec nor the origin defines are still refused with the error shape', async (t) => {
  const h = await startHarness(t);
  await pair(h);
  for (const [path, body] of [
    ['write', { content: 'x', source_id: 's', surprise: 1 }],
    ['retrieve', { vector: [1, 0, 0], score_params: { decay_beta: 1 } }],
    ['sources/label', { external_id: 'x', trust: 1 }],
    ['ingest', { text: 'x', source_id: 's', extractor: 'llm' }],
    ['acquisition/execute', { connectors: [{ id: 'a', type: 'search', secret: 'x' }] }],
    ['acquisition/execute', { connectors: [{ id: 'a', type: 'teleport' }] }],
    ['acquisition/execute', { connectors: [{ id: 'a', type: 'search', headers: { 'Content-Length': '1' } }] }],
    [
      'acquisition/execute',
      {
        connectors: [
          { id: 'a', type: 'search' },
          { id: 'a', type: 'crawler' },
        ],
      },
    ],
    ['acquisition/execute', { connectors: [{ id: 'a', type: 'search' }], execute: true }],
    ['acquisition/execute', { connector: { url: 'https://x.example' }, connectors: [{ id: 'a', type: 'search' }] }],
    ['sources/label', { source_id: 'a', external_id: 'b' }],
  ] as const) {
    const res = await h.call('POST', `${NS}/${path}`, body);
    t.is(res.status, 400, `${path} ${JSON.stringify(body)}: ${res.text}`);
    t.is(typeof res.body.error.code, 'string');
    t.is(typeof res.body.error.message, 'string');
  }
});

test('GraphQL reviewQueue takes mode, after and a Float sourceAnomalyEscalationPriority; knowledgeGaps takes a Float minGapSize', async (t) => {
  const h = await startHarness(t);
  await h.write('rs', { mode: 'general', content: 'A shaky claim', source_id: 's', confidence: 0.1 });
  const q = await gql(
    h,
    '{ reviewQueue(namespace: "rs", mode: "general", after: "2000-01-01T00:00:00Z", sourceAnomalyEscalationPriority: 0.9, lowConfidenceThreshold: 0.35) { id type priority createdAt } }',
  );
  t.is(q.status, 200, q.text);
  t.is(q.body.data.reviewQueue[0].type, 'low_confidence');
  const later = await gql(h, '{ reviewQueue(namespace: "rs", after: "2999-01-01T00:00:00Z") { id } }');
  t.deepEqual(later.body.data.reviewQueue, []);
  const wrongMode = await gql(h, '{ reviewQueue(namespace: "rs", mode: "procedural") { id } }');
  t.is(wrongMode.body.errors[0].extensions.code, 'namespace_mode_mismatch');
  const g = await gql(
    h,
    '{ knowledgeGaps(namespace: "rs", topK: 20, minGapSize: 0.5, maxGaps: 10) { coverageScore totalNodes gaps { nearestTopics densityScore temporalGapSeconds } } }',
  );
  t.is(g.status, 200, g.text);
  t.true(g.body.data.knowledgeGaps.gaps.every((x: any) => x.densityScore < 0.5));
});
