// tier: full
import test from 'ava';
import { startHarness, type Harness } from './knowledge-harness.js';

async function gql(h: Harness, query: string, variables?: Record<string, unknown>, token?: string) {
  return h.call('POST', '/graphql', { query, ...(variables ? { variables } : {}) }, token);
}

const SEARCH = `query S($filter: SearchFilter, $limit: Int) {
  search(namespace: "kb", query: "database", filter: $filter, limit: $limit) {
    totalCount
    nodes { id content score scoreBreakdown { similarity confidence recency utility } credibility
      edges { type weight to { id content } } sources { name effectiveCredibility } }
  }
}`;

async function seed(h: Harness) {
  await h.call('POST', '/v1/namespaces/kb/sources/label', { source_id: 'trusted', credibility: 0.9 });
  await h.call('POST', '/v1/namespaces/kb/sources/label', { source_id: 'shaky', credibility: 0.2 });
  const pg = await h.write('kb', {
    content: 'Postgres is the primary database',
    source_id: 'trusted',
    valid_from: '2025-01-01T00:00:00Z',
  });
  const redis = await h.write('kb', {
    content: 'Redis is a cache database',
    source_id: 'shaky',
    valid_from: '2026-01-01T00:00:00Z',
    edges: [{ to: pg.node_id, type: 'replicates', weight: 0.8 }],
  });
  const old = await h.write('kb', {
    content: 'MySQL was the old database',
    source_id: 'trusted',
    valid_from: '2020-01-01T00:00:00Z',
    edges: [{ to: pg.node_id, type: 'replaced_by', weight: 0.3 }],
  });
  return { pg: pg.node_id as string, redis: redis.node_id as string, old: old.node_id as string };
}

test('graphql search returns scored nodes with edges and sources', async (t) => {
  const h = await startHarness(t);
  const ids = await seed(h);
  const res = await gql(h, SEARCH);
  t.is(res.status, 200);
  t.is(res.body.errors, undefined);
  const { totalCount, nodes } = res.body.data.search;
  t.is(totalCount, 3);
  const redis = nodes.find((n: any) => n.id === ids.redis);
  t.deepEqual(redis.edges, [
    { type: 'replicates', weight: 0.8, to: { id: ids.pg, content: 'Postgres is the primary database' } },
  ]);
  t.deepEqual(redis.sources, [{ name: 'shaky', effectiveCredibility: 0.2 }]);
  t.true(Math.abs(redis.credibility - 0.2) < 1e-12);
  for (const n of nodes) {
    const b = n.scoreBreakdown;
    t.true(Math.abs(b.similarity + b.confidence + b.recency + b.utility - n.score) < 1e-9);
  }
  const limited = await gql(h, SEARCH, { limit: 1 });
  t.is(limited.body.data.search.totalCount, 3);
  t.is(limited.body.data.search.nodes.length, 1);
});

test('graphql search filters by content, edges, credibility and validity with and, or and not', async (t) => {
  const h = await startHarness(t);
  const ids = await seed(h);
  const run = async (filter: unknown) =>
    ((await gql(h, SEARCH, { filter })).body.data.search.nodes as any[]).map((n) => n.id).sort();
  t.deepEqual(await run({ contentContains: 'postgres' }), [ids.pg]);
  t.deepEqual(await run({ hasEdgeTo: ids.pg }), [ids.old, ids.redis].sort());
  t.deepEqual(await run({ hasEdgeTo: ids.pg, edgeWeightMin: 0.5 }), [ids.redis]);
  t.deepEqual(await run({ edgeTypes: ['replaced_by'] }), [ids.old]);
  t.deepEqual(await run({ sourceCredibilityMin: 0.5 }), [ids.old, ids.pg].sort());
  t.deepEqual(await run({ sourceCredibilityMax: 0.5 }), [ids.redis]);
  t.deepEqual(await run({ validFromBefore: '2024-01-01T00:00:00Z' }), [ids.old]);
  t.deepEqual(await run({ validAt: '2025-06-01T00:00:00Z' }), [ids.old, ids.pg].sort());
  t.deepEqual(await run({ validToAfter: '2030-01-01T00:00:00Z' }), [ids.old, ids.pg, ids.redis].sort());
  t.deepEqual(await run({ similarityMin: 0 }), [ids.old, ids.pg, ids.redis].sort());
  t.deepEqual(await run({ similarityMin: 1.01 }), []);
  t.deepEqual(
    await run({ or: [{ contentContains: 'redis' }, { contentContains: 'mysql' }] }),
    [ids.old, ids.redis].sort(),
  );
  t.deepEqual(await run({ and: [{ sourceCredibilityMin: 0.5 }, { not: { contentContains: 'mysql' } }] }), [ids.pg]);
  const bad = await gql(h, SEARCH, { filter: { validAt: 'soon' } });
  t.is(bad.status, 400);
  t.is(bad.body.errors[0].extensions.code, 'invalid_request');
});

test('graphql search falls back to a content scan when nothing matches lexically', async (t) => {
  const h = await startHarness(t);
  await h.write('default', { content: 'xyzzy-plugh magic words', source_id: 's' });
  const res = await gql(h, '{ search(query: "zzy-plu") { totalCount nodes { content } } }');
  t.deepEqual(res.body.data.search, { totalCount: 1, nodes: [{ content: 'xyzzy-plugh magic words' }] });
});

test('graphql exposes version, features and migrations like REST', async (t) => {
  const h = await startHarness(t);
  const res = await gql(
    h,
    '{ version { version apiVersion docsVersion compatibility latestMigration releaseNotesPath features { name status since } migrations { version name } } features { name description } migrations { version name appliedAt } }',
  );
  t.is(res.status, 200);
  const rest = (await h.call('GET', '/v1/version')).body;
  t.like(res.body.data.version, {
    version: rest.version,
    apiVersion: 'v1',
    docsVersion: rest.docs_version,
    compatibility: rest.compatibility,
    latestMigration: rest.latest_migration,
  });
  t.deepEqual(
    res.body.data.features.map((f: any) => f.name),
    rest.features.map((f: any) => f.name),
  );
  t.deepEqual(
    res.body.data.migrations.map((m: any) => m.version),
    Array.from({ length: rest.latest_migration }, (_, i) => i + 1),
  );
  t.true(rest.latest_migration >= 8, 'the text-index merge migration (ADR 0207) is applied');
});

test('graphql explainRank compares two nodes factor by factor', async (t) => {
  const h = await startHarness(t);
  const ids = await seed(h);
  const res = await gql(
    h,
    `{ explainRank(namespace: "kb", nodeId: "${ids.pg}", otherNodeId: "${ids.redis}", query: "primary database") {
    winnerNodeId loserNodeId margin summary
    node { nodeId score scoreBreakdown { similarity confidence recency utility } evidence { compoundConfidence supportCount links { nodeId edgeId edgeWeight confidence text } } }
    other { nodeId score }
    factors { factor nodeContribution otherContribution delta } } }`,
  );
  t.is(res.status, 200, JSON.stringify(res.body));
  const r = res.body.data.explainRank;
  t.is(r.winnerNodeId, ids.pg);
  t.is(r.loserNodeId, ids.redis);
  t.true(Math.abs(r.margin - (r.node.score - r.other.score)) < 1e-12);
  t.deepEqual(
    r.factors.map((f: any) => f.factor),
    ['similarity', 'confidence', 'recency', 'utility'],
  );
  t.is(r.node.evidence.supportCount, 1);
  t.is(r.node.evidence.links.length, 2);
  t.true(Math.abs(r.factors.reduce((s: number, f: any) => s + f.delta, 0) - r.margin) < 1e-9);
});

test('graphql maps domain errors through the REST error table and rejects invalid queries', async (t) => {
  const h = await startHarness(t);
  const missing = await gql(h, '{ search(namespace: "nope", query: "x") { totalCount } }');
  t.is(missing.status, 404);
  t.is(missing.body.errors[0].extensions.code, 'namespace_not_found');
  const syntax = await gql(h, '{ search(');
  t.is(syntax.status, 400);
  t.is(syntax.body.errors[0].extensions.code, 'graphql_validation_failed');
  const noQuery = await gql(h, '{ search { totalCount } }');
  t.is(noQuery.status, 400);
  const body = await h.call('POST', '/graphql', { variables: {} });
  t.is(body.status, 400);
  t.is(body.body.error.code, 'invalid_request');
});
