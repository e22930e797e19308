// tier: quick
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import test from 'ava';
import { gql, node, startReceiver, startReviewHarness } from './review-helpers.js';

const exec = promisify(execFile);
const SECRET = 'handoff-secret-123';
const ALLOW = { SVC_KNOWLEDGE_ALLOW_PRIVATE_TARGETS: 'true' };
const W = '/v1/namespaces/n/review/handoff-webhooks';

/** HMAC-SHA-256 by an independent implementation: openssl, fed the body on stdin. */
async function opensslHmac(secret: string, body: string): Promise<string> {
  const child = exec('openssl', ['dgst', '-sha256', '-hmac', secret, '-r']);
  child.child.stdin!.end(body);
  const { stdout } = await child;
  return stdout.trim().split(/\s+/)[0]!;
}

async function escalated(h: Awaited<ReturnType<typeof startReviewHarness>>) {
  const id = await node(h, 'n', { content: 'refuted claim', source_id: 'blog', confidence: 0.8 });
  await h.call('POST', `/v1/namespaces/n/nodes/${id}/refute`);
  h.clock.advanceHours(30);
  return id;
}

test('plan is a signed dry run that sends nothing; the signature matches openssl', async (t) => {
  const h = await startReviewHarness(t, ALLOW);
  await escalated(h);
  const receiver = await startReceiver(t, () => ({ status: 200 }));
  const res = await h.call('POST', `${W}/plan`, { target_url: receiver.url, secret: SECRET });
  t.is(res.status, 200, res.text);
  t.like(res.body, { target_url: receiver.url, dry_run: true, max_attempts: 5, total_escalated: 1 });
  t.false(res.text.includes(SECRET), 'the secret is never returned');
  const body = JSON.stringify(res.body.payload);
  t.is(res.body.signature, `sha256=${await opensslHmac(SECRET, body)}`);
  t.is(receiver.received.length, 0);
  t.is((await h.call('GET', `${W}/receipts`)).body.receipts.length, 0);
  const g = await gql(
    h,
    `{ reviewHandoffWebhookPlan(namespace: "n", targetUrl: "${receiver.url}", secret: "${SECRET}") { targetUrl dryRun payloadSha256 signature maxAttempts } }`,
  );
  t.like(g.body.data.reviewHandoffWebhookPlan, { targetUrl: receiver.url, dryRun: true, maxAttempts: 5 });
});

test('deliver with execute sends the signed payload, captures the response and records a receipt; execute false only plans', async (t) => {
  const h = await startReviewHarness(t, ALLOW);
  const id = await escalated(h);
  const receiver = await startReceiver(t, () => ({ status: 202, body: '{"ok":true}' }));
  const dry = await h.call('POST', `${W}/deliver`, { target_url: receiver.url, secret: SECRET, execute: false });
  t.like(dry.body, { dry_run: true, executed: false, status_code: null, receipt: null });
  t.is(receiver.received.length, 0);
  const res = await h.call('POST', `${W}/deliver`, {
    target_url: receiver.url,
    secret: SECRET,
    execute: true,
    timeout_ms: 2000,
  });
  t.is(res.status, 200, res.text);
  t.like(res.body, { dry_run: false, executed: true, status_code: 202, response_body: '{"ok":true}', error: null });
  t.false(res.text.includes(SECRET));
  const [got] = receiver.received;
  t.truthy(got);
  t.is(got!.headers['x-svc-signature-256'], `sha256=${await opensslHmac(SECRET, got!.body)}`);
  t.is(got!.headers['x-svc-event'], 'review.handoff');
  t.is(got!.headers['x-svc-delivery'], res.body.digest_event_id);
  t.is(got!.headers['x-svc-attempt'], '1');
  const payload = JSON.parse(got!.body);
  t.like(payload, {
    type: 'review.handoff',
    namespace: 'n',
    digest_event_id: res.body.digest_event_id,
    total_escalated: 1,
    owner: null,
  });
  t.deepEqual(payload.groups[0].review_ids, [`refuted:${id}`]);
  const receipts = await h.call('GET', `${W}/receipts`);
  t.deepEqual(Object.keys(receipts.body.receipts[0]).sort(), [
    'attempt',
    'digest_event_id',
    'duration_ms',
    'error',
    'payload_sha256',
    'response_sha256',
    'status_code',
    'success',
    'target_url',
    'tx_time',
  ]);
  t.like(receipts.body.receipts[0], {
    digest_event_id: res.body.digest_event_id,
    target_url: receiver.url,
    success: true,
    status_code: 202,
    payload_sha256: res.body.payload_sha256,
  });
  t.is(receipts.body.receipts[0].response_sha256, createHash('sha256').update('{"ok":true}').digest('hex'));
  t.is(res.body.payload_sha256, createHash('sha256').update(got!.body).digest('hex'));
  t.is((await h.call('GET', '/v1/namespaces/n/review/handoffs')).body.handoffs[0].kind, 'handoff');
  t.is((await h.call('GET', `${W}/retry-candidates`)).body.candidates.length, 0);
  const dbText = JSON.stringify(
    h.store.services.core.db.prepare('SELECT * FROM kn_handoff_receipts, kn_review_digests').all(),
  );
  t.false(dbText.includes(SECRET), 'the secret is not stored');
});

test('a target that fails then recovers walks candidate, recommendation, explicit retry and resolution', async (t) => {
  const h = await startReviewHarness(t, ALLOW);
  await escalated(h);
  let healthy = false;
  const receiver = await startReceiver(t, () =>
    healthy ? { status: 200, body: 'ok' } : { status: 503, body: 'down' },
  );
  const first = await h.call('POST', `${W}/deliver`, { target_url: receiver.url, secret: SECRET, execute: true });
  t.like(first.body, { executed: true, status_code: 503, error: 'target answered 503' });
  const candidates = (await h.call('GET', `${W}/retry-candidates`)).body.candidates;
  t.is(candidates.length, 1);
  t.like(candidates[0], {
    digest_event_id: first.body.digest_event_id,
    target_url: receiver.url,
    attempts: 1,
    last_status_code: 503,
    payload_sha256: first.body.payload_sha256,
    last_error: 'target answered 503',
  });
  let rec = (await h.call('GET', `${W}/retry-recommendations`)).body.recommendations[0];
  t.like(rec, { attempts: 1, delay_seconds: 60, ready: false });
  t.regex(rec.reason, /1 attempt; last answered 503; wait 60 s/);
  h.clock.now += 61_000;
  rec = (await h.call('GET', `${W}/retry-recommendations`)).body.recommendations[0];
  t.true(rec.ready);
  const notExecuted = await h.call('POST', `${W}/retry`, {
    digest_event_id: first.body.digest_event_id,
    target_url: receiver.url,
    secret: SECRET,
    execute: false,
  });
  t.is(notExecuted.body.error.code, 'execute_required');
  const second = await h.call('POST', `${W}/retry`, {
    digest_event_id: first.body.digest_event_id,
    target_url: receiver.url,
    secret: SECRET,
    execute: true,
  });
  t.like(second.body, { status_code: 503, resolved: false });
  rec = (await h.call('GET', `${W}/retry-recommendations`)).body.recommendations[0];
  t.like(rec, { attempts: 2, delay_seconds: 120, ready: false });
  const fatigue = await h.call('GET', `${W}/retry-fatigue`);
  t.deepEqual(fatigue.body.targets, [
    {
      target_url: receiver.url,
      candidates: 1,
      total_attempts: 2,
      ready: 0,
      waiting: 1,
      status_families: [{ family: '5xx', count: 1 }],
      owners: [{ owner: 'unassigned', count: 1 }],
      escalation_levels: [{ escalation_level: 'review_overdue', count: 1 }],
      last_status_code: 503,
      last_error: 'target answered 503',
    },
  ]);
  healthy = true;
  const third = await gql(
    h,
    `mutation { retryReviewHandoffWebhook(namespace: "n", digestEventId: "${first.body.digest_event_id}", targetUrl: "${receiver.url}", secret: "${SECRET}", execute: true, timeoutMs: 2000) {
    executed statusCode resolved receipt { attempt success payloadSha256 } } }`,
  );
  t.deepEqual(third.body.data.retryReviewHandoffWebhook, {
    executed: true,
    statusCode: 200,
    resolved: true,
    receipt: { attempt: 3, success: true, payloadSha256: first.body.payload_sha256 },
  });
  t.is((await h.call('GET', `${W}/retry-candidates`)).body.candidates.length, 0);
  t.deepEqual(
    receiver.received.map((r) => r.headers['x-svc-attempt']),
    ['1', '2', '3'],
  );
  t.true(
    receiver.received.every((r) => r.body === receiver.received[0]!.body),
    'retries resend the same payload',
  );
  const again = await h.call('POST', `${W}/retry`, {
    digest_event_id: first.body.digest_event_id,
    target_url: receiver.url,
    secret: SECRET,
    execute: true,
  });
  t.is(again.body.error.code, 'retry_candidate_not_found');
  const g = await gql(
    h,
    '{ reviewHandoffDeliveryReceipts(namespace: "n") { attempt success statusCode } reviewHandoffRetryCandidates(namespace: "n") { digestEventId } reviewHandoffRetryRecommendations(namespace: "n") { ready } }',
  );
  t.deepEqual(
    g.body.data.reviewHandoffDeliveryReceipts.map((r: any) => [r.attempt, r.success, r.statusCode]),
    [
      [1, false, 503],
      [2, false, 503],
      [3, true, 200],
    ],
  );
  t.deepEqual(g.body.data.reviewHandoffRetryCandidates, []);
});

test('retry fatigue presets come in a stable order with exactly the documented fields and narrow the targets', async (t) => {
  const h = await startReviewHarness(t, ALLOW);
  await escalated(h);
  const receiver = await startReceiver(t, () => ({ status: 500 }));
  await h.call('POST', `${W}/deliver`, {
    target_url: receiver.url,
    secret: SECRET,
    execute: true,
    escalation_level: 'review_overdue',
  });
  const res = await h.call('GET', `${W}/retry-fatigue`);
  t.deepEqual(
    res.body.presets.map((p: any) => p.name),
    ['review-overdue', 'source-trust-anomaly', 'unassigned-review-overdue'],
  );
  for (const p of res.body.presets) {
    for (const key of Object.keys(p))
      t.true(
        ['name', 'owner', 'escalation_level', 'description', 'example_rest_query', 'example_graphql'].includes(key),
        key,
      );
    for (const key of ['name', 'description', 'example_rest_query', 'example_graphql']) t.is(typeof p[key], 'string');
  }
  t.deepEqual(res.body.presets[2], { ...res.body.presets[2], owner: 'unassigned', escalation_level: 'review_overdue' });
  t.is((await h.call('GET', `${W}/retry-fatigue?preset=review-overdue`)).body.targets.length, 1);
  t.is((await h.call('GET', `${W}/retry-fatigue?preset=unassigned-review-overdue`)).body.targets.length, 1);
  t.is((await h.call('GET', `${W}/retry-fatigue?preset=source-trust-anomaly`)).body.targets.length, 0);
  t.is((await h.call('GET', `${W}/retry-fatigue?owner=ana`)).body.targets.length, 0);
  t.is((await h.call('GET', `${W}/retry-fatigue?preset=nope`)).status, 400);
  const g = await gql(
    h,
    '{ reviewHandoffRetryFatigue(namespace: "n", preset: "review-overdue") { targetUrl candidates totalAttempts ready waiting statusFamilies { family count } owners { owner count } escalationLevels { escalationLevel count } lastStatusCode lastError } }',
  );
  t.is(g.status, 200, g.text);
  t.is(g.body.data.reviewHandoffRetryFatigue.length, 1, 'one entry per target endpoint, as the spec lists it');
  t.deepEqual(g.body.data.reviewHandoffRetryFatigue[0].statusFamilies, [{ family: '5xx', count: 1 }]);
  t.deepEqual(g.body.data.reviewHandoffRetryFatigue[0].escalationLevels, [
    { escalationLevel: 'review_overdue', count: 1 },
  ]);
});

test('targets on loopback or private addresses are refused unless configured; bad URLs, redirects and timeouts are handled', async (t) => {
  const h = await startReviewHarness(t);
  await escalated(h);
  for (const url of [
    'http://127.0.0.1:9/x',
    'http://10.1.2.3/x',
    'http://169.254.169.254/latest',
    'http://[::1]/x',
    'http://localhost:9/x',
  ]) {
    const res = await h.call('POST', `${W}/deliver`, { target_url: url, secret: SECRET, execute: true });
    t.is(res.status, 400, url);
    t.is(res.body.error.code, 'target_not_allowed', url);
  }
  t.is(
    (await h.call('POST', `${W}/plan`, { target_url: 'ftp://example.com/x', secret: SECRET })).body.error.code,
    'invalid_target_url',
  );
  t.is(
    (await h.call('POST', `${W}/plan`, { target_url: 'http://user:pw@example.com/x', secret: SECRET })).body.error.code,
    'invalid_target_url',
  );
  t.is((await h.call('POST', `${W}/plan`, { target_url: 'http://example.com/x', secret: 'short' })).status, 400);
  t.is((await h.call('GET', `${W}/receipts`)).body.receipts.length, 0);
  const open = await startReviewHarness(t, ALLOW);
  await escalated(open);
  const redirecting = await startReceiver(t, () => ({ status: 302, headers: { location: 'http://169.254.169.254/' } }));
  const r = await open.call('POST', `${W}/deliver`, { target_url: redirecting.url, secret: SECRET, execute: true });
  t.like(r.body, { status_code: 302, error: 'redirect to http://169.254.169.254/ not followed' });
  const slow = await startReceiver(t, () => new Promise((resolve) => setTimeout(() => resolve({ status: 200 }), 1500)));
  const s = await open.call('POST', `${W}/deliver`, {
    target_url: slow.url,
    secret: SECRET,
    execute: true,
    timeout_ms: 100,
  });
  t.like(s.body, { executed: true, status_code: null, error: 'timed out after 100 ms' });
  t.is((await open.call('GET', `${W}/retry-candidates`)).body.candidates.length, 2);
});
