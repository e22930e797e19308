// tier: quick
import test from 'ava';
import { startReceiver } from '../review-helpers.js';
import { startHarness } from '../knowledge-harness.js';

const KEY = 'llm-api-key-do-not-leak';
const TEXT = 'The billing job runs nightly at 02:00 UTC. The API rate limit is 100 requests per minute.';

function chat(claims: unknown) {
  return {
    status: 200,
    body: JSON.stringify({
      id: 'chatcmpl-1',
      choices: [{ index: 0, message: { role: 'assistant', content: JSON.stringify({ claims }) } }],
    }),
  };
}

async function withExtractor(t: Parameters<typeof startHarness>[0], respond: Parameters<typeof startReceiver>[1]) {
  const llm = await startReceiver(t, respond);
  const h = await startHarness(t, {
    SVC_KNOWLEDGE_EXTRACTOR_URL: llm.url.replace(/\/hook$/, '/v1'),
    SVC_KNOWLEDGE_EXTRACTOR_MODEL: 'test-model',
    SVC_KNOWLEDGE_EXTRACTOR_API_KEY: KEY,
  });
  return { h, llm };
}

test('ingest sends the text to the extractor and writes each extracted claim durably, once', async (t) => {
  const { h, llm } = await withExtractor(t, () =>
    chat([
      { content: 'The billing job runs nightly at 02:00 UTC', confidence: 0.9, labels: ['billing'] },
      {
        content: 'The API rate limit is 100 requests per minute',
        subject: 'api',
        predicate: 'rate_limit',
        object: '100/min',
      },
    ]),
  );
  const res = await h.call('POST', '/v1/namespaces/n/ingest', {
    text: TEXT,
    source_id: 'handbook',
    labels: ['ops'],
    confidence: 0.7,
  });
  t.is(res.status, 200, res.text);
  t.like(res.body, { model: 'test-model', extracted: 2 });
  t.false(res.text.includes(KEY));
  t.deepEqual(
    res.body.nodes.map((n: any) => n.admitted),
    [true, true],
  );
  // Each written claim counts as a write, in /v1/stats and the write metric (issue 29).
  t.like((await h.call('GET', '/v1/stats')).body, { ingest_total: 2, ingest_admitted: 2, ingest_rejected: 0 });
  t.regex((await h.admin('GET', '/metrics')).text, /svc_knowledge_writes_total\{[^}]*outcome="admitted"[^}]*\} 2/);

  t.is(llm.received.length, 1);
  const got = llm.received[0]!;
  t.is(got.url, '/v1/chat/completions');
  t.is(got.headers.authorization, `Bearer ${KEY}`);
  const sent = JSON.parse(got.body);
  t.like(sent, { model: 'test-model', temperature: 0, response_format: { type: 'json_object' } });
  t.is(sent.messages[0].role, 'system');
  t.regex(sent.messages[0].content, /Extract the factual claims/);
  t.deepEqual(sent.messages[1], { role: 'user', content: TEXT });

  const first = (await h.call('GET', `/v1/namespaces/n/nodes/${res.body.nodes[0].node_id}`)).body;
  t.like(first, { content: 'The billing job runs nightly at 02:00 UTC', confidence: 0.9 });
  t.deepEqual(first.labels, ['billing', 'ops']);
  const second = (await h.call('GET', `/v1/namespaces/n/nodes/${res.body.nodes[1].node_id}`)).body;
  t.like(second, {
    confidence: 0.7,
    properties: {
      subject: 'api',
      predicate: 'rate_limit',
      object: '100/min',
      ingest: { document_sha256: res.body.document_sha256, claim_index: 1 },
    },
  });

  const again = await h.call('POST', '/v1/namespaces/n/ingest', {
    text: TEXT,
    source_id: 'handbook',
    labels: ['ops'],
    confidence: 0.7,
  });
  t.is(again.status, 200);
  t.deepEqual(
    again.body.nodes.map((n: any) => [n.node_id, n.replayed]),
    res.body.nodes.map((n: any) => [n.node_id, true]),
  );
  t.is((await h.call('GET', '/v1/stats')).body.nodes, 2, 're-ingesting the same text adds no duplicate');
});

test('ingest without a configured extractor writes rule-extracted claims through the admission rules', async (t) => {
  const h = await startHarness(t);
  const res = await h.call('POST', '/v1/namespaces/n/ingest', {
    text: `${TEXT} Is it fast? The API rate limit is 200 requests per minute.`,
    source_id: 'handbook',
    labels: ['ops'],
  });
  t.is(res.status, 200, res.text);
  t.like(res.body, {
    extractor: 'rules',
    model: 'rules-v1',
    extracted: 3,
    nodes_written: 3,
    edges_written: 0,
    rejected: 0,
  });
  t.deepEqual(
    res.body.nodes.map((n: any) => n.content),
    [
      'The billing job runs nightly at 02:00 UTC',
      'The API rate limit is 100 requests per minute',
      'The API rate limit is 200 requests per minute',
    ],
  );
  t.deepEqual(
    res.body.nodes[2].conflict_ids,
    [res.body.nodes[1].node_id],
    'the rule-extracted subject and predicate make contradicting claims visible',
  );
  const node = (await h.call('GET', `/v1/namespaces/n/nodes/${res.body.nodes[0].node_id}`)).body;
  t.like(node, {
    properties: {
      subject: 'billing job',
      predicate: 'runs',
      object: 'nightly at 02:00 UTC',
      ingest: { model: 'rules-v1', claim_index: 0 },
    },
  });
  t.deepEqual(node.labels, ['ops']);
  const again = await h.call('POST', '/v1/namespaces/n/ingest', {
    text: `${TEXT} Is it fast? The API rate limit is 200 requests per minute.`,
    source_id: 'handbook',
    labels: ['ops'],
  });
  t.like(again.body, { nodes_written: 0, rejected: 0, extracted: 3 });
  t.is((await h.call('POST', '/v1/namespaces/n/sources/label', { source_id: 'spam', credibility: 0.01 })).status, 200);
  const refused = await h.call('POST', '/v1/namespaces/n/ingest', {
    text: 'The moon is made of cheese.',
    source_id: 'spam',
  });
  t.like(refused.body, { nodes_written: 0, rejected: 1 });
  t.false(refused.body.nodes[0].admitted);
});

test('ingest rejects bad input with 400 and an unusable extractor answer with 503, never 500', async (t) => {
  let answer: { status: number; body: string } = {
    status: 200,
    body: '{"choices":[{"message":{"content":"not json"}}]}',
  };
  const { h } = await withExtractor(t, () => answer);
  for (const body of [
    {},
    { text: '', source_id: 's' },
    { text: 'x' },
    { text: 'x', source_id: 's', max_claims: 0 },
    { text: 'x', source_id: 's', extra: true },
  ]) {
    const res = await h.call('POST', '/v1/namespaces/n/ingest', body);
    t.is(res.status, 400, JSON.stringify(body));
    t.is(res.body.error.code, 'invalid_request');
  }
  const bad = await h.call('POST', '/v1/namespaces/n/ingest', { text: TEXT, source_id: 's' });
  t.is(bad.status, 503, bad.text);
  t.is(bad.body.error.code, 'extractor_failed');
  answer = chat([{ confidence: 2 }]);
  t.is(
    (await h.call('POST', '/v1/namespaces/n/ingest', { text: TEXT, source_id: 's' })).body.error.code,
    'extractor_failed',
  );
  answer = { status: 500, body: 'boom' };
  const down = await h.call('POST', '/v1/namespaces/n/ingest', { text: TEXT, source_id: 's' });
  t.is(down.status, 503);
  t.false(down.text.includes(KEY));
  t.is((await h.call('GET', '/v1/stats')).body.nodes, 0);
});
