// tier: quick
import test from 'ava';
import { gql, node, startReviewHarness } from './review-helpers.js';

const Q = '/v1/namespaces/n/review/queue';

async function seed(h: Awaited<ReturnType<typeof startReviewHarness>>) {
  const refuted = await node(h, 'n', { content: 'refuted claim', source_id: 'blog', confidence: 0.8 });
  const stale = await node(h, 'n', { content: 'stale claim', source_id: 'wiki', confidence: 0.9 });
  const low = await node(h, 'n', { content: 'weak claim', source_id: 'wiki', confidence: 0.2 });
  await node(h, 'n', { content: 'fine claim', source_id: 'wiki', confidence: 0.9 });
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
  await h.call('POST', `/v1/namespaces/n/nodes/${refuted}/refute`);
  await h.call('POST', `/v1/namespaces/n/nodes/${stale}/stale`);
  return { refuted, stale, low, red, blue };
}

test('the queue derives refuted, stale, low-confidence and contradictory items with every field', async (t) => {
  const h = await startReviewHarness(t);
  const ids = await seed(h);
  const res = await h.call('GET', Q);
  t.is(res.status, 200, res.text);
  t.deepEqual(
    res.body.items.map((i: any) => i.id),
    [
      `contradictory:${ids.red}`,
      `contradictory:${ids.blue}`,
      `refuted:${ids.refuted}`,
      `stale:${ids.stale}`,
      `low_confidence:${ids.low}`,
    ],
  );
  t.is(res.body.total, 5);
  const refuted = res.body.items[2];
  t.deepEqual(Object.keys(refuted).sort(), [
    'action',
    'confidence',
    'created_at',
    'decision',
    'escalated',
    'escalation_age_hours',
    'escalation_level',
    'escalation_reason',
    'id',
    'node_id',
    'node_ids',
    'note',
    'owner',
    'priority',
    'reason',
    'reviewed_at',
    'source_id',
    'status',
    'suggested_action',
    'text',
    'type',
  ]);
  t.like(refuted, {
    type: 'refuted',
    priority: 70,
    node_id: ids.refuted,
    node_ids: [ids.refuted],
    source_id: 'blog',
    action: 'refute',
    text: 'refuted claim',
    suggested_action: 'needs_evidence',
    confidence: 0.1,
    status: 'open',
    owner: null,
    decision: null,
    escalated: false,
    escalation_level: null,
    escalation_age_hours: 0,
  });
  const blue = res.body.items[1];
  t.like(blue, {
    type: 'contradictory',
    node_ids: [ids.blue, ids.red],
    suggested_action: 'refute',
    confidence: 0.5,
    priority: 70,
  });
  t.like(res.body.items[0], { suggested_action: 'needs_evidence', priority: 78 });
  t.like(res.body.items[3], { type: 'stale', action: 'stale', suggested_action: 'snooze', priority: 50 });
  t.like(res.body.items[4], {
    type: 'low_confidence',
    confidence: 0.2,
    priority: 43,
    reason: 'confidence 0.2 is below 0.3',
  });
  t.deepEqual(res.body.thresholds, {
    low_confidence_threshold: 0.3,
    source_trust_drop_threshold: 0.2,
    source_refutation_threshold: 3,
    escalation_after_hours: 24,
    source_anomaly_escalation_priority: 80,
  });
});

test('queue thresholds are parameters and filters are additive', async (t) => {
  const h = await startReviewHarness(t);
  const ids = await seed(h);
  const ids0 = async (query: string) => ((await h.call('GET', `${Q}?${query}`)).body.items as any[]).map((i) => i.id);
  t.deepEqual(await ids0('types=low_confidence&low_confidence_threshold=0.1'), []);
  t.is(
    (await ids0('types=low_confidence&low_confidence_threshold=0.95')).length,
    4,
    'weak, fine, red and blue; refuted and stale nodes are covered by their own items',
  );
  t.deepEqual(await ids0('types=refuted,stale'), [`refuted:${ids.refuted}`, `stale:${ids.stale}`]);
  t.deepEqual(await ids0('types=refuted&types=stale&source=wiki'), [`stale:${ids.stale}`]);
  t.deepEqual(await ids0('source=blog'), [`contradictory:${ids.blue}`, `refuted:${ids.refuted}`]);
  t.deepEqual(await ids0('limit=2'), [`contradictory:${ids.red}`, `contradictory:${ids.blue}`]);
  t.is((await h.call('GET', `${Q}?limit=2`)).body.total, 5);
  t.is((await h.call('GET', `${Q}?types=bogus`)).status, 400);
  t.is((await h.call('GET', `${Q}?status=closed`)).status, 400);
  t.is((await h.call('GET', `${Q}?low_confidence_threshold=2`)).status, 400);
  t.is((await h.call('GET', `${Q}?limit=0`)).status, 400);
});

test('decisions are append-only, the latest is effective, owner and status filter, snoozes expire and new evidence reopens', async (t) => {
  const h = await startReviewHarness(t);
  const ids = await seed(h);
  const rid = `refuted:${ids.refuted}`;
  const first = await h.call('POST', '/v1/namespaces/n/review/decisions', {
    review_id: rid,
    status: 'assigned',
    owner: 'ana',
    decision: 'needs_evidence',
    note: 'look',
  });
  t.is(first.status, 201, first.text);
  t.like(first.body, {
    review_id: rid,
    status: 'assigned',
    owner: 'ana',
    decision: 'needs_evidence',
    note: 'look',
    recheck_at: null,
  });
  const byOwner = await h.call('GET', `${Q}?owner=ana`);
  t.deepEqual(
    byOwner.body.items.map((i: any) => [i.id, i.status, i.owner, i.decision]),
    [[rid, 'assigned', 'ana', 'needs_evidence']],
  );
  t.is((await h.call('GET', `${Q}?owner=unassigned`)).body.total, 4);
  t.is((await h.call('GET', `${Q}?status=open`)).body.total, 4);
  const sid = `stale:${ids.stale}`;
  await h.call('POST', '/v1/namespaces/n/review/decisions', {
    review_id: sid,
    status: 'snoozed',
    recheck_at: '2026-01-02T00:00:00Z',
  });
  t.is((await h.call('GET', `${Q}?status=snoozed`)).body.items[0].id, sid);
  h.clock.advanceHours(25);
  t.is((await h.call('GET', `${Q}?status=snoozed`)).body.total, 0, 'the snooze expired');
  await h.call('POST', '/v1/namespaces/n/review/decisions', {
    review_id: rid,
    status: 'resolved',
    note: 'confirmed wrong',
  });
  t.false(
    (await h.call('GET', Q)).body.items.some((i: any) => i.id === rid),
    'resolved items are hidden by default',
  );
  const resolved = await h.call('GET', `${Q}?status=resolved`);
  t.like(resolved.body.items[0], { id: rid, status: 'resolved', owner: 'ana', note: 'confirmed wrong' });
  h.clock.advanceHours(1);
  await h.call('POST', `/v1/namespaces/n/nodes/${ids.refuted}/refute`);
  const reopened = (await h.call('GET', Q)).body.items.find((i: any) => i.id === rid);
  t.like(reopened, { status: 'open', priority: 80, suggested_action: 'resolve' });
  const history = await h.call('GET', `/v1/namespaces/n/review/decisions?review_id=${rid}`);
  t.deepEqual(
    history.body.decisions.map((d: any) => d.status),
    ['assigned', 'resolved'],
  );
  t.is((await h.call('GET', '/v1/namespaces/n/review/decisions')).body.decisions.length, 3);
});

test('decision requests are validated', async (t) => {
  const h = await startReviewHarness(t);
  const ids = await seed(h);
  const post = (body: unknown) => h.call('POST', '/v1/namespaces/n/review/decisions', body);
  t.is((await post({ review_id: `refuted:${ids.refuted}`, status: 'done' })).status, 400);
  t.is((await post({ review_id: 'refuted:nope', status: 'resolved' })).body.error.code, 'invalid_review_id');
  t.is((await post({ review_id: 'refuted:00000000-0000-4000-8000-000000000000', status: 'resolved' })).status, 404);
  t.is((await post({ review_id: `refuted:${ids.refuted}`, status: 'snoozed' })).body.error.code, 'recheck_required');
  t.is((await post({ review_id: `refuted:${ids.refuted}`, status: 'assigned' })).body.error.code, 'owner_required');
  t.is(
    (await post({ review_id: `refuted:${ids.refuted}`, status: 'assigned', owner: 'unassigned' })).body.error.code,
    'invalid_owner',
  );
  t.is((await post({ review_id: `refuted:${ids.refuted}`, status: 'resolved', recheck_at: 'soon' })).status, 400);
  t.is((await post({ review_id: `refuted:${ids.refuted}`, status: 'resolved', url: 'x' })).status, 400);
  t.is((await h.call('GET', '/v1/namespaces/n/review/decisions')).body.decisions.length, 0);
});

test('a source refuted past the thresholds becomes a source_trust_anomaly that escalates by priority; a new label starts a new run', async (t) => {
  const h = await startReviewHarness(t);
  const nodes = [];
  for (let i = 0; i < 3; i++)
    nodes.push(await node(h, 'n', { content: `rumour ${i}`, source_id: 'tabloid', confidence: 0.7 }));
  await h.call('POST', `/v1/namespaces/n/nodes/${nodes[0]}/refute`);
  await h.call('POST', `/v1/namespaces/n/nodes/${nodes[1]}/refute`);
  t.is(
    (await h.call('GET', `${Q}?types=source_trust_anomaly`)).body.total,
    0,
    'two refutations: 0.6 -> 0.486, a drop of 0.11',
  );
  t.is((await h.call('GET', `${Q}?types=source_trust_anomaly&source_trust_drop_threshold=0.1`)).body.total, 1);
  await h.call('POST', `/v1/namespaces/n/nodes/${nodes[2]}/refute`);
  const res = await h.call('GET', `${Q}?types=source_trust_anomaly`);
  t.is(res.body.total, 1);
  const item = res.body.items[0];
  t.like(item, {
    id: `source_trust_anomaly:${nodes[0]}`,
    type: 'source_trust_anomaly',
    node_id: nodes[0],
    source_id: 'tabloid',
    action: 'refute',
    priority: 82,
    escalated: true,
    escalation_level: 'source_trust_anomaly',
    confidence: 0.4374,
  });
  t.deepEqual(item.node_ids, nodes);
  t.regex(item.reason, /fell from 0.6 to 0.4374 after 3 refutations/);
  const quiet = await h.call('GET', `${Q}?types=source_trust_anomaly&source_anomaly_escalation_priority=90`);
  t.false(quiet.body.items[0].escalated);
  await h.call('POST', '/v1/namespaces/n/sources/label', {
    source_id: 'tabloid',
    credibility: 0.5,
    reason: 'reviewed',
  });
  t.is((await h.call('GET', `${Q}?types=source_trust_anomaly`)).body.total, 0);
});

test('items past escalationAfterHours escalate as review_overdue; the digest groups them; snapshots are durable; handoffs filter', async (t) => {
  const h = await startReviewHarness(t);
  const ids = await seed(h);
  t.is((await h.call('GET', '/v1/namespaces/n/review/escalations')).body.total_escalated, 0);
  await h.call('POST', '/v1/namespaces/n/review/decisions', {
    review_id: `stale:${ids.stale}`,
    status: 'assigned',
    owner: 'bob',
  });
  await h.call('POST', '/v1/namespaces/n/review/decisions', {
    review_id: `low_confidence:${ids.low}`,
    status: 'resolved',
  });
  h.clock.advanceHours(30);
  const q = await h.call('GET', `${Q}?types=refuted`);
  t.like(q.body.items[0], { escalated: true, escalation_level: 'review_overdue', escalation_age_hours: 30 });
  t.regex(q.body.items[0].escalation_reason, /open for 30 h, past 24 h/);
  const digest = await h.call('GET', '/v1/namespaces/n/review/escalations');
  t.is(digest.body.total_escalated, 4);
  t.deepEqual(
    digest.body.groups.map((g: any) => [
      g.owner,
      g.source_id,
      g.type,
      g.escalation_level,
      g.count,
      g.max_priority,
      g.max_age_hours,
    ]),
    [
      ['unassigned', 'wiki', 'contradictory', 'review_overdue', 1, 78, 30],
      ['unassigned', 'blog', 'contradictory', 'review_overdue', 1, 70, 30],
      ['unassigned', 'blog', 'refuted', 'review_overdue', 1, 70, 30],
      ['bob', 'wiki', 'stale', 'review_overdue', 1, 50, 30],
    ],
  );
  t.regex(digest.body.note, /4 escalated review items in 4 groups; oldest 30 h/);
  t.is((await h.call('GET', '/v1/namespaces/n/review/escalations?escalation_after_hours=48')).body.total_escalated, 0);
  t.is((await h.call('GET', '/v1/namespaces/n/review/escalations?owner=bob')).body.total_escalated, 1);
  const snap = await h.call('POST', '/v1/namespaces/n/review/escalation-digests', { note: 'morning handoff' });
  t.is(snap.status, 201, snap.text);
  t.like(snap.body, { kind: 'snapshot', total_escalated: 4, note: 'morning handoff', escalation_after_hours: 24 });
  const list = await h.call('GET', '/v1/namespaces/n/review/escalation-digests');
  t.deepEqual(
    list.body.digests.map((d: any) => d.digest_event_id),
    [snap.body.digest_event_id],
  );
  const handoffs = await h.call('GET', '/v1/namespaces/n/review/handoffs?owner=bob&escalation_level=review_overdue');
  t.is(handoffs.body.handoffs.length, 1);
  t.deepEqual(
    handoffs.body.handoffs[0].groups.map((g: any) => g.review_ids),
    [[`stale:${ids.stale}`]],
  );
  t.is(handoffs.body.handoffs[0].total_escalated, 1);
  t.is((await h.call('GET', '/v1/namespaces/n/review/handoffs?owner=carol')).body.handoffs.length, 0);
  t.is((await h.call('GET', '/v1/namespaces/n/review/handoffs?escalation_level=late')).status, 400);
});

test('GraphQL reviewQueue, reviewDecisions, recordReviewDecision, reviewEscalationDigest(s), recordReviewEscalationDigest and reviewHandoffs', async (t) => {
  const h = await startReviewHarness(t);
  const ids = await seed(h);
  const q = await gql(
    h,
    `{ reviewQueue(namespace: "n", types: ["refuted", "low_confidence"], lowConfidenceThreshold: 0.25, limit: 10) {
    id type priority reason nodeId nodeIds sourceId action text createdAt suggestedAction confidence status owner decision note reviewedAt
    escalated escalationLevel escalationReason escalationAgeHours } }`,
  );
  t.is(q.status, 200, q.text);
  t.deepEqual(
    q.body.data.reviewQueue.map((i: any) => i.id),
    [`refuted:${ids.refuted}`, `low_confidence:${ids.low}`],
  );
  const m = await gql(
    h,
    `mutation { recordReviewDecision(namespace: "n", reviewId: "refuted:${ids.refuted}", status: "assigned", owner: "ana", decision: "needs_evidence", note: "n1") { reviewId status owner decision note recheckAt txTime } }`,
  );
  t.like(m.body.data.recordReviewDecision, {
    reviewId: `refuted:${ids.refuted}`,
    status: 'assigned',
    owner: 'ana',
    decision: 'needs_evidence',
  });
  const d = await gql(h, '{ reviewDecisions(namespace: "n") { reviewId status } }');
  t.is(d.body.data.reviewDecisions.length, 1);
  const filtered = await gql(h, '{ reviewQueue(namespace: "n", owner: "ana", status: "assigned") { id owner } }');
  t.deepEqual(filtered.body.data.reviewQueue, [{ id: `refuted:${ids.refuted}`, owner: 'ana' }]);
  h.clock.advanceHours(2);
  const digest = await gql(
    h,
    '{ reviewEscalationDigest(namespace: "n", escalationAfterHours: 1) { totalEscalated note groups { owner sourceId type escalationLevel count maxPriority maxAgeHours reviewIds } } }',
  );
  t.is(digest.body.data.reviewEscalationDigest.totalEscalated, 5);
  t.is(
    digest.body.data.reviewEscalationDigest.groups.find((g: any) => g.owner === 'ana').reviewIds[0],
    `refuted:${ids.refuted}`,
  );
  const rec = await gql(
    h,
    'mutation { recordReviewEscalationDigest(namespace: "n", escalationAfterHours: 1, note: "shift") { digestEventId totalEscalated note } }',
  );
  t.like(rec.body.data.recordReviewEscalationDigest, { totalEscalated: 5, note: 'shift' });
  const all = await gql(
    h,
    '{ reviewEscalationDigests(namespace: "n") { digestEventId } reviewHandoffs(namespace: "n", owner: "ana", escalationLevel: "review_overdue") { digestEventId totalEscalated groups { owner } } }',
  );
  t.is(all.body.data.reviewEscalationDigests.length, 1);
  t.deepEqual(all.body.data.reviewHandoffs[0].groups, [{ owner: 'ana' }]);
  const bad = await gql(h, '{ reviewQueue(namespace: "n", lowConfidenceThreshold: 3) { id } }');
  t.is(bad.status, 400);
});

test('claims enter and leave the queue at valid-time boundaries without any other change; escalation_level filters', async (t) => {
  const h = await startReviewHarness(t);
  const later = await node(h, 'n', {
    content: 'valid later',
    source_id: 's',
    confidence: 0.1,
    valid_from: '2026-01-01T02:00:00Z',
  });
  const ids = async (query = '') => ((await h.call('GET', `${Q}${query}`)).body.items as any[]).map((i) => i.id);
  t.deepEqual(await ids(), []);
  h.clock.advanceHours(3);
  t.deepEqual(await ids(), [`low_confidence:${later}`]);
  t.deepEqual(await ids('?escalation_level=review_overdue'), []);
  h.clock.advanceHours(30);
  t.deepEqual(await ids('?escalation_level=review_overdue'), [`low_confidence:${later}`]);
  t.deepEqual(await ids('?escalation_level=source_trust_anomaly'), []);
  t.is((await h.call('GET', `${Q}?escalation_level=soon`)).status, 400);
});
