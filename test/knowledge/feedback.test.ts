// tier: quick
import test from 'ava';
import { gql, node, startReviewHarness } from './review-helpers.js';

test('validate raises confidence and the asserting source credibility and records an event', async (t) => {
  const h = await startReviewHarness(t);
  const id = await node(h, 'n', { content: 'the sky is blue', source_id: 'wiki', confidence: 0.5 });
  const res = await h.call('POST', `/v1/namespaces/n/nodes/${id}/validate`, { reason: 'checked' });
  t.is(res.status, 200, res.text);
  t.like(res.body, {
    node_id: id,
    action: 'validate',
    confidence: 0.6,
    utility: 0,
    source_id: 'wiki',
    source_credibility: 0.62,
    node_version: 2,
  });
  t.regex(res.body.explanation, /validate: confidence 0.5 -> 0.6/);
  const read = await h.call('GET', `/v1/namespaces/n/nodes/${id}?history=true`);
  t.is(read.body.confidence, 0.6);
  t.is(read.body.history.length, 2);
  t.is(read.body.history[1].change, 'feedback-validate');
  const events = await h.call('GET', '/v1/namespaces/n/feedback/events');
  t.is(events.body.events.length, 1);
  t.like(events.body.events[0], {
    event_id: res.body.event_id,
    node_id: id,
    node_version: 2,
    action: 'validate',
    source_id: 'wiki',
    source_credibility: 0.62,
    reason: 'checked',
  });
  t.regex(events.body.events[0].tx_time, /^2026-01-01T00:00:00\.\d{3}Z$/);
});

test('refute caps confidence low and lowers the source; stale lowers confidence and utility; useful raises utility and recall', async (t) => {
  const h = await startReviewHarness(t);
  const a = await node(h, 'n', { content: 'a', source_id: 's', confidence: 0.9 });
  const refuted = await h.call('POST', `/v1/namespaces/n/nodes/${a}/refute`);
  t.like(refuted.body, { confidence: 0.1, source_credibility: 0.54 });
  const b = await node(h, 'n', { content: 'b', source_id: 's2', confidence: 0.8 });
  const useful = await h.call('POST', `/v1/namespaces/n/nodes/${b}/useful`, {});
  t.like(useful.body, { confidence: 0.8, utility: 0.1, source_credibility: 0.6, recall_count: 1 });
  t.regex(useful.body.last_recalled_at, /^2026-01-01T00:00:00\.\d{3}Z$/);
  const useful2 = await h.call('POST', `/v1/namespaces/n/nodes/${b}/useful`);
  t.is(useful2.body.utility, 0.19);
  t.is(useful2.body.recall_count, 2);
  const stale = await h.call('POST', `/v1/namespaces/n/nodes/${b}/stale`);
  t.like(stale.body, { confidence: 0.56, utility: 0.095, source_credibility: 0.6 });
  const trust = await h.call('GET', '/v1/namespaces/n/sources/s2/trust');
  t.deepEqual(trust.body.timeline, [], 'useful and stale do not change the source');
});

test('feedback changing a source joins its trust timeline; events list after a time; sourceTrustTimeline and feedbackEvents in GraphQL', async (t) => {
  const h = await startReviewHarness(t);
  await h.call('POST', '/v1/namespaces/n/sources/label', { source_id: 'blog', credibility: 0.5, reason: 'new' });
  const a = await node(h, 'n', { content: 'a', source_id: 'blog' });
  await h.call('POST', `/v1/namespaces/n/nodes/${a}/refute`);
  h.clock.advanceHours(1);
  await h.call('POST', `/v1/namespaces/n/nodes/${a}/validate`);
  const trust = await h.call('GET', '/v1/namespaces/n/sources/blog/trust');
  t.deepEqual(
    trust.body.timeline.map((p: any) => [p.action, p.node_id, p.source_credibility, p.previous_credibility]),
    [
      ['label', null, 0.5, 0.6],
      ['refute', a, 0.45, 0.5],
      ['validate', a, 0.4775, 0.45],
    ],
  );
  t.is(trust.body.credibility, 0.4775);
  const later = await h.call('GET', '/v1/namespaces/n/feedback/events?after=2026-01-01T00:30:00Z');
  t.deepEqual(
    later.body.events.map((e: any) => e.action),
    ['validate'],
  );
  const g = await gql(
    h,
    `{ feedbackEvents(namespace: "n", after: "2025-12-31T00:00:00Z") { eventId nodeId nodeVersion action sourceId sourceCredibility txTime }
    sourceTrustTimeline(namespace: "n", sourceId: "blog") { nodeId action sourceCredibility txTime } }`,
  );
  t.is(g.status, 200, g.text);
  t.is(g.body.data.feedbackEvents.length, 2);
  t.like(g.body.data.feedbackEvents[0], {
    nodeId: a,
    action: 'refute',
    sourceId: 'blog',
    sourceCredibility: 0.45,
    nodeVersion: 2,
  });
  t.deepEqual(
    g.body.data.sourceTrustTimeline.map((p: any) => p.action),
    ['label', 'refute', 'validate'],
  );
  const bad = await h.call('GET', '/v1/namespaces/n/feedback/events?after=yesterday');
  t.is(bad.status, 400);
});

test('GraphQL feedback mutations return nodeId, action, confidence and sourceCredibility and need write', async (t) => {
  const h = await startReviewHarness(t, { SVC_KNOWLEDGE_TOKENS: 'acme:read:readsecret1,acme:read+write:writesecret1' });
  const id = (await h.write('n', { content: 'x', source_id: 's', confidence: 0.5 }, 'acme:read+write:writesecret1'))
    .node_id;
  const m = (op: string) =>
    `mutation { ${op}(namespace: "n", nodeId: "${id}") { nodeId action confidence sourceCredibility } }`;
  const v = await gql(h, m('validateClaim'), undefined, 'acme:read+write:writesecret1');
  t.deepEqual(v.body.data.validateClaim, { nodeId: id, action: 'validate', confidence: 0.6, sourceCredibility: 0.62 });
  const u = await gql(h, m('markUseful'), undefined, 'acme:read+write:writesecret1');
  t.is(u.body.data.markUseful.action, 'useful');
  const s = await gql(h, m('markStale'), undefined, 'acme:read+write:writesecret1');
  t.is(s.body.data.markStale.confidence, 0.42);
  const r = await gql(h, m('refuteClaim'), undefined, 'acme:read+write:writesecret1');
  t.like(r.body.data.refuteClaim, { confidence: 0.1, sourceCredibility: 0.558 });
  const denied = await gql(h, m('refuteClaim'), undefined, 'acme:read:readsecret1');
  t.is(denied.status, 403);
  t.is(denied.body.errors[0].extensions.code, 'permission_denied');
  const rest = await h.call('POST', `/v1/namespaces/n/nodes/${id}/refute`, {}, 'acme:read:readsecret1');
  t.is(rest.status, 403);
});

test('feedback errors: unknown node 404, retracted node 409, bad body 400, unknown namespace 404', async (t) => {
  const h = await startReviewHarness(t);
  const id = await node(h, 'n', { content: 'x', source_id: 's' });
  t.is((await h.call('POST', '/v1/namespaces/n/nodes/00000000-0000-4000-8000-000000000000/validate')).status, 404);
  t.is((await h.call('POST', `/v1/namespaces/n/nodes/${id}/validate`, { reason: 5 })).status, 400);
  t.is((await h.call('POST', `/v1/namespaces/n/nodes/${id}/validate`, { extra: true })).status, 400);
  t.is((await h.call('POST', `/v1/namespaces/zz/nodes/${id}/validate`)).status, 404);
  await h.call('POST', `/v1/namespaces/n/nodes/${id}/retract-source`, { source_id: 's', reason: 'gone' });
  const res = await h.call('POST', `/v1/namespaces/n/nodes/${id}/refute`);
  t.is(res.status, 409);
  t.is(res.body.error.code, 'node_not_live');
  t.is((await h.call('GET', '/v1/namespaces/n/feedback/events')).body.events.length, 0);
});

test('a feedback intent that did not land is listed as pending and reconciled, and a changed node stops the replay', async (t) => {
  const h = await startReviewHarness(t);
  const a = await node(h, 'n', { content: 'a', source_id: 's', confidence: 0.5 });
  const b = await node(h, 'n', { content: 'b', source_id: 's', confidence: 0.5 });
  const core = h.store.services.core;
  const ns = core.namespace('default', 'n');
  // Two intents recorded as a crash would leave them: committed, never applied.
  for (const [nodeId, action] of [
    [a, 'validate'],
    [b, 'refute'],
  ] as const) {
    core.intents.insert({
      id: core.newId(),
      ns_id: ns.id,
      kind: 'feedback',
      node_id: nodeId,
      request_id: null,
      payload: JSON.stringify({ request: { node_id: nodeId, action } }),
      created_at: core.nextTx(),
    });
  }
  // b changes after its intent: replaying the refutation blindly would be wrong.
  await h.call('POST', `/v1/namespaces/n/nodes/${b}/useful`);
  const pending = await h.call('GET', '/v1/namespaces/n/recovery/pending');
  t.is(pending.body.total, 2);
  t.deepEqual(
    pending.body.pending.map((p: any) => [p.kind, p.request.action]),
    [
      ['feedback', 'validate'],
      ['feedback', 'refute'],
    ],
  );
  const run = await h.call('POST', '/v1/namespaces/n/recovery/reconcile', { execute: true });
  t.deepEqual(
    run.body.steps.map((s: any) => s.action),
    ['replayed', 'conflict'],
  );
  t.true(run.body.stopped);
  t.is(run.body.remaining, 1);
  t.is((await h.call('GET', `/v1/namespaces/n/nodes/${a}`)).body.confidence, 0.6);
  t.is(
    (await h.call('GET', '/v1/namespaces/n/feedback/events')).body.events.filter((e: any) => e.action === 'refute')
      .length,
    0,
  );
});

test('narrative tells the claim with evidence, corroboration, contradictions and a confidence explanation (REST and GraphQL)', async (t) => {
  const h = await startReviewHarness(t);
  await h.call('POST', '/v1/namespaces/n/sources/label', { source_id: 'wiki', credibility: 0.8 });
  const base = await node(h, 'n', {
    content: 'Paris is the capital of France',
    source_id: 'wiki',
    confidence: 0.9,
    properties: { subject: 'France', predicate: 'capital', object: 'Paris' },
  });
  await node(h, 'n', {
    content: 'Lyon is the capital of France',
    source_id: 'blog',
    confidence: 0.3,
    properties: { subject: 'France', predicate: 'capital', object: 'Lyon' },
  });
  await node(h, 'n', {
    content: 'The Eiffel tower is in Paris',
    source_id: 'wiki',
    edges: [{ to: base, type: 'supports', weight: 0.9 }],
  });
  await h.write('n', { content: 'Paris is the capital of France', source_id: 'atlas', dedup: true });
  await h.call('POST', `/v1/namespaces/n/nodes/${base}/validate`);
  const res = await h.call('GET', `/v1/namespaces/n/nodes/${base}/narrative`);
  t.is(res.status, 200, res.text);
  t.deepEqual(
    res.body.claim,
    { text: 'Paris is the capital of France', confidence: 0.85, source_id: 'wiki' },
    'node 0.92 x noisy-OR(wiki 0.81, atlas 0.6) = 0.92 x 0.924',
  );
  t.deepEqual(res.body.evidence, [
    { text: 'The Eiffel tower is in Paris', relation: 'supports (incoming)' },
    { text: 'source atlas (credibility 0.6)', relation: 'corroborated_by' },
  ]);
  t.deepEqual(res.body.contradictions, [{ text: 'Lyon is the capital of France', relation: 'contradicts' }]);
  t.regex(
    res.body.confidence_explanation,
    /node confidence 0.92 x source corroboration 0.\d+ \(noisy-OR of atlas 0.6, wiki 0.81\); feedback: 1 validation/,
  );
  const g = await gql(
    h,
    `{ narrative(namespace: "n", nodeId: "${base}") { summary claim { text confidence sourceId } evidence { text relation } contradictions { text relation } confidenceExplanation } }`,
  );
  t.is(g.body.data.narrative.claim.sourceId, 'wiki');
  t.is(g.body.data.narrative.contradictions.length, 1);
  t.regex(g.body.data.narrative.summary, /asserted by wiki/);
  t.is((await h.call('GET', '/v1/namespaces/n/nodes/00000000-0000-4000-8000-000000000000/narrative')).status, 404);
});
