// tier: quick
import test from 'ava';
import { node, startReceiver, startReviewHarness } from './review-helpers.js';

const C = '/v1/namespaces/n/review/worker/cycle';

async function seed(h: Awaited<ReturnType<typeof startReviewHarness>>) {
  const twice = await node(h, 'n', { content: 'refuted twice', source_id: 'blog', confidence: 0.8 });
  const stale = await node(h, 'n', { content: 'stale claim', source_id: 'wiki', confidence: 0.9 });
  const low = await node(h, 'n', { content: 'weak claim', source_id: 'wiki', confidence: 0.2 });
  const red = await node(h, 'n', {
    content: 'the door is red',
    source_id: 'wiki',
    confidence: 0.9,
    properties: { subject: 'door', predicate: 'color', object: 'red' },
  });
  const blue = await node(h, 'n', {
    content: 'the door is blue',
    source_id: 'blog',
    confidence: 0.5,
    properties: { subject: 'door', predicate: 'color', object: 'blue' },
  });
  await h.call('POST', `/v1/namespaces/n/nodes/${twice}/refute`);
  await h.call('POST', `/v1/namespaces/n/nodes/${twice}/refute`);
  await h.call('POST', `/v1/namespaces/n/nodes/${stale}/stale`);
  return { twice, stale, low, red, blue };
}

test('a planned cycle proposes rule actions, skips disallowed ones, changes nothing and records a run', async (t) => {
  const h = await startReviewHarness(t);
  const ids = await seed(h);
  const res = await h.call('POST', C, {});
  t.is(res.status, 200, res.text);
  t.like(res.body, {
    execute: false,
    evaluator: 'rules',
    limit: 20,
    status: 'planned',
    considered: 5,
    planned: 4,
    applied: 0,
    skipped: 1,
    failed: 0,
  });
  t.deepEqual(res.body.allowed_actions, ['needs_evidence', 'resolve', 'snooze']);
  const byId = Object.fromEntries(res.body.steps.map((s: any) => [s.review_id, [s.action, s.outcome]]));
  t.deepEqual(byId[`refuted:${ids.twice}`], ['resolve', 'planned']);
  t.deepEqual(byId[`stale:${ids.stale}`], ['snooze', 'planned']);
  t.deepEqual(byId[`contradictory:${ids.blue}`], ['refute', 'skipped']);
  t.is((await h.call('GET', '/v1/namespaces/n/review/decisions')).body.decisions.length, 0);
  const runs = await h.call('GET', '/v1/namespaces/n/review/worker/runs');
  t.is(runs.body.runs.length, 1);
  t.like(runs.body.runs[0], { run_id: res.body.run_id, status: 'planned', considered: 5 });
});

test('an executed cycle applies allowed actions through decisions and feedback, bounded by limit', async (t) => {
  const h = await startReviewHarness(t);
  const ids = await seed(h);
  const res = await h.call('POST', C, {
    execute: true,
    limit: 100,
    allowed_actions: ['resolve', 'snooze', 'needs_evidence', 'refute'],
  });
  t.like(res.body, { status: 'completed', applied: 5, failed: 0 });
  const step = res.body.steps.find((s: any) => s.review_id === `contradictory:${ids.blue}`);
  t.like(step, { action: 'refute', outcome: 'applied' });
  t.is((await h.call('GET', `/v1/namespaces/n/nodes/${ids.blue}`)).body.confidence, 0.1, 'the refutation landed');
  const queue = await h.call('GET', '/v1/namespaces/n/review/queue?status=resolved');
  t.true(
    queue.body.items.some(
      (i: any) => i.id === `refuted:${ids.twice}` && i.owner === 'review-worker' && i.decision === 'resolve',
    ),
  );
  const snoozed = await h.call('GET', '/v1/namespaces/n/review/queue?status=snoozed');
  t.deepEqual(
    snoozed.body.items.map((i: any) => i.id),
    [`stale:${ids.stale}`],
  );
  const assigned = await h.call('GET', '/v1/namespaces/n/review/queue?status=assigned&owner=unassigned');
  t.true(assigned.body.items.some((i: any) => i.id === `low_confidence:${ids.low}` && i.decision === 'needs_evidence'));
  const history = await h.call('GET', `/v1/namespaces/n/review/decisions?review_id=stale:${ids.stale}`);
  t.deepEqual(
    history.body.decisions.map((d: any) => [d.status, d.owner, d.actor]),
    [
      ['assigned', 'review-worker', 'review-worker'],
      ['snoozed', 'review-worker', 'review-worker'],
    ],
  );
  const small = await h.call('POST', C, { execute: true, limit: 1 });
  t.true(small.body.considered <= 1);
});

test('cycle requests accept no webhook URL or secret, cap the limit, and need a configured webhook evaluator', async (t) => {
  const h = await startReviewHarness(t);
  t.is((await h.call('POST', C, { evaluator: 'webhook', url: 'http://x' })).status, 400);
  t.is((await h.call('POST', C, { secret: 'abcdefghij' })).status, 400);
  t.is((await h.call('POST', C, { limit: 101 })).status, 400);
  t.is((await h.call('POST', C, { allowed_actions: ['delete'] })).status, 400);
  await node(h, 'n', { content: 'x', source_id: 's' });
  const res = await h.call('POST', C, { evaluator: 'webhook' });
  t.is(res.status, 409);
  t.is(res.body.error.code, 'evaluator_not_configured');
});

test('the webhook evaluator is signed with the configured secret; a failed mutation leaves the item assigned for inspection', async (t) => {
  const ref: { h?: Awaited<ReturnType<typeof startReviewHarness>> } = {};
  let victim = '';
  const evaluator = await startReceiver(t, async (r) => {
    const body = JSON.parse(r.body);
    // The claim disappears while the evaluator deliberates: the validation must fail.
    await ref.h!.store.services.nodes.retractSource('default', 'n', victim, { source_id: 'wiki', reason: 'withdrawn' });
    return {
      status: 200,
      body: JSON.stringify({
        decisions: body.items.map((i: any) => ({
          review_id: i.id,
          action: i.node_id === victim ? 'validate' : 'needs_evidence',
          note: 'model says so',
        })),
      }),
    };
  });
  const h = await startReviewHarness(t, {
    SVC_KNOWLEDGE_ALLOW_PRIVATE_TARGETS: 'true',
    SVC_KNOWLEDGE_REVIEW_WEBHOOK_URL: evaluator.url,
    SVC_KNOWLEDGE_REVIEW_WEBHOOK_SECRET: 'evaluator-secret-1',
  });
  ref.h = h;
  victim = await node(h, 'n', { content: 'weak claim', source_id: 'wiki', confidence: 0.2 });
  const other = await node(h, 'n', { content: 'another weak claim', source_id: 'blog', confidence: 0.1 });
  const res = await h.call('POST', C, {
    execute: true,
    evaluator: 'webhook',
    allowed_actions: ['validate', 'needs_evidence'],
  });
  t.is(res.status, 200, res.text);
  t.like(res.body, { evaluator: 'webhook', status: 'completed_with_failures', applied: 1, failed: 1 });
  const failed = res.body.steps.find((s: any) => s.outcome === 'failed');
  t.like(failed, { review_id: `low_confidence:${victim}`, action: 'validate' });
  t.regex(failed.detail, /no live version/);
  const history = await h.call('GET', `/v1/namespaces/n/review/decisions?review_id=low_confidence:${victim}`);
  t.deepEqual(
    history.body.decisions.map((d: any) => [d.status, d.owner]),
    [['assigned', 'review-worker']],
    'left assigned, not reopened',
  );
  const otherHistory = await h.call('GET', `/v1/namespaces/n/review/decisions?review_id=low_confidence:${other}`);
  t.deepEqual(
    otherHistory.body.decisions.map((d: any) => [d.status, d.owner, d.decision]),
    [
      ['assigned', 'review-worker', 'needs_evidence'],
      ['assigned', null, 'needs_evidence'],
    ],
  );
  const sent = evaluator.received[0]!;
  const { createHmac } = await import('node:crypto');
  t.is(
    sent.headers['x-svc-signature-256'],
    `sha256=${createHmac('sha256', 'evaluator-secret-1').update(sent.body).digest('hex')}`,
  );
  t.is(JSON.parse(sent.body).type, 'review.evaluate');
  const runs = await h.call('GET', '/v1/namespaces/n/review/worker/runs');
  t.like(runs.body.runs[0], { status: 'completed_with_failures', failed: 1 });
  t.false(JSON.stringify(runs.body).includes('evaluator-secret-1'));
});

test('an evaluator that fails makes the run failed without touching items', async (t) => {
  const evaluator = await startReceiver(t, () => ({ status: 500, body: 'boom' }));
  const h = await startReviewHarness(t, {
    SVC_KNOWLEDGE_ALLOW_PRIVATE_TARGETS: 'true',
    SVC_KNOWLEDGE_REVIEW_WEBHOOK_URL: evaluator.url,
    SVC_KNOWLEDGE_REVIEW_WEBHOOK_SECRET: 'evaluator-secret-1',
  });
  await node(h, 'n', { content: 'weak', source_id: 'wiki', confidence: 0.1 });
  const res = await h.call('POST', C, { execute: true, evaluator: 'webhook' });
  t.like(res.body, { status: 'failed', applied: 0 });
  t.regex(res.body.error, /evaluator webhook failed/);
  t.is((await h.call('GET', '/v1/namespaces/n/review/decisions')).body.decisions.length, 0);
});
