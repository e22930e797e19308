// tier: quick
/**
 * The origin's documented curl and GraphQL examples (antiartificial/contextdb docs/api/rest.md,
 * docs/api/graphql.md), sent as documented with the placeholder ids replaced by real ones.
 * Examples that post to `https://ops.example.test` (handoff webhook plan, delivery, retry) need an
 * outside network to resolve and are left out.
 */
import test from 'ava';
import { startHarness, type Harness } from '../knowledge-harness.js';
import { gql } from '../review-helpers.js';

const NS = '/v1/namespaces/my-app';

async function seeded(h: Harness) {
  const a = (
    await h.call('POST', `${NS}/write`, {
      mode: 'general',
      content: 'Go 1.22 added routing patterns to net/http',
      source_id: 'docs-crawler',
      labels: ['Claim'],
      vector: [0.1, 0.2, 0.3],
      confidence: 0.9,
    })
  ).body.node_id as string;
  const b = (
    await h.write('my-app', {
      content: 'Routing patterns API uses a rate limit of 100 requests',
      source_id: 'docs-crawler',
      labels: ['Claim', 'Verified'],
      vector: [0.3, 0.2, 0.1],
      edges: [{ to: a, type: 'supports', weight: 0.8 }],
    })
  ).node_id as string;
  return { a, b };
}

test('documented REST write, retrieve, text, label filter, stats and ping examples answer as documented', async (t) => {
  const h = await startHarness(t);
  const { a } = await seeded(h);
  const retrieve = await h.call('POST', `${NS}/retrieve`, {
    vector: [0.1, 0.2, 0.3],
    top_k: 5,
    score_params: { similarity_weight: 0.5, confidence_weight: 0.3, recency_weight: 0.15, utility_weight: 0.05 },
  });
  t.is(retrieve.status, 200);
  t.is(retrieve.body.results[0].id, a);
  t.true(
    (await h.call('POST', `${NS}/retrieve`, { text: 'What changed in Go 1.22?', top_k: 5 })).body.results.length > 0,
  );
  const labelled = await h.call('POST', `${NS}/retrieve`, {
    text: 'routing patterns',
    labels: ['Claim', 'Verified'],
    top_k: 10,
  });
  t.is(labelled.body.results.length, 1);
  t.like((await h.call('GET', '/v1/stats')).body, { mode: 'embedded', retrieval_total: 3 });
  t.deepEqual((await h.call('GET', '/v1/ping')).body, { status: 'ok' });
});

test('documented review, feedback, narrative, gaps and plan curl examples answer 2xx', async (t) => {
  const h = await startHarness(t);
  const { a } = await seeded(h);
  const calls: [string, string, unknown?][] = [
    ['GET', `${NS}/review/queue?source_trust_drop_threshold=0.2&source_refutation_threshold=2`],
    ['GET', `${NS}/review/queue?type=source_trust_anomaly&source_id=docs-crawler&status=open`],
    ['GET', `${NS}/review/queue?type=low_confidence&status=assigned&owner=alice`],
    ['GET', `${NS}/review/escalations?escalation_after_hours=72`],
    ['POST', `${NS}/review/escalation-digests`, { escalation_after_hours: 72, note: 'weekly review handoff' }],
    ['GET', `${NS}/review/escalation-digests`],
    ['GET', `${NS}/review/handoffs?owner=alice&escalation_level=review_overdue`],
    ['GET', `${NS}/review/handoff-webhooks/receipts?after=2026-05-31T00:00:00Z`],
    ['GET', `${NS}/review/handoff-webhooks/retry-candidates`],
    ['GET', `${NS}/review/handoff-webhooks/retry-recommendations`],
    ['GET', `${NS}/review/handoff-webhooks/retry-fatigue`],
    [
      'POST',
      `${NS}/review/decisions`,
      {
        review_id: `low_confidence:${a}`,
        status: 'assigned',
        owner: 'alice',
        decision: 'needs_evidence',
        note: 'check source logs',
      },
    ],
    ['GET', `${NS}/review/decisions?after=2026-05-30T00:00:00Z`],
    ['GET', `${NS}/nodes/${a}/narrative`],
    ['POST', `${NS}/gaps`, { top_k: 20, min_gap_size: 0.5, max_gaps: 10 }],
    ['POST', `${NS}/acquisition/plan`, { budget: 5, max_gaps: 3 }],
    ['POST', `${NS}/nodes/${a}/validate`, {}],
    ['GET', `${NS}/feedback/events`],
  ];
  for (const [method, path, body] of calls) {
    const res = await h.call(method, path, body);
    t.true(res.status >= 200 && res.status < 300, `${method} ${path}: ${res.status} ${res.text}`);
  }
  const filtered = await h.call('GET', `${NS}/review/queue?type=low_confidence&status=open`);
  t.true(
    filtered.body.items.every((i: any) => i.type === 'low_confidence'),
    'the origin `type` parameter filters like `types`',
  );
});

test('documented admin curl examples answer on the admin listener', async (t) => {
  const h = await startHarness(t);
  const { a, b } = await seeded(h);
  for (const path of [
    '/admin/api/stats',
    '/admin/api/metrics',
    '/admin/api/ranking-eval?top_k=5',
    `/admin/api/belief?ns=my-app&id=${a}`,
    '/admin/api/search?ns=my-app&q=auth&limit=10',
    '/healthz',
    '/metrics',
    '/debug/pprof/',
  ]) {
    const res = await h.admin('GET', path);
    t.is(res.status, 200, `${path}: ${res.text.slice(0, 200)}`);
  }
  const explain = await h.admin('POST', '/admin/api/explain-rank', {
    namespace: 'my-app',
    node_id: a,
    other_node_id: b,
    text: 'optional query',
  });
  t.is(explain.status, 200, explain.text);
});

test('documented GraphQL examples answer data without errors', async (t) => {
  const h = await startHarness(t);
  const { a, b } = await seeded(h);
  const queries = [
    '{ search(namespace: "my-app", query: "routing patterns", limit: 5) { totalCount nodes { id content score scoreBreakdown { similarity confidence recency utility } sources { name effectiveCredibility } } } }',
    '{ version { version apiVersion docsVersion compatibility latestMigration releaseNotesPath features { name status since } migrations { version name } } features { name status since description } migrations { version name } }',
    '{ search(namespace: "my-app" query: "rate limit" filter: { contentContains: "API" sourceCredibilityMin: 0.5 edgeTypes: ["supports"] edgeWeightMin: 0.5 }) { totalCount nodes { id content credibility edges { type weight to { id content } } sources { name effectiveCredibility } } } }',
    `query { narrative(namespace: "my-app", nodeId: "${a}") { summary claim { text confidence sourceId } evidence { text relation } contradictions { text relation } confidenceExplanation }
      knowledgeGaps(namespace: "my-app", topK: 20, minGapSize: 0.5, maxGaps: 10) { coverageScore totalNodes gaps { nearestTopics densityScore temporalGapSeconds } } }`,
    `mutation { validateClaim(namespace: "my-app", nodeId: "${a}") { nodeId action confidence sourceCredibility } }`,
    'query { feedbackEvents(namespace: "my-app", after: "2026-05-30T00:00:00Z") { eventId nodeId nodeVersion action sourceId sourceCredibility txTime } }',
    'query { sourceTrustTimeline(namespace: "my-app", sourceId: "docs-crawler") { nodeId action sourceCredibility txTime } }',
    `query { explainRank(namespace: "my-app" nodeId: "${a}" otherNodeId: "${b}") { winnerNodeId loserNodeId margin summary
      node { nodeId score scoreBreakdown { similarity confidence recency utility } evidence { compoundConfidence supportCount links { nodeId edgeId edgeWeight confidence text } } }
      other { nodeId score scoreBreakdown { similarity confidence recency utility } evidence { compoundConfidence supportCount } } factors { factor nodeContribution otherContribution delta } } }`,
    `query { reviewQueue(namespace: "my-app" lowConfidenceThreshold: 0.35 sourceTrustDropThreshold: 0.2 sourceRefutationThreshold: 2 escalationAfterHours: 72 sourceAnomalyEscalationPriority: 0.9
      types: ["source_trust_anomaly"] sourceId: "docs-crawler" status: "open" limit: 20) { id type priority reason nodeId nodeIds sourceId action text createdAt suggestedAction confidence status owner decision note reviewedAt escalated escalationLevel escalationReason escalationAgeHours } }`,
    'query { reviewEscalationDigest(namespace: "my-app", escalationAfterHours: 72) { totalEscalated groups { owner sourceId type escalationLevel count maxPriority maxAgeHours reviewIds } } }',
    'mutation { recordReviewEscalationDigest(namespace: "my-app", escalationAfterHours: 72, note: "weekly review handoff") { totalEscalated note } }',
    `query { reviewEscalationDigests(namespace: "my-app") { note totalEscalated groups { owner count escalationLevel } }
      reviewHandoffs(namespace: "my-app", owner: "alice", escalationLevel: "review_overdue") { note totalEscalated groups { owner count escalationLevel } } }`,
    `mutation { recordReviewDecision(namespace: "my-app" reviewId: "low_confidence:${a}" status: "assigned" owner: "alice" decision: "needs_evidence" note: "check source logs") { reviewId status owner decision } }`,
    'query { reviewDecisions(namespace: "my-app") { reviewId status owner decision note recheckAt txTime } }',
    'query { acquisitionPlan(namespace: "my-app", budget: 5, maxGaps: 3) { namespace coverageScore totalNodes tasks { id type priority description prompt relatedNodeIds nearestTopics } } }',
    'query { reviewHandoffRetryFatigue(namespace: "my-app") { targetUrl candidates totalAttempts ready waiting statusFamilies { family count } owners { owner count } escalationLevels { escalationLevel count } lastStatusCode lastError } }',
  ];
  for (const query of queries) {
    const res = await gql(h, query);
    t.is(res.status, 200, `${query.slice(0, 80)}: ${res.text.slice(0, 300)}`);
    t.is(res.body.errors, undefined, `${query.slice(0, 80)}: ${JSON.stringify(res.body.errors)}`);
  }
});
