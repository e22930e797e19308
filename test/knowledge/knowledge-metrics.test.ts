// tier: full
import test from 'ava';
import { tempDir } from '../helpers/temp-dir.js';
import { parseExposition, samplesOf } from '../observability/exposition.js';
import { promtoolCheckMetrics } from '../observability/promtool.js';
import { gql, node, startReceiver, startReviewHarness } from './review-helpers.js';

const SECRET = 'handoff-secret-123';
const W = '/v1/namespaces/n/review/handoff-webhooks';

test('the admin /metrics counts writes and retrievals by namespace mode and outcome, retrieval latency per path, admission rejections, the review queue and webhook deliveries', async (t) => {
  const h = await startReviewHarness(t, { SVC_KNOWLEDGE_ALLOW_PRIVATE_TARGETS: 'true' });
  const a = await h.write('n', { content: 'kubernetes schedules pods', source_id: 's', vector: [1, 0, 0] });
  await h.write('n', {
    content: 'nomad schedules jobs',
    source_id: 's',
    vector: [0, 1, 0],
    edges: [{ to: a.node_id, type: 'related' }],
  });
  await h.write('b', { mode: 'belief_system', content: 'the sky is blue', source_id: 's' });
  await h.call('POST', '/v1/namespaces/n/sources/label', { source_id: 'bad', credibility: 0 });
  t.like(await h.write('n', { content: 'rumour', source_id: 'bad' }), { admitted: false });
  t.is(
    (await h.call('POST', '/v1/namespaces/n/write', { mode: 'procedural', content: 'x', source_id: 's' })).status,
    409,
  );

  await h.retrieve('n', { vector: [1, 0, 0] });
  await h.retrieve('n', { text: 'schedules' });
  await h.retrieve('n', { seed_ids: [a.node_id] });
  await h.retrieve('n', { text: 'schedules', vector: [1, 0, 0] });
  t.is((await h.call('POST', '/v1/namespaces/nope/retrieve', { text: 'x' })).status, 404);
  t.is((await gql(h, '{ search(namespace: "b", query: "sky") { totalCount } }')).status, 200);

  // One review item (a refuted claim), then a failing and a working handoff target.
  const refuted = await node(h, 'n', { content: 'refuted claim', source_id: 'blog', confidence: 0.8 });
  await h.call('POST', `/v1/namespaces/n/nodes/${refuted}/refute`);
  h.clock.advanceHours(30);
  const down = await startReceiver(t, () => ({ status: 503 }));
  const up = await startReceiver(t, () => ({ status: 200 }));
  await h.call('POST', `${W}/deliver`, { target_url: down.url, secret: SECRET, execute: true });
  await h.call('POST', `${W}/deliver`, { target_url: up.url, secret: SECRET, execute: true });

  // A rejected write and a failing one in one group: the group runs again with savepoints (ADR 0208),
  // and the rejection is still counted once.
  const reruns = h.store.services.core.commits.stats().reruns;
  const mixed = await h.call('POST', '/v1/namespaces/n/write/batch', {
    writes: [
      { content: 'another rumour', source_id: 'bad' },
      {
        content: 'edge to nowhere',
        source_id: 's',
        edges: [{ to: '00000000-0000-4000-8000-000000000000', type: 'r' }],
      },
    ],
  });
  t.like(mixed.body.results, [{ status: 200, admitted: false }, { status: 400 }]);
  t.is(h.store.services.core.commits.stats().reruns, reruns + 1);

  const response = await h.admin('GET', '/metrics');
  t.is(response.status, 200);
  const families = parseExposition(response.text);
  const value = (family: string, labels: Record<string, string>) => samplesOf(families, family, labels)[0]?.value;

  t.is(families.get('svc_knowledge_writes_total')?.type, 'counter');
  // Two writes above and the refuted claim.
  t.is(value('svc_knowledge_writes_total', { mode: 'general', outcome: 'admitted' }), 3);
  t.is(value('svc_knowledge_writes_total', { mode: 'belief_system', outcome: 'admitted' }), 1);
  t.is(value('svc_knowledge_writes_total', { mode: 'general', outcome: 'rejected' }), 2);
  t.is(value('svc_knowledge_writes_total', { mode: 'general', outcome: 'error' }), 2);

  t.is(value('svc_knowledge_retrievals_total', { mode: 'general', outcome: 'ok' }), 4);
  t.is(value('svc_knowledge_retrievals_total', { mode: 'unknown', outcome: 'error' }), 1);
  t.is(value('svc_knowledge_retrievals_total', { mode: 'belief_system', outcome: 'ok' }), 1);

  const paths = families.get('svc_knowledge_retrieval_path_duration_seconds');
  t.is(paths?.type, 'histogram');
  const count = (path: string) =>
    samplesOf(families, 'svc_knowledge_retrieval_path_duration_seconds', { path })[0]?.count;
  // The graph search and the lexical REST query are text; the unknown namespace's text query failed but ran.
  t.deepEqual(
    { vector: count('vector'), text: count('text'), graph: count('graph'), hybrid: count('hybrid') },
    { vector: 1, text: 3, graph: 1, hybrid: 1 },
  );
  t.is(samplesOf(families, 'svc_knowledge_retrieve_duration_seconds')[0]?.count, 6);
  t.is(samplesOf(families, 'svc_knowledge_write_duration_seconds')[0]?.count, 8);

  t.is(value('svc_knowledge_admission_rejections_total', { reason: 'low_credibility' }), 2);
  t.is(families.get('svc_knowledge_review_queue_size')?.type, 'gauge');
  const queued =
    (await h.call('GET', '/v1/namespaces/n/review/queue')).body.total +
    (await h.call('GET', '/v1/namespaces/b/review/queue')).body.total;
  t.true(queued >= 1);
  t.is(samplesOf(families, 'svc_knowledge_review_queue_size')[0]?.value, queued);
  t.is(value('svc_knowledge_webhook_deliveries_total', { result: 'retrying' }), 1);
  t.is(value('svc_knowledge_webhook_deliveries_total', { result: 'delivered' }), 1);

  const check = await promtoolCheckMetrics(tempDir(t), response.text);
  t.is(check.code, 0, check.output);
});

test('a handoff delivery that fails its fifth attempt counts as failed, the earlier ones as retrying', async (t) => {
  const h = await startReviewHarness(t, { SVC_KNOWLEDGE_ALLOW_PRIVATE_TARGETS: 'true' });
  const refuted = await node(h, 'n', { content: 'refuted claim', source_id: 'blog', confidence: 0.8 });
  await h.call('POST', `/v1/namespaces/n/nodes/${refuted}/refute`);
  h.clock.advanceHours(30);
  const down = await startReceiver(t, () => ({ status: 500 }));
  const first = await h.call('POST', `${W}/deliver`, { target_url: down.url, secret: SECRET, execute: true });
  for (let attempt = 2; attempt <= 5; attempt++) {
    const retry = await h.call('POST', `${W}/retry`, {
      digest_event_id: first.body.digest_event_id,
      target_url: down.url,
      secret: SECRET,
      execute: true,
    });
    t.is(retry.status, 200, retry.text);
  }
  const families = parseExposition((await h.admin('GET', '/metrics')).text);
  t.is(samplesOf(families, 'svc_knowledge_webhook_deliveries_total', { result: 'retrying' })[0]?.value, 4);
  t.is(samplesOf(families, 'svc_knowledge_webhook_deliveries_total', { result: 'failed' })[0]?.value, 1);
});
