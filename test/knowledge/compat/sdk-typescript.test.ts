// tier: quick
/**
 * The origin's TypeScript SDK (antiartificial/contextdb sdk/typescript/src/client.ts): each test
 * sends the exact JSON one SDK call sends, over HTTP to a real store, and checks the response
 * fields the SDK reads. Written from the SDK's request building, not copied.
 */
import test from 'ava';
import { startHarness } from '../knowledge-harness.js';
import { startReceiver } from '../review-helpers.js';

test('ping answers {status: "ok"} as ContextDB.ping reads it', async (t) => {
  const h = await startHarness(t);
  const res = await h.call('GET', '/v1/ping');
  t.is(res.status, 200);
  t.is(res.body.status, 'ok');
});

test('stats answers a JSON object with the origin runtime fields as ContextDB.stats reads it', async (t) => {
  const h = await startHarness(t);
  const res = await h.call('GET', '/v1/stats');
  t.is(res.status, 200);
  t.like(res.body, {
    mode: 'embedded',
    retrieval_total: 0,
    retrieval_errors: 0,
    ingest_total: 0,
    ingest_admitted: 0,
    ingest_rejected: 0,
  });
  for (const key of ['latency_p50_us', 'latency_p95_us', 'latency_mean_us']) t.is(typeof res.body[key], 'number', key);
});

test('write with the SDK body {mode, content, source_id, labels, vector} is admitted and read back by node_id', async (t) => {
  const h = await startHarness(t);
  const res = await h.call('POST', '/v1/namespaces/ts-test/write', {
    mode: 'general',
    content: 'TypeScript SDK works',
    source_id: 'ts-test',
    labels: ['Claim'],
    vector: [0.1, 0.2, 0.3, 0.4],
  });
  t.is(res.status, 200, res.text);
  t.true(res.body.admitted);
  t.regex(res.body.node_id, /^[0-9a-f-]{36}$/);
  t.false('conflict_ids' in res.body);
});

test('write of a vector-only node sends content "" and is admitted; without a vector it is a 400', async (t) => {
  const h = await startHarness(t);
  const res = await h.call('POST', '/v1/namespaces/ts-vec/write', {
    mode: 'general',
    content: '',
    source_id: 'embedder',
    vector: [0.9, 0.1, 0, 0],
  });
  t.is(res.status, 200, res.text);
  t.true(res.body.admitted);
  const found = await h.retrieve('ts-vec', { top_k: 5, vector: [0.9, 0.1, 0, 0] });
  t.is(found[0].id, res.body.node_id);
  const empty = await h.call('POST', '/v1/namespaces/ts-vec/write', {
    mode: 'general',
    content: '',
    source_id: 'embedder',
  });
  t.is(empty.status, 400);
  t.is(empty.body.error.code, 'invalid_request');
});

test('retrieve with the SDK body reads id, namespace, labels, properties, the scores and retrieval_source', async (t) => {
  const h = await startHarness(t);
  await h.write('ts-test', {
    mode: 'general',
    content: 'TypeScript SDK works',
    source_id: 'ts-test',
    labels: ['Claim'],
    vector: [0.1, 0.2, 0.3, 0.4],
  });
  const res = await h.call('POST', '/v1/namespaces/ts-test/retrieve', { top_k: 5, vector: [0.1, 0.2, 0.3, 0.4] });
  t.is(res.status, 200, res.text);
  const r = res.body.results[0];
  for (const [key, type] of [
    ['id', 'string'],
    ['namespace', 'string'],
    ['score', 'number'],
    ['similarity_score', 'number'],
    ['confidence_score', 'number'],
    ['recency_score', 'number'],
    ['utility_score', 'number'],
    ['retrieval_source', 'string'],
  ] as const) {
    t.is(typeof r[key], type, key);
  }
  t.deepEqual(r.labels, ['Claim']);
  t.deepEqual(r.properties, {});
  t.true(r.score > 0);
  t.is(r.namespace, 'ts-test');
});

test('retrieve with scoreParams sends every weight and decay_alpha, zeros for unset ones, and ranks with them', async (t) => {
  const h = await startHarness(t);
  await h.write('ts-sp', {
    mode: 'general',
    content: 'old fact',
    source_id: 's',
    vector: [1, 0, 0, 0],
    valid_from: new Date(Date.now() - 48 * 3_600_000).toISOString(),
  });
  const only = { similarity_weight: 0, confidence_weight: 0, recency_weight: 0, utility_weight: 0, decay_alpha: 0 };
  const defaults = (await h.call('POST', '/v1/namespaces/ts-sp/retrieve', { top_k: 5, vector: [1, 0, 0, 0] })).body
    .results[0];
  const zeros = await h.call('POST', '/v1/namespaces/ts-sp/retrieve', {
    top_k: 5,
    vector: [1, 0, 0, 0],
    score_params: only,
  });
  t.is(zeros.status, 200, zeros.text);
  const z = zeros.body.results[0].score_breakdown;
  t.like(
    z,
    { similarity: defaults.score_breakdown.similarity, confidence: defaults.score_breakdown.confidence, utility: 0 },
    'all-zero weights mean the defaults, as in the origin',
  );
  t.true(
    Math.abs(z.recency - defaults.score_breakdown.recency) < 1e-5,
    'decay_alpha 0 means the memory type rate, as in the origin',
  );
  const fast = (
    await h.call('POST', '/v1/namespaces/ts-sp/retrieve', {
      top_k: 5,
      vector: [1, 0, 0, 0],
      score_params: { ...only, decay_alpha: 1 },
    })
  ).body.results[0];
  t.true(
    fast.recency_score < defaults.recency_score / 100,
    'decay_alpha 1 per hour over 48 hours decays far faster than the default 0.05',
  );
  const simOnly = (
    await h.call('POST', '/v1/namespaces/ts-sp/retrieve', {
      top_k: 5,
      vector: [1, 0, 0, 0],
      score_params: { ...only, similarity_weight: 1 },
    })
  ).body.results[0];
  t.deepEqual(simOnly.score_breakdown, { similarity: simOnly.similarity_score, confidence: 0, recency: 0, utility: 0 });
});

test('retrieve with a text query answers a list (lexical without an embedder)', async (t) => {
  const h = await startHarness(t);
  await h.write('ts-test-text', {
    mode: 'general',
    content: 'Go is a fast language',
    source_id: 'test',
    labels: ['Claim'],
    vector: [0.5, 0.5, 0.5, 0.5],
  });
  const res = await h.call('POST', '/v1/namespaces/ts-test-text/retrieve', { top_k: 5, text: 'What is Go?' });
  t.is(res.status, 200, res.text);
  t.true(Array.isArray(res.body.results));
  t.is(res.body.results[0].retrieval_source, 'text');
});

test('retrieve with labels keeps only nodes having them', async (t) => {
  const h = await startHarness(t);
  await h.write('ts-test-filter', {
    mode: 'general',
    content: 'labeled node',
    source_id: 'test',
    labels: ['Special'],
    vector: [0.3, 0.3, 0.3, 0.3],
  });
  await h.write('ts-test-filter', {
    mode: 'general',
    content: 'plain node',
    source_id: 'test',
    vector: [0.3, 0.3, 0.3, 0.31],
  });
  const res = await h.call('POST', '/v1/namespaces/ts-test-filter/retrieve', {
    top_k: 5,
    vector: [0.3, 0.3, 0.3, 0.3],
    labels: ['Special'],
  });
  t.is(res.status, 200);
  t.is(res.body.results.length, 1);
  for (const r of res.body.results) t.true(r.labels.includes('Special'));
});

test('ingestText sends {mode, text, source_id} and reads nodes_written, edges_written, rejected without an LLM', async (t) => {
  const h = await startHarness(t);
  const res = await h.call('POST', '/v1/namespaces/ts-ingest/ingest', {
    mode: 'general',
    text: 'Go is a fast language. Go compiles to native code.',
    source_id: 'docs',
  });
  t.is(res.status, 200, res.text);
  t.like(res.body, { nodes_written: 2, edges_written: 0, rejected: 0 });
});

test('labelSource sends {mode, external_id, labels} and answers 2xx; the labels land on the source', async (t) => {
  const h = await startHarness(t);
  const res = await h.call('POST', '/v1/namespaces/ts-src/sources/label', {
    mode: 'general',
    external_id: 'crawler',
    labels: ['trusted', 'docs'],
  });
  t.is(res.status, 200, res.text);
  const trust = await h.call('GET', '/v1/namespaces/ts-src/sources/crawler/trust');
  t.deepEqual(trust.body.labels, ['docs', 'trusted']);
});

test('acquisitionExecution preview sends the multi-connector form and answers the origin plan fields without echoing headers', async (t) => {
  const h = await startHarness(t);
  await h.write('ts-acq', {
    mode: 'general',
    content: 'A lone claim about billing',
    source_id: 'wiki',
    labels: ['billing'],
    confidence: 0.2,
  });
  const secret = 'Bearer connector-header-secret-123';
  const res = await h.call('POST', '/v1/namespaces/ts-acq/acquisition/execute', {
    mode: 'general',
    connectors: [
      {
        id: 'web',
        type: 'search',
        endpoint: 'https://search.example.test/query',
        allowed_source_ids: ['wiki', 'web'],
        default_labels: ['acquired'],
        headers: { Authorization: secret },
      },
      {
        id: 'crawl',
        type: 'crawler',
        endpoint: undefined,
        allowed_source_ids: undefined,
        default_labels: undefined,
        headers: undefined,
      },
    ],
    execute: false,
    top_k: 3,
    min_gap_size: 0.9,
    max_gaps: 5,
    budget: 4,
    allowed_source_ids: ['wiki'],
    max_results: 2,
  });
  t.is(res.status, 200, res.text);
  t.false(res.text.includes('connector-header-secret'));
  t.like(res.body, { namespace: 'ts-acq', dry_run: true, executed: false });
  t.regex(res.body.planned_at, /^\d{4}-\d{2}-\d{2}T/);
  t.true(Array.isArray(res.body.plan.tasks) && res.body.plan.tasks.length > 0);
  t.deepEqual(
    res.body.connectors.map((c: any) => [c.id, c.type, c.header_names]),
    [
      ['web', 'search', ['Authorization']],
      ['crawl', 'crawler', []],
    ],
  );
  t.is(res.body.runs.length, res.body.plan.tasks.length * 2);
  t.like(res.body.runs[0], {
    connector_id: 'web',
    connector_type: 'search',
    dry_run: true,
    status: 'planned',
    allowed_source_ids: ['wiki'],
  });
  t.like(res.body.summary, {
    tasks: res.body.plan.tasks.length,
    connector_runs: res.body.runs.length,
    errors: 0,
    written_nodes: 0,
  });
});

test('acquisitionExecution execute sends connector headers to the endpoint, reads the origin item list and admits allowed sources only', async (t) => {
  const connector = await startReceiver(t, () => ({
    status: 200,
    body: JSON.stringify({
      items: [
        {
          title: 'Billing FAQ',
          snippet: 'Billing runs nightly at 02:00 UTC',
          url: 'https://wiki.example/billing',
          source_id: 'wiki',
          labels: ['faq'],
          confidence: 0.8,
        },
        { content: 'Billing is free forever', source_id: 'spam-site' },
        { title: '' },
      ],
    }),
  }));
  const h = await startHarness(t, { SVC_KNOWLEDGE_ALLOW_PRIVATE_TARGETS: 'true' });
  await h.write('ts-acq', {
    mode: 'general',
    content: 'A lone claim about billing',
    source_id: 'wiki',
    labels: ['billing'],
    confidence: 0.2,
  });
  const secret = 'connector-header-secret-456';
  const plan = (await h.call('POST', '/v1/namespaces/ts-acq/acquisition/plan', { budget: 1 })).body;
  const res = await h.call('POST', '/v1/namespaces/ts-acq/acquisition/execute', {
    mode: 'general',
    connectors: [
      {
        id: 'web',
        type: 'search',
        endpoint: connector.url,
        allowed_source_ids: ['wiki', 'docs'],
        default_labels: ['acquired'],
        headers: { 'X-Api-Key': secret },
      },
    ],
    execute: true,
    budget: 1,
    task_ids: [plan.tasks[0].id],
    allowed_source_ids: ['wiki'],
  });
  t.is(res.status, 200, res.text);
  t.false(res.text.includes(secret));
  t.is(connector.received.length, 1);
  const sent = connector.received[0]!;
  t.is(sent.headers['x-api-key'], secret);
  t.like(JSON.parse(sent.body), {
    task_id: plan.tasks[0].id,
    connector_id: 'web',
    connector_type: 'search',
    allowed_source_ids: ['wiki'],
  });
  t.like(res.body, { dry_run: false, executed: true });
  t.like(res.body.runs[0], { status: 'executed', connector_id: 'web' });
  t.is(
    res.body.runs[0].written_node_ids.length,
    1,
    'the spam-site item is outside the allowed sources and the empty item has no text',
  );
  const node = (await h.call('GET', `/v1/namespaces/ts-acq/nodes/${res.body.runs[0].written_node_ids[0]}`)).body;
  t.like(node, { content: 'Billing runs nightly at 02:00 UTC', source_ids: ['wiki'] });
  t.true(node.labels.includes('acquired') && node.labels.includes('faq'));
  t.false(JSON.stringify((await h.call('GET', '/v1/namespaces/ts-acq/acquisition/receipts')).body).includes(secret));
});
