// tier: quick
import test from 'ava';
import { gql, node, startReceiver, startReviewHarness } from '../review-helpers.js';
import { startHarness } from '../knowledge-harness.js';

const ALLOW = { SVC_KNOWLEDGE_ALLOW_PRIVATE_TARGETS: 'true' };
const NS = '/v1/namespaces/n';
const TOKEN = 'connector-token-very-secret-42';

type H = Awaited<ReturnType<typeof startReviewHarness>>;

/** A small graph with one refuted claim, a contradiction, a low-confidence isolated note and a covered topic. */
async function seed(h: H) {
  const billing = await node(h, 'n', {
    content: 'Billing runs nightly',
    source_id: 'wiki',
    labels: ['billing'],
    confidence: 0.9,
  });
  const stripe = await node(h, 'n', {
    content: 'Billing uses the card processor',
    source_id: 'wiki',
    labels: ['billing'],
    edges: [{ to: billing, type: 'related' }],
  });
  await node(h, 'n', {
    content: 'Refunds take five days',
    source_id: 'wiki',
    labels: ['billing'],
    edges: [{ to: stripe, type: 'related' }],
  });
  await node(h, 'n', {
    content: 'The API rate limit is 100',
    source_id: 'docs',
    labels: ['api'],
    properties: { subject: 'api', predicate: 'rate_limit', object: '100' },
  });
  await node(h, 'n', {
    content: 'The API rate limit is 200',
    source_id: 'blog',
    labels: ['api'],
    properties: { subject: 'api', predicate: 'rate_limit', object: '200' },
  });
  const note = await node(h, 'n', { content: 'Old deploy note', source_id: 'chat', labels: ['ops'], confidence: 0.2 });
  t200(await h.call('POST', `${NS}/nodes/${billing}/refute`));
  return { billing, note };
}

function t200(res: { status: number; text: string }) {
  if (res.status !== 200) throw new Error(`expected 200, got ${res.status}: ${res.text}`);
}

async function nodeCount(h: H): Promise<number> {
  return (await h.call('GET', '/v1/stats')).body.nodes as number;
}

test('gaps and the plan are deterministic on a seeded graph, respect the budget and match GraphQL', async (t) => {
  const h = await startReviewHarness(t, ALLOW);
  const { billing, note } = await seed(h);
  const gaps = await h.call('POST', `${NS}/gaps`, {});
  t.is(gaps.status, 200, gaps.text);
  t.like(gaps.body, { namespace: 'n', total_nodes: 6 });
  const ids = gaps.body.gaps.map((g: any) => g.id);
  t.deepEqual(ids.slice(0, 3), [`refuted:${billing}`, ...ids.slice(1, 3).sort()]);
  t.true(ids.includes(`low_confidence:${note}`));
  t.true(ids.includes('thin_topic:api'));
  t.true(ids.includes(`isolated:${note}`));
  t.deepEqual(Object.keys(gaps.body.gaps[0]).sort(), [
    'density_score',
    'description',
    'id',
    'kind',
    'nearest_topics',
    'priority',
    'related_node_ids',
    'temporal_gap_seconds',
  ]);
  t.deepEqual((await h.call('POST', `${NS}/gaps`)).body, gaps.body, 'the same graph gives the same gaps');

  const plan = await h.call('POST', `${NS}/acquisition/plan`, { budget: 4 });
  t.is(plan.status, 200, plan.text);
  t.true(plan.body.budget_used <= 4);
  t.deepEqual(plan.body.tasks.map((x: any) => x.type).slice(0, 3), ['verification', 'verification', 'verification']);
  for (const task of plan.body.tasks) t.regex(task.id, /^acq_(research|crawl|verification|refresh)_[0-9a-f]{16}$/);
  t.deepEqual((await h.call('POST', `${NS}/acquisition/plan`, { budget: 4 })).body, plan.body);
  const big = (await h.call('POST', `${NS}/acquisition/plan`, { budget: 100 })).body;
  t.true(big.tasks.some((x: any) => x.type === 'research'));
  t.true(big.tasks.some((x: any) => x.type === 'crawl'));
  const g = await gql(
    h,
    '{ acquisitionPlan(namespace: "n", budget: 4, maxGaps: 50) { namespace coverageScore totalNodes tasks { id type priority description prompt relatedNodeIds nearestTopics } } }',
  );
  t.is(g.status, 200, g.text);
  t.is(g.body.data.acquisitionPlan.coverageScore, plan.body.coverage_score);
  t.is(g.body.data.acquisitionPlan.totalNodes, 6);
  t.deepEqual(
    g.body.data.acquisitionPlan.tasks.map((x: any) => x.id),
    plan.body.tasks.map((x: any) => x.id),
  );
  const kg = await gql(
    h,
    '{ knowledgeGaps(namespace: "n", topK: 2, minGapSize: 1, maxGaps: 5) { coverageScore totalNodes gaps { nearestTopics densityScore temporalGapSeconds } } }',
  );
  t.is(kg.body.data.knowledgeGaps.gaps.length, 5);
  t.is(kg.body.data.knowledgeGaps.coverageScore, gaps.body.coverage_score);
});

test('execute preview sends nothing and writes nothing', async (t) => {
  const h = await startReviewHarness(t, ALLOW);
  await seed(h);
  const receiver = await startReceiver(t, () => ({ status: 200, body: '{"evidence":[]}' }));
  const before = await nodeCount(h);
  const res = await h.call('POST', `${NS}/acquisition/execute`, {
    connector: { url: receiver.url, token: TOKEN },
    budget: 3,
  });
  t.is(res.status, 200, res.text);
  t.like(res.body, { execute: false, connector_url: receiver.url });
  t.true(res.body.results.length > 0);
  t.like(res.body.results[0], { status: 'planned', attempt: 1 });
  t.is(res.body.results[0].request.idempotency_key, res.body.results[0].idempotency_key);
  t.false(res.text.includes(TOKEN));
  t.is(receiver.received.length, 0);
  t.is(await nodeCount(h), before);
  t.deepEqual((await h.call('GET', `${NS}/acquisition/receipts`)).body.receipts, []);
  t.deepEqual((await h.call('GET', `${NS}/acquisition/review/candidates?status=all`)).body.candidates, []);
});

test('execute with review_before_admission stages candidates without writing nodes; approve admits once and reject admits nothing', async (t) => {
  const h = await startReviewHarness(t, ALLOW);
  await seed(h);
  const receiver = await startReceiver(t, () => ({
    status: 200,
    body: JSON.stringify({
      evidence: [
        {
          content: 'Billing runs nightly at 02:00 UTC',
          source_id: 'runbook',
          url: 'https://example.com/runbook',
          confidence: 0.8,
        },
        { content: 'Billing runs hourly', source_id: 'forum' },
      ],
    }),
  }));
  const task = (await h.call('POST', `${NS}/acquisition/plan`, { budget: 1 })).body.tasks[0];
  const before = await nodeCount(h);
  const res = await h.call('POST', `${NS}/acquisition/execute`, {
    execute: true,
    review_before_admission: true,
    task_ids: [task.id],
    connector: { url: receiver.url, token: TOKEN, timeout_ms: 5000 },
  });
  t.is(res.status, 200, res.text);
  t.false(res.text.includes(TOKEN), 'the token is never returned');
  const [result] = res.body.results;
  t.like(result, { task_id: task.id, status: 'succeeded', attempt: 1, admitted: [] });
  t.is(result.candidate_ids.length, 2);
  t.is(await nodeCount(h), before, 'no graph node is written before review');

  // What the connector received.
  t.is(receiver.received.length, 1);
  const got = receiver.received[0]!;
  t.is(got.method, 'POST');
  t.is(got.headers.authorization, `Bearer ${TOKEN}`);
  t.is(got.headers['idempotency-key'], result.idempotency_key);
  t.is(got.headers['x-svc-event'], 'knowledge.acquisition.task');
  t.is(got.headers['x-svc-attempt'], '1');
  const sent = JSON.parse(got.body);
  t.like(sent, { type: 'knowledge.acquisition.task', namespace: 'n', idempotency_key: result.idempotency_key });
  t.like(sent.task, { id: task.id, type: 'verification', prompt: task.prompt });
  t.deepEqual(sent.task.related_node_ids, task.related_node_ids);

  const staged = (await h.call('GET', `${NS}/acquisition/review/candidates`)).body.candidates;
  t.deepEqual(
    staged.map((c: any) => c.id),
    result.candidate_ids,
  );
  t.like(staged[0], {
    status: 'staged',
    review_required: true,
    content: 'Billing runs nightly at 02:00 UTC',
    source_id: 'runbook',
    evidence_url: 'https://example.com/runbook',
    node_id: null,
  });

  const statsBefore = (await h.call('GET', '/v1/stats')).body;
  const approve = await h.call('POST', `${NS}/acquisition/review/candidates/${staged[0].id}/approve`, {
    actor: 'alice',
    note: 'matches the runbook',
  });
  t.is(approve.status, 200, approve.text);
  // The approval wrote a node: it counts as a write in /v1/stats (issue 29).
  const statsAfter = (await h.call('GET', '/v1/stats')).body;
  t.is(statsAfter.ingest_total, statsBefore.ingest_total + 1);
  t.is(statsAfter.ingest_admitted, statsBefore.ingest_admitted + 1);
  t.like(approve.body, {
    admitted: true,
    replayed: false,
    candidate: { status: 'approved', actor: 'alice', note: 'matches the runbook' },
  });
  const nodeId = approve.body.node_id;
  const admitted = await h.call('GET', `${NS}/nodes/${nodeId}`);
  t.is(admitted.status, 200);
  t.is(admitted.body.content, 'Billing runs nightly at 02:00 UTC');
  t.is(await nodeCount(h), before + 1);
  const again = await h.call('POST', `${NS}/acquisition/review/candidates/${staged[0].id}/approve`);
  t.is(again.status, 200);
  t.like(again.body, { node_id: nodeId, replayed: true });
  t.is(await nodeCount(h), before + 1, 're-approval admits nothing new');

  const reject = await h.call('POST', `${NS}/acquisition/review/candidates/${staged[1].id}/reject`, {
    actor: 'bob',
    note: 'forum rumour',
  });
  t.is(reject.status, 200, reject.text);
  t.like(reject.body.candidate, { status: 'rejected', actor: 'bob', note: 'forum rumour', node_id: null });
  t.is(await nodeCount(h), before + 1);
  const rejectAgain = await h.call('POST', `${NS}/acquisition/review/candidates/${staged[1].id}/reject`);
  t.is(rejectAgain.status, 409);
  t.is(rejectAgain.body.error.code, 'candidate_already_decided');
  t.is((await h.call('POST', `${NS}/acquisition/review/candidates/${staged[1].id}/approve`)).status, 409);
  t.is((await h.call('POST', `${NS}/acquisition/review/candidates/${staged[0].id}/reject`)).status, 409);
  t.deepEqual((await h.call('GET', `${NS}/acquisition/review/candidates`)).body.candidates, []);
  t.is((await h.call('GET', `${NS}/acquisition/review/candidates?status=rejected`)).body.candidates.length, 1);

  const dbText = JSON.stringify(
    h.store.services.core.db.prepare('SELECT * FROM kn_acquisition_receipts, kn_acquisition_candidates').all(),
  );
  t.false(dbText.includes(TOKEN), 'the token is not stored');
});

test('receipts are append-only with retry classification: 503 then 200 resolves, 400 stays a permanent candidate', async (t) => {
  const h = await startReviewHarness(t, ALLOW);
  await seed(h);
  const receiver = await startReceiver(t, (_r, n) => {
    if (n === 1) return { status: 503, body: 'busy' };
    if (n === 2) return { status: 400, body: '{"error":"bad task"}' };
    return {
      status: 200,
      body: JSON.stringify({
        evidence: [{ content: 'The API rate limit is 100 requests per minute', source_id: 'api-docs' }],
      }),
    };
  });
  const [a, b] = (await h.call('POST', `${NS}/acquisition/plan`, { budget: 2 })).body.tasks;
  const run = (id: string) =>
    h.call('POST', `${NS}/acquisition/execute`, { execute: true, task_ids: [id], connector: { url: receiver.url } });

  const first = await run(a.id);
  t.like(first.body.results[0], {
    status: 'failed',
    attempt: 1,
    receipt: { outcome: 'failed', retry_class: 'retryable', status_code: 503, error: 'target answered 503' },
  });
  const second = await run(b.id);
  t.like(second.body.results[0], {
    status: 'failed',
    attempt: 1,
    receipt: { outcome: 'failed', retry_class: 'permanent', status_code: 400 },
  });

  let candidates = (await h.call('GET', `${NS}/acquisition/retry-candidates`)).body.candidates;
  t.deepEqual(
    candidates.map((c: any) => [c.task_id, c.retry_class, c.attempts, c.last_status_code]),
    [
      [a.id, 'retryable', 1, 503],
      [b.id, 'permanent', 1, 400],
    ],
  );
  const recs = (await h.call('GET', `${NS}/acquisition/retry-recommendations`)).body.recommendations;
  t.like(recs[0], { task_id: a.id, retry_class: 'retryable', attempts: 1, delay_seconds: 60, ready: false });
  t.like(recs[1], { task_id: b.id, retry_class: 'permanent', ready: false });
  t.regex(recs[1].reason, /permanent failure/);
  h.clock.now += 61_000;
  t.true((await h.call('GET', `${NS}/acquisition/retry-recommendations`)).body.recommendations[0].ready);

  const before = await nodeCount(h);
  const third = await run(a.id);
  t.like(third.body.results[0], {
    status: 'succeeded',
    attempt: 2,
    idempotency_key: first.body.results[0].idempotency_key,
    receipt: { outcome: 'succeeded', retry_class: 'none', status_code: 200, evidence_count: 1 },
  });
  t.is(third.body.results[0].admitted.length, 1, 'without review the evidence is admitted');
  t.is(await nodeCount(h), before + 1);
  t.deepEqual(
    receiver.received.map((r) => r.headers['x-svc-attempt']),
    ['1', '1', '2'],
  );
  t.is(receiver.received[0]!.headers['idempotency-key'], receiver.received[2]!.headers['idempotency-key']);

  candidates = (await h.call('GET', `${NS}/acquisition/retry-candidates`)).body.candidates;
  t.deepEqual(
    candidates.map((c: any) => c.task_id),
    [b.id],
    'only unresolved failures remain',
  );
  const receipts = (await h.call('GET', `${NS}/acquisition/receipts`)).body.receipts;
  t.deepEqual(
    receipts.map((r: any) => [r.task_id, r.attempt, r.outcome, r.retry_class]),
    [
      [a.id, 1, 'failed', 'retryable'],
      [b.id, 1, 'failed', 'permanent'],
      [a.id, 2, 'succeeded', 'none'],
    ],
  );
  t.deepEqual(receipts[0], first.body.results[0].receipt, 'earlier receipts are unchanged');

  // Re-running a succeeded task sends nothing and duplicates nothing.
  const rerun = await h.call('POST', `${NS}/acquisition/execute`, {
    execute: true,
    task_ids: [a.id],
    connector: { url: receiver.url },
  });
  t.is(rerun.status, 200, rerun.text);
  t.like(rerun.body.results[0], { status: 'already_succeeded', attempt: 2, admitted: [] });
  t.is(receiver.received.length, 3);
  t.is(await nodeCount(h), before + 1);
  t.is((await h.call('GET', `${NS}/acquisition/receipts`)).body.receipts.length, 3);
});

test('acquisition rejects bad input with 4xx JSON errors', async (t) => {
  const h = await startReviewHarness(t);
  await seed(h);
  const E = `${NS}/acquisition/execute`;
  const cases: [string, string, unknown, number, string][] = [
    ['POST', E, {}, 400, 'invalid_request'],
    ['POST', E, { connector: { url: 'http://127.0.0.1:9/x' } }, 400, 'target_not_allowed'],
    ['POST', E, { connector: { url: 'ftp://example.com/' } }, 400, 'invalid_target_url'],
    ['POST', E, { connector: { url: 'https://user:pw@example.com/' } }, 400, 'invalid_target_url'],
    ['POST', E, { connector: { url: 'http://x' }, budget: 5000 }, 400, 'invalid_request'],
    ['POST', E, { connector: { url: 'http://x', surprise: 1 } }, 400, 'invalid_request'],
    ['POST', E, { connector: { url: 'http://x' }, task_ids: ['nope'] }, 400, 'invalid_request'],
    ['POST', `${NS}/acquisition/plan`, { budget: -1 }, 400, 'invalid_request'],
    ['POST', `${NS}/acquisition/plan`, { max_gaps: 0 }, 400, 'invalid_request'],
    ['POST', `${NS}/gaps`, { top_k: 'three' }, 400, 'invalid_request'],
    ['POST', `${NS}/gaps`, { min_topic_nodes: 0 }, 400, 'invalid_request'],
    ['POST', '/v1/namespaces/missing/acquisition/plan', {}, 404, 'namespace_not_found'],
    [
      'POST',
      `${NS}/acquisition/review/candidates/cand_000000000000000000000000/approve`,
      {},
      404,
      'candidate_not_found',
    ],
    [
      'POST',
      `${NS}/acquisition/review/candidates/cand_000000000000000000000000/reject`,
      { actor: 7 },
      400,
      'invalid_request',
    ],
    ['GET', `${NS}/acquisition/review/candidates?status=maybe`, undefined, 400, 'invalid_request'],
    ['GET', `${NS}/acquisition/receipts?limit=0`, undefined, 400, 'invalid_request'],
  ];
  for (const [method, path, body, status, code] of cases) {
    const res = await h.call(method, path, body);
    t.is(res.status, status, `${method} ${path} ${JSON.stringify(body)}: ${res.text}`);
    t.is(res.body.error?.code, code, `${method} ${path} ${JSON.stringify(body)}`);
    t.truthy(res.body.error.message);
  }
  const unknownTask = await h.call('POST', E, {
    connector: { url: 'http://93.184.215.14/x' },
    task_ids: ['acq_research_0000000000000000'],
  });
  t.is(unknownTask.status, 404, unknownTask.text);
  t.is(unknownTask.body.error.code, 'task_not_found');
  const g = await gql(h, '{ acquisitionPlan(namespace: "n", budget: -1) { totalNodes } }');
  t.is(g.body.errors[0].extensions.code, 'invalid_request');
});

test('acquisition follows tenancy and permissions like the other knowledge routes', async (t) => {
  const h = await startHarness(t, {
    SVC_KNOWLEDGE_TOKENS: 'acme:read+write:acme-secret,acme:read:acme-reader,other:read+write:other-secret',
  });
  await h.write('n', { content: 'a lone fact', source_id: 's', labels: ['x'] }, 'acme:read+write:acme-secret');
  t.is((await h.call('POST', `${NS}/acquisition/plan`, {})).status, 401);
  t.is((await h.call('POST', `${NS}/acquisition/plan`, {}, 'acme:read:acme-reader')).status, 200);
  const denied = await h.call(
    'POST',
    `${NS}/acquisition/execute`,
    { connector: { url: 'http://x' } },
    'acme:read:acme-reader',
  );
  t.is(denied.status, 403);
  t.is(denied.body.error.code, 'permission_denied');
  t.is(
    (await h.call('POST', `${NS}/gaps`, {}, 'other:read+write:other-secret')).status,
    404,
    "another tenant's namespace is not visible",
  );
});
