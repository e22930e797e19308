// tier: quick
/**
 * The origin's admin dashboard JSON APIs on the admin listener (antiartificial/contextdb
 * internal/admin/admin.go and its documented curl examples): query parameters, response fields,
 * admin permission and the error shape.
 */
import test from 'ava';
import { startHarness } from '../knowledge-harness.js';

const ADMIN = 'ops:admin:admin-secret-123';
const WRITER = 'ops:read+write:writer-secret-123';

async function seeded(t: Parameters<typeof startHarness>[0]) {
  const h = await startHarness(t, { SVC_KNOWLEDGE_TOKENS: `${ADMIN},${WRITER}` });
  const a = (
    await h.write(
      'my-app',
      { content: 'Auth tokens expire after one hour', source_id: 'auth-docs', labels: ['auth'], vector: [1, 0] },
      WRITER,
    )
  ).node_id as string;
  const b = (
    await h.write(
      'my-app',
      {
        content: 'Deploys run nightly',
        source_id: 'ops-wiki',
        labels: ['deploy'],
        vector: [0, 1],
        edges: [{ to: a, type: 'contradicts' }],
      },
      WRITER,
    )
  ).node_id as string;
  return { h, a, b };
}

test('admin stats and metrics answer the origin runtime fields and need the admin permission', async (t) => {
  const { h } = await seeded(t);
  t.is((await h.admin('GET', '/admin/api/stats', undefined, WRITER)).status, 403);
  const stats = await h.admin('GET', '/admin/api/stats', undefined, ADMIN);
  t.is(stats.status, 200, stats.text);
  t.like(stats.body, { mode: 'embedded', ingest_total: 2, ingest_admitted: 2, nodes: 2 });
  const metrics = await h.admin('GET', '/admin/api/metrics', undefined, ADMIN);
  t.is(metrics.status, 200);
  t.like(metrics.body, {
    mode: 'embedded',
    health: { status: 'healthy' },
    ingest: { total: 2, admitted: 2, rejected: 0, admission_rate: 1 },
    retrieval: { total: 0, errors: 0, error_rate: 0 },
  });
  t.deepEqual(Object.keys(metrics.body.latency).sort(), ['mean_ms', 'mean_us', 'p50_ms', 'p50_us', 'p95_ms', 'p95_us']);
});

test('admin ranking-eval runs the representative corpus and reports MRR, pass/fail and categories', async (t) => {
  const { h } = await seeded(t);
  const res = await h.admin('GET', '/admin/api/ranking-eval?top_k=5', undefined, ADMIN);
  t.is(res.status, 200, res.text);
  t.like(res.body, {
    schema_version: 1,
    corpus: 'representative',
    top_k: 5,
    total_queries: 6,
    passed_queries: 6,
    failed_queries: 0,
    mean_reciprocal_rank: 1,
  });
  t.deepEqual(
    res.body.categories.map((c: any) => c.category),
    ['lexical', 'poisoning', 'procedural', 'semantic', 'temporal'],
  );
  const q = res.body.queries.find((x: any) => x.id === 'poisoning-credibility');
  t.like(q, { passed: true, correct_rank: 1, expected_rank_cutoff: 1 });
  t.true(q.top_results.length === 2 && q.top_results[0].expected && !q.top_results[1].expected);
  for (const key of [
    'score',
    'similarity_score',
    'confidence_score',
    'recency_score',
    'utility_score',
    'score_breakdown',
    'retrieval_source',
  ])
    t.true(key in q.top_results[0], key);
  t.is((await h.admin('GET', '/admin/api/ranking-eval?top_k=26', undefined, ADMIN)).status, 400);
  t.is(
    (await h.call('GET', '/v1/stats', undefined, ADMIN)).body.nodes,
    2,
    'the evaluation corpus never lands in tenant data',
  );
});

test('admin search scans recent valid nodes by text, label, source id and node id', async (t) => {
  const { h, a, b } = await seeded(t);
  const byText = await h.admin('GET', '/admin/api/search?ns=my-app&q=auth&limit=10', undefined, ADMIN);
  t.is(byText.status, 200, byText.text);
  t.like(byText.body, { namespace: 'my-app', query: 'auth', count: 1 });
  t.like(byText.body.results[0], { id: a, match_reason: 'text', source_id: 'auth-docs', labels: ['auth'] });
  t.like((await h.admin('GET', '/admin/api/search?ns=my-app&q=ops-wiki', undefined, ADMIN)).body.results[0], {
    id: b,
    match_reason: 'source',
  });
  t.like((await h.admin('GET', '/admin/api/search?ns=my-app&q=deploy', undefined, ADMIN)).body.results[0], {
    id: b,
    match_reason: 'text',
  });
  // By the short id the console shows: the id's random end (ids are UUIDv7s, whose start is the time
  // shared by nodes written together; ADR 0202).
  const byId = (await h.admin('GET', `/admin/api/search?ns=my-app&q=${a.slice(-8)}`, undefined, ADMIN)).body;
  t.is(byId.count, 1, 'the short id names one node');
  t.like(byId.results[0], { id: a, match_reason: 'id' });
  const recent = (await h.admin('GET', '/admin/api/search?ns=my-app&labels=deploy', undefined, ADMIN)).body;
  t.deepEqual(
    recent.results.map((r: any) => [r.id, r.match_reason]),
    [[b, 'recent']],
  );
  t.is((await h.admin('GET', '/admin/api/search?ns=my-app&limit=500', undefined, ADMIN)).body.count, 2);
  const missing = await h.admin('GET', '/admin/api/search?q=x', undefined, ADMIN);
  t.is(missing.status, 400);
  t.is(missing.body.error.code, 'invalid_request');
});

test('admin belief returns the evidence trail of one claim', async (t) => {
  const { h, a, b } = await seeded(t);
  await h.call('POST', `/v1/namespaces/my-app/nodes/${a}/refute`, { reason: 'rotated keys' }, WRITER);
  const res = await h.admin('GET', `/admin/api/belief?ns=my-app&id=${a}`, undefined, ADMIN);
  t.is(res.status, 200, res.text);
  t.like(res.body, { node: { id: a, content: 'Auth tokens expire after one hour' }, source: { id: 'auth-docs' } });
  t.deepEqual(
    res.body.contradictors.map((c: any) => [c.kind, c.other_node_id]),
    [['edge', b]],
  );
  t.deepEqual(
    res.body.graph_context.map((c: any) => [c.node_id, c.relation]),
    [[b, 'contradicted by']],
  );
  t.is(res.body.confidence_history.length, 2);
  t.like(res.body.source_trust_timeline.at(-1), { action: 'refute', source_id: 'auth-docs' });
  t.like(res.body.counts, { contradictors: 1, graph_neighbors: 1, confidence_versions: 2 });
  t.is(
    (await h.admin('GET', '/admin/api/belief?ns=my-app&id=00000000-0000-0000-0000-000000000001', undefined, ADMIN))
      .status,
    404,
  );
});

test('admin timetravel and diff show a namespace at a time and what changed between two times', async (t) => {
  const { h, a } = await seeded(t);
  const before = new Date().toISOString();
  await h.call('POST', `/v1/namespaces/my-app/nodes/${a}/stale`, {}, WRITER);
  const after = new Date(Date.now() + 1000).toISOString();
  const now = await h.admin(
    'GET',
    `/admin/api/timetravel?ns=my-app&asof=${encodeURIComponent(after)}&labels=auth`,
    undefined,
    ADMIN,
  );
  t.is(now.status, 200, now.text);
  t.like(now.body, { namespace: 'my-app', count: 1 });
  t.like(now.body.nodes[0], { id: a, change: 'feedback-stale' });
  t.is((await h.admin('GET', '/admin/api/timetravel?ns=my-app&asof=2000-01-01', undefined, ADMIN)).body.count, 0);
  const diff = await h.admin(
    'GET',
    `/admin/api/diff?ns=my-app&from=${encodeURIComponent(before)}&to=${encodeURIComponent(after)}`,
    undefined,
    ADMIN,
  );
  t.is(diff.status, 200, diff.text);
  t.deepEqual(
    diff.body.changes.map((c: any) => [c.node_id, c.change]),
    [[a, 'feedback-stale']],
  );
  const bad = await h.admin('GET', '/admin/api/diff?ns=my-app&from=yesterday&to=today', undefined, ADMIN);
  t.is(bad.status, 400);
  t.is(bad.body.error.code, 'invalid_request');
});
