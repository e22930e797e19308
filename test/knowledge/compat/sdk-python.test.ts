// tier: quick
/**
 * The origin's Python SDK (antiartificial/contextdb sdk/python/contextdb/client.py) and its
 * integration tests: the exact JSON and query parameters each call sends, over HTTP to a real
 * store, and the response fields the SDK reads. Written from the SDK's request building.
 */
import test from 'ava';
import { startHarness } from '../knowledge-harness.js';
import { startReceiver } from '../review-helpers.js';

const NS = '/v1/namespaces/py-test';

test('stats has "mode", which the SDK integration test_stats asserts', async (t) => {
  const h = await startHarness(t);
  const res = await h.call('GET', '/v1/stats');
  t.true('Mode' in res.body || 'mode' in res.body);
});

test('write sends {mode, content, source_id, labels, properties, vector, model_id, confidence} and reads node_id, admitted, reason, conflict_ids', async (t) => {
  const h = await startHarness(t);
  const res = await h.call('POST', `${NS}/write`, {
    mode: 'general',
    content: 'Python SDK works',
    source_id: 'pytest',
    labels: ['Claim'],
    properties: { lang: 'py' },
    vector: [0.1, 0.2, 0.3, 0.4],
    model_id: 'm-1',
    confidence: 0.8,
  });
  t.is(res.status, 200, res.text);
  t.true(res.body.admitted);
  t.not(res.body.node_id, '');
});

test('retrieve sends as_of, valid_at, known_at, include and exclude source ids and score_params, and reads the result fields', async (t) => {
  const h = await startHarness(t);
  const w = await h.write('py-test', {
    mode: 'general',
    content: 'Python SDK works',
    source_id: 'pytest',
    labels: ['Claim'],
    vector: [0.1, 0.2, 0.3, 0.4],
  });
  const now = new Date().toISOString();
  const res = await h.call('POST', `${NS}/retrieve`, {
    top_k: 5,
    vector: [0.1, 0.2, 0.3, 0.4],
    as_of: now,
    valid_at: now,
    known_at: now,
    include_source_ids: ['pytest'],
    exclude_source_ids: ['other'],
    score_params: {
      similarity_weight: 0.5,
      confidence_weight: 0.3,
      recency_weight: 0.15,
      utility_weight: 0.05,
      decay_alpha: 0.0,
    },
  });
  t.is(res.status, 200, res.text);
  t.is(res.body.results[0].id, w.node_id);
  t.true(res.body.results[0].score > 0);
  const legacy = await h.call('POST', `${NS}/retrieve`, {
    top_k: 5,
    vector: [0.1, 0.2, 0.3, 0.4],
    as_of: '2000-01-01T00:00:00Z',
  });
  t.is(legacy.body.results.length, 0, 'as_of anchors valid time: nothing was valid in 2000');
});

test('ingest_text and label_source send the SDK bodies and answer 200', async (t) => {
  const h = await startHarness(t);
  const ingest = await h.call('POST', `${NS}/ingest`, {
    mode: 'general',
    text: 'The cache keeps pages for ten minutes.',
    source_id: 'docs',
  });
  t.is(ingest.status, 200, ingest.text);
  t.like(ingest.body, { nodes_written: 1, edges_written: 0, rejected: 0 });
  t.is(
    (await h.call('POST', `${NS}/sources/label`, { mode: 'general', external_id: 'docs', labels: ['trusted'] })).status,
    200,
  );
});

test('acquisition_execution with review_before_admission stages candidates; the review, decide and receipt calls work with their SDK parameters', async (t) => {
  const connector = await startReceiver(t, () => ({
    status: 200,
    body: JSON.stringify([{ content: 'Billing runs nightly', source_id: 'wiki' }]),
  }));
  const h = await startHarness(t, { SVC_KNOWLEDGE_ALLOW_PRIVATE_TARGETS: 'true' });
  await h.write('py-test', {
    mode: 'general',
    content: 'A lone billing claim',
    source_id: 'wiki',
    labels: ['billing'],
    confidence: 0.2,
  });
  const res = await h.call('POST', `${NS}/acquisition/execute`, {
    mode: 'general',
    connectors: [
      {
        id: 'web',
        type: 'search',
        endpoint: connector.url,
        allowed_source_ids: null,
        default_labels: null,
        headers: null,
      },
    ],
    execute: true,
    review_before_admission: true,
    budget: 1,
    max_results: 3,
    max_attempts: 2,
  });
  t.is(res.status, 200, res.text);
  t.like(res.body.summary, { review_candidates: 1, written_nodes: 0 });
  const candidates = await h.call('GET', `${NS}/acquisition/review/candidates?mode=general`);
  t.is(candidates.status, 200);
  t.is(candidates.body.candidates.length, 1);
  const approve = await h.call(
    'POST',
    `${NS}/acquisition/review/candidates/${candidates.body.candidates[0].id}/approve`,
    { mode: 'general', actor: '', note: '' },
  );
  t.is(approve.status, 200, approve.text);
  t.like(approve.body, { admitted: true, candidate: { status: 'approved', actor: null, note: null } });
  for (const path of ['receipts', 'retry-candidates', 'retry-recommendations']) {
    const r = await h.call('GET', `${NS}/acquisition/${path}?mode=general&after=2020-01-01T00:00:00Z`);
    t.is(r.status, 200, path);
  }
  t.is((await h.call('GET', `${NS}/acquisition/receipts?mode=general`)).body.receipts.length, 1);
});

test('acquisition_execution retries a retryable connector failure up to max_attempts within the call', async (t) => {
  const connector = await startReceiver(t, (_r, n) =>
    n === 1
      ? { status: 503, body: 'busy' }
      : { status: 200, body: JSON.stringify({ items: [{ content: 'Recovered fact', source_id: 'wiki' }] }) },
  );
  const h = await startHarness(t, { SVC_KNOWLEDGE_ALLOW_PRIVATE_TARGETS: 'true' });
  await h.write('py-test', {
    mode: 'general',
    content: 'A lone billing claim',
    source_id: 'wiki',
    labels: ['billing'],
    confidence: 0.2,
  });
  const res = await h.call('POST', `${NS}/acquisition/execute`, {
    mode: 'general',
    connectors: [
      { id: 'web', type: 'search', endpoint: connector.url, allowed_source_ids: [], default_labels: [], headers: {} },
    ],
    execute: true,
    review_before_admission: false,
    budget: 1,
    max_attempts: 2,
  });
  t.is(res.status, 200, res.text);
  t.is(connector.received.length, 2);
  t.like(res.body.runs[0], { status: 'executed', attempt: 2 });
  const receipts = (await h.call('GET', `${NS}/acquisition/receipts`)).body.receipts;
  t.deepEqual(
    receipts.map((r: any) => r.outcome),
    ['failed', 'succeeded'],
  );
});

test('run_review_worker sends {execute, limit, allowed_actions: [], evaluator} and review_worker_runs reads runs', async (t) => {
  const h = await startHarness(t);
  await h.write('py-test', { mode: 'general', content: 'A shaky claim', source_id: 'wiki', confidence: 0.1 });
  const res = await h.call('POST', `${NS}/review/worker/cycle`, {
    execute: false,
    limit: 25,
    allowed_actions: [],
    evaluator: 'rules',
  });
  t.is(res.status, 200, res.text);
  t.true(res.body.allowed_actions.length > 0, 'an empty list means the default allowed actions');
  const runs = await h.call('GET', `${NS}/review/worker/runs`);
  t.is(runs.body.runs.length, 1);
});
