// tier: full
import fs from 'node:fs';
import http from 'node:http';
import test, { type ExecutionContext } from 'ava';
import WebSocket from 'ws';
import { request, startTestControlPlane } from '../helpers/servers.js';
import { testConfig } from '../helpers/test-config.js';
import { eventIngestFastPath } from '../../api/control/events/ingest-fast-path.js';
import { silentLogger } from '../../platform/logger.js';
import { AuditReceipts } from '../../controllers/audit/audit-receipts.js';
import type { AuditReceipt } from '../../domain/audit/audit-receipt.js';
import { ensureAuditKey } from '../../platform/audit/audit-key.js';
import { ReceiptFile, receiptFile } from '../../platform/audit/receipt-file.js';
import { tempDir } from '../helpers/temp-dir.js';
import { fastPathBesideKoa, rawPost as raw } from '../helpers/raw-post.js';

const quiet = { SVC_CAPACITY_CHECK_INTERVAL: 'off' };
const post = (url: string, json: unknown) => request(url, { method: 'POST', json });

function expectError(t: ExecutionContext, res: { status: number; body: any }, status: number, code?: string): void {
  t.is(res.status, status, JSON.stringify(res.body));
  t.deepEqual(Object.keys(res.body.error).sort(), ['code', 'details', 'message']);
  if (code) t.is(res.body.error.code, code);
}

test('event endpoints validate input with 4xx error bodies and never answer 5xx', async (t) => {
  const plane = await startTestControlPlane(t, testConfig(t, quiet));
  const u = plane.url;
  const bad: unknown[] = [
    {},
    { type: 'x', severity: 'info' },
    { type: 'x', severity: 'fatal', title: 't' },
    { type: 'x', severity: 'info', title: 't', extra: 1 },
    { type: 'Bad Type', severity: 'info', title: 't' },
    { type: 'x', severity: 'info', title: 't', occurredAt: 'yesterday' },
    { type: 'x', severity: 'info', title: 't', metadata: 'no' },
    [],
    'text',
    42,
    null,
  ];
  for (const body of bad) expectError(t, await post(`${u}/api/events`, body), 400, 'invalid_request');
  expectError(
    t,
    await request(`${u}/api/events`, {
      method: 'POST',
      body: '{"type":',
      headers: { 'content-type': 'application/json' },
    }),
    400,
  );
  for (const q of ['limit=abc', 'limit=0', 'offset=-1', 'severity=fatal', 'limit=1&limit=2'])
    expectError(t, await request(`${u}/api/events?${q}`), 400, 'invalid_request');
  expectError(t, await request(`${u}/api/events/correlated`), 400, 'invalid_request');
  expectError(t, await request(`${u}/api/events/evt_nope`), 404, 'event_not_found');
  for (const action of ['ack', 'snooze', 'open'])
    expectError(
      t,
      await post(`${u}/api/events/evt_nope/${action}`, action === 'snooze' ? { duration: '1h' } : {}),
      404,
      'event_not_found',
    );
  const created = await post(`${u}/api/events`, {
    type: 'service.health.critical',
    severity: 'critical',
    title: 'down',
    app: 'web',
    metadata: { correlationKey: 'web:web:health' },
  });
  const id = created.body.event.id as string;
  for (const body of [
    {},
    { duration: '1h', until: '2030-01-01T00:00:00Z' },
    { duration: 'soon' },
    { duration: -5 },
    { until: 'tomorrow' },
    { duration: '0m' },
  ]) {
    expectError(t, await post(`${u}/api/events/${id}/snooze`, body), 400);
  }
  expectError(t, await post(`${u}/api/events/${id}/ack`, { operator: 5 }), 400, 'invalid_request');
  expectError(t, await post(`${u}/api/events/${id}/open`, { nope: true }), 400, 'invalid_request');
  for (const body of [
    {},
    { action: 'explode', correlationKey: 'k' },
    { action: 'acknowledge' },
    { action: 'acknowledge', correlationKey: 'k', dedupeKey: 'd' },
    { action: 'snooze', correlationKey: 'web:web:health' },
    { action: 'snooze', correlationKey: 'web:web:health', duration: 'x' },
  ]) {
    expectError(t, await post(`${u}/api/incidents/action`, body), 400);
  }
  expectError(
    t,
    await post(`${u}/api/incidents/action`, { action: 'resolve', correlationKey: 'no-such-key' }),
    404,
    'incident_not_found',
  );
  for (const body of [{ limit: 0 }, { dryRun: 'yes' }, { app: '' }, { extra: 1 }])
    expectError(t, await post(`${u}/api/events/reconcile`, body), 400, 'invalid_request');
  expectError(t, await post(`${u}/api/events/test`, { severity: 'loud' }), 400, 'invalid_request');
});

test('events are recorded, listed, filtered, correlated, deduplicated and grouped into active incidents', async (t) => {
  const plane = await startTestControlPlane(t, testConfig(t, { ...quiet, SVC_EVENT_ENVIRONMENT: 'staging' }));
  const u = plane.url;
  const warn = await post(`${u}/api/events`, {
    type: 'service.health.warning',
    severity: 'warning',
    title: 'slow',
    app: 'web',
    dedupeKey: 'w1',
    metadata: { correlationKey: 'web:web:health', previousState: 'passing' },
  });
  t.is(warn.status, 201);
  t.regex(warn.body.event.id, /^evt_[0-9a-z]{26}$/);
  t.like(warn.body.event, {
    source: 'svc-control-plane',
    app: 'web',
    environment: 'staging',
    state: 'open',
    dedupeKey: 'w1',
    snoozedUntil: null,
    correlationKey: 'web:web:health',
  });
  const dup = await post(`${u}/api/events`, {
    type: 'service.health.warning',
    severity: 'warning',
    title: 'slow again',
    app: 'web',
    dedupeKey: 'w1',
  });
  t.deepEqual(dup.body, { recorded: false, reason: 'duplicate' });
  const crit = await post(`${u}/api/events`, {
    type: 'service.health.critical',
    severity: 'critical',
    title: 'down',
    app: 'web',
    metadata: { correlationKey: 'web:web:health' },
  });
  await post(`${u}/api/events`, {
    type: 'deploy.failed',
    severity: 'critical',
    title: 'deploy',
    app: 'api',
    source: 'ci',
    metadata: { correlationKey: 'api:deploy' },
  });
  await post(`${u}/api/events`, {
    type: 'legacy.thing',
    severity: 'warning',
    title: 'old',
    app: 'api',
    dedupeKey: 'legacy-1',
  });

  const listed = await request(`${u}/api/events?limit=1000`);
  t.is(listed.body.limit, 200);
  t.is(listed.body.total, 4);
  t.is((await request(`${u}/api/events?app=web&severity=critical`)).body.events.length, 1);
  t.is((await request(`${u}/api/events?type=deploy.failed`)).body.events[0].source, 'ci');
  t.is((await request(`${u}/api/events?limit=1&offset=1`)).body.events.length, 1);
  t.is((await request(`${u}/api/events/${warn.body.event.id}`)).body.title, 'slow');

  const correlated = await request(`${u}/api/events/correlated?key=web:web:health`);
  t.deepEqual(
    correlated.body.events.map((e: any) => e.id),
    [warn.body.event.id, crit.body.event.id],
  );
  t.is((await request(`${u}/api/events/correlated?key=web:web:health&source=other`)).body.events.length, 0);
  t.is(
    (await request(`${u}/api/events/correlated?key=legacy-1`)).body.events.length,
    1,
    'events without a key fall back to dedupeKey',
  );

  let active = (await request(`${u}/api/events/active`)).body.incidents;
  const web = active.find((g: any) => g.correlationKey === 'web:web:health');
  t.like(web, { source: 'svc-control-plane', app: 'web', environment: 'staging', severity: 'critical', eventCount: 2 });
  t.is(web.representative.id, crit.body.event.id);
  t.is(web.firstSeen, warn.body.event.occurredAt);
  t.is(web.lastSeen, crit.body.event.occurredAt);
  t.is(active.length, 3);

  // Acknowledge records operator and note, and never changes body or metadata.
  const acked = await post(`${u}/api/events/${crit.body.event.id}/ack`, { operator: 'ana', note: 'looking' });
  t.like(acked.body, { state: 'acknowledged', body: crit.body.event.body, metadata: crit.body.event.metadata });
  t.like(acked.body.acknowledgement, { by: 'ana', note: 'looking', resolvedByEventId: null });
  active = (await request(`${u}/api/events/active`)).body.incidents;
  t.is(active.find((g: any) => g.correlationKey === 'web:web:health').representative.id, warn.body.event.id);
  const snoozed = await post(`${u}/api/events/${warn.body.event.id}/snooze`, { duration: '30m' });
  t.is(snoozed.body.state, 'snoozed');
  t.truthy(snoozed.body.snoozedUntil);
  t.falsy(
    (await request(`${u}/api/events/active`)).body.incidents.find((g: any) => g.correlationKey === 'web:web:health'),
  );
  const reopened = await post(`${u}/api/events/${warn.body.event.id}/open`, {});
  t.like(reopened.body, { state: 'open', snoozedUntil: null, acknowledgement: null });
  const past = await post(`${u}/api/events/${warn.body.event.id}/snooze`, { until: '2020-01-01T00:00:00Z' });
  t.is(past.body.state, 'open', 'a snooze in the past reads as open');

  // Correlated recovery: the info event acknowledges the open warning and notes who resolved it.
  const recovered = await post(`${u}/api/events`, {
    type: 'service.health.recovered',
    severity: 'info',
    title: 'ok',
    app: 'web',
    metadata: { correlationKey: 'web:web:health', previousState: 'warning' },
  });
  const afterRecovery = (await request(`${u}/api/events/${warn.body.event.id}`)).body;
  t.is(afterRecovery.state, 'acknowledged');
  t.is(afterRecovery.acknowledgement.resolvedByEventId, recovered.body.event.id);
  t.regex(afterRecovery.acknowledgement.note, new RegExp(recovered.body.event.id));

  // Incident actions by dedupeKey and by scoped correlation key.
  const byDedupe = await post(`${u}/api/incidents/action`, { action: 'acknowledge', dedupeKey: 'legacy-1', by: 'ana' });
  t.is(byDedupe.body.changed.length, 1);
  const resolved = await post(`${u}/api/incidents/action`, {
    action: 'resolve',
    correlationKey: 'api:deploy',
    source: 'ci',
    app: 'api',
    environment: 'staging',
    by: 'ana',
    note: 'fixed',
  });
  t.is(resolved.status, 200);
  t.is(resolved.body.resolutionEvents.length, 1);
  const resolution = (await request(`${u}/api/events/${resolved.body.resolutionEvents[0]}`)).body;
  t.like(resolution, {
    type: 'incident.resolved',
    severity: 'info',
    source: 'ci',
    app: 'api',
    correlationKey: 'api:deploy',
  });
  t.deepEqual((await request(`${u}/api/events/active`)).body.incidents, []);
  const reopen = await post(`${u}/api/incidents/action`, { action: 'open', correlationKey: 'api:deploy' });
  t.true(reopen.body.changed.length >= 1);
  t.is((await request(`${u}/api/events/active`)).body.incidents.length, 1);

  const testEvent = await post(`${u}/api/events/test`, { app: 'web' });
  t.is(testEvent.status, 201);
  t.like(testEvent.body.event, { type: 'event.test', severity: 'info', app: 'web' });
  const rules = await request(`${u}/api/alerts/rules`);
  t.true(rules.body.rules.some((r: any) => r.name === 'SvcTaskOOMRisk'));
  // The catalogue's types, exec sessions' two (issue 28) and scaling's two (issue 30) included.
  t.is(rules.body.eventTypes.length, 34);
  for (const type of ['exec.session.started', 'exec.session.ended', 'service.scaled_out', 'service.scaled_in'])
    t.true(
      rules.body.eventTypes.some((e: any) => (e.type ?? e.name ?? e) === type),
      `${type} in ${JSON.stringify(rules.body.eventTypes).slice(0, 200)}`,
    );
  const caps = await request(`${u}/api/v1/capabilities`);
  t.true(caps.body.capabilities.some((c: any) => c.name === 'events'));

  const metrics = await request(`${u}/metrics`);
  t.regex(metrics.text, /svc_events_total\{type="service.health.warning",severity="warning"\} 1/);
  t.regex(metrics.text, /svc_event_last_occurred_timestamp_seconds\{type="deploy.failed",severity="critical"\} \d+/);
  t.regex((await request(`${u}/api/metrics`)).text, /# TYPE svc_cron_missed_runs_total untyped/);
});

test('dryRun reconcile proposes without changing state; a real run acknowledges only with evidence', async (t) => {
  const plane = await startTestControlPlane(t, testConfig(t, quiet));
  const u = plane.url;
  const cap = await post(`${u}/api/events`, {
    type: 'service.capacity.below_minimum',
    severity: 'warning',
    title: 'low',
    metadata: { correlationKey: 'svc-host:h1:minimum-capacity' },
  });
  await post(`${u}/api/events`, {
    type: 'service.capacity.recovered',
    severity: 'info',
    title: 'ok',
    metadata: {
      correlationKey: 'svc-host:h1:minimum-capacity',
      note: 'recovery recorded while the warning was snoozed',
    },
  });
  const restart = await post(`${u}/api/events`, {
    type: 'scheduler.task.restarted',
    severity: 'warning',
    title: 'restart',
    app: 'ghost',
    metadata: { correlationKey: 'ghost:web:web:restarts' },
  });
  const other = await post(`${u}/api/events`, {
    type: 'deploy.failed',
    severity: 'critical',
    title: 'failed',
    app: 'ghost',
    metadata: { correlationKey: 'ghost:deploy' },
  });
  t.is((await request(`${u}/api/events/${cap.body.event.id}`)).body.state, 'acknowledged');
  await post(`${u}/api/events/${cap.body.event.id}/open`, {});
  const dry = await post(`${u}/api/events/reconcile`, { dryRun: true });
  t.is(dry.status, 200);
  const byId = new Map(dry.body.items.map((i: any) => [i.id, i]));
  t.like(byId.get(cap.body.event.id), { action: 'acknowledge', applied: false });
  t.regex((byId.get(cap.body.event.id) as any).evidence[0], /later service.capacity.recovered evt_/);
  t.like(byId.get(restart.body.event.id), {
    action: 'needs_review',
    reason: 'the restart event is younger than 15 minutes',
  });
  t.like(byId.get(other.body.event.id), { action: 'needs_review', reason: 'no later deploy.succeeded for the app' });
  t.is((await request(`${u}/api/events/${cap.body.event.id}`)).body.state, 'open', 'dryRun changes nothing');
  const real = await post(`${u}/api/events/reconcile`, { dryRun: false, by: 'night-shift', limit: 10 });
  t.true(real.body.items.find((i: any) => i.id === cap.body.event.id).applied);
  const after = (await request(`${u}/api/events/${cap.body.event.id}`)).body;
  t.like(after.acknowledgement, { by: 'night-shift' });
  t.is((await request(`${u}/api/events/${other.body.event.id}`)).body.state, 'open', 'inconclusive events stay open');
});

test('the live stream needs events:read when auth is on and delivers recorded events; metrics follow explicit auth', async (t) => {
  const plane = await startTestControlPlane(
    t,
    testConfig(t, { ...quiet, SVC_API_TOKEN: 'stream-token', SVC_REQUIRE_EXPLICIT_AUTH: 'true' }),
  );
  const wsUrl = plane.url.replace('http', 'ws');
  for (const path of ['/api/v1/events', '/ws']) {
    const refused = await new Promise<number>((resolve) => {
      const ws = new WebSocket(`${wsUrl}${path}`);
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.on('open', () => resolve(101));
      ws.on('error', () => undefined);
    });
    t.is(refused, 401);
    const wrong = await new Promise<number>((resolve) => {
      const ws = new WebSocket(`${wsUrl}${path}`, { headers: { authorization: 'Bearer nope' } });
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.on('open', () => resolve(101));
      ws.on('error', () => undefined);
    });
    t.is(wrong, 401);
  }
  const ws = new WebSocket(`${wsUrl}/ws?app=web`, { headers: { authorization: 'Bearer stream-token' } });
  t.teardown(() => ws.close());
  const messages: any[] = [];
  const got = new Promise<any>((resolve) =>
    ws.on('message', (data: Buffer) => {
      const m = JSON.parse(data.toString());
      messages.push(m);
      if (m.kind === 'ready')
        void request(`${plane.url}/api/events`, {
          method: 'POST',
          json: { type: 'event.test', severity: 'info', title: 'other app', app: 'api' },
          headers: { authorization: 'Bearer stream-token' },
        }).then(() =>
          request(`${plane.url}/api/events`, {
            method: 'POST',
            json: { type: 'event.test', severity: 'info', title: 'streamed', app: 'web' },
            headers: { authorization: 'Bearer stream-token' },
          }),
        );
      if (m.kind === 'recorded') resolve(m);
    }),
  );
  const recorded = await got;
  t.is(recorded.event.title, 'streamed', 'the app filter skips other apps');
  t.is((await request(`${plane.url}/metrics`)).status, 401);
  t.is((await request(`${plane.url}/api/metrics`, { headers: { authorization: 'Bearer stream-token' } })).status, 200);
});

test('the live stream takes the token from the svc.bearer subprotocol a browser sends, selects svc.events and never echoes the token', async (t) => {
  const plane = await startTestControlPlane(t, testConfig(t, { ...quiet, SVC_API_TOKEN: 'browser-token' }));
  const wsUrl = `${plane.url.replace('http', 'ws')}/api/v1/events`;
  const bearer = (token: string) => `svc.bearer.${Buffer.from(token).toString('base64url')}`;
  const attempt = (protocols: string[]) =>
    new Promise<{ status: number; protocol?: string; first?: any }>((resolve) => {
      const ws = new WebSocket(wsUrl, protocols);
      ws.on('unexpected-response', (_req, res) => resolve({ status: res.statusCode ?? 0 }));
      ws.on('message', (data: Buffer) => {
        resolve({ status: 101, protocol: ws.protocol, first: JSON.parse(data.toString()) });
        ws.close();
      });
      ws.on('error', () => undefined);
    });
  t.is((await attempt(['svc.events', bearer('wrong')])).status, 401);
  t.is((await attempt(['svc.events', 'svc.bearer.'])).status, 401, 'an empty entry is no token');
  const accepted = await attempt(['svc.events', bearer('browser-token')]);
  t.like(accepted, { status: 101, protocol: 'svc.events', first: { kind: 'ready' } });
});

test('the capacity check runs with the configured minimums and host id and feeds the disk metrics', async (t) => {
  const plane = await startTestControlPlane(
    t,
    testConfig(t, { SVC_CAPACITY_CHECK_INTERVAL: '1h', SVC_CAPACITY_MIN_DISK: '1000000gb', SVC_HOST_ID: 'node-7' }),
  );
  // Subscribe first, then look: the check at start may already have recorded the warning.
  const seen = new Promise<any>((resolve) => {
    const unsubscribe = plane.eventServices.events.subscribe((changes) => {
      const found = changes.find((c) => c.event.type === 'service.capacity.below_minimum');
      if (found) {
        unsubscribe();
        resolve(found.event);
      }
    });
  });
  const existing = (await request(`${plane.url}/api/events?type=service.capacity.below_minimum`)).body.events;
  const warning = existing[0] ?? (await seen);
  t.is(warning.correlationKey, 'svc-host:node-7:minimum-capacity');
  t.deepEqual(warning.metadata.missing, ['disk']);
  const text = (await request(`${plane.url}/metrics`)).text;
  t.regex(text, /svc_host_disk_free_bytes \d+/);
  t.regex(text, /svc_host_disk_total_bytes [1-9]\d*/);
});

test('the ingest fast path takes only a plain POST /api/events and answers as the Koa route does', async (t) => {
  const plane = await startTestControlPlane(
    t,
    testConfig(t, { ...quiet, SVC_API_TOKEN: 'ingest-token', SVC_BODY_LIMIT: '2kb' }),
  );
  const auth = { authorization: 'Bearer ingest-token' };
  const event = (dedupeKey: string) => JSON.stringify({ type: 'event.test', severity: 'info', title: 't', dedupeKey });
  // Which requests the fast path takes: it on a bare server, falling back to a 404 that says so.
  const fast = eventIngestFastPath({
    events: plane.eventServices.events,
    logger: silentLogger(),
    bodyLimitBytes: 2048,
    apiToken: 'ingest-token',
    requireExplicitAuth: false,
  });
  // The same with the production profile's audit receipts (real ones, in a temporary folder).
  const receiptsDir = tempDir(t);
  const withReceipts = eventIngestFastPath({
    events: plane.eventServices.events,
    logger: silentLogger(),
    bodyLimitBytes: 2048,
    apiToken: 'ingest-token',
    requireExplicitAuth: false,
    receipts: new AuditReceipts({
      file: new ReceiptFile(receiptFile(receiptsDir)),
      key: ensureAuditKey(receiptsDir),
      digest: () => null,
    }),
  });
  const bare = http.createServer((req, res) => {
    if (!(req.headers['x-receipts'] ? withReceipts : fast)(req, res)) res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => bare.close(() => resolve())));
  const bareUrl = `http://127.0.0.1:${(bare.address() as { port: number }).port}`;
  t.is((await raw(bareUrl, '/api/events', { body: event('taken'), headers: auth })).status, 201);
  t.is((await raw(bareUrl, '/api/events', { body: '{"type":', headers: auth })).status, 400);
  const declined: [string, Parameters<typeof raw>[2]][] = [
    ['/api/events?x=1', { body: event('d1'), headers: auth }],
    ['/api/events', { body: event('d2'), headers: auth, chunked: true }],
    ['/api/events', { body: event('d3') }],
    ['/api/events', { body: event('d4'), headers: { authorization: 'Bearer wrong' } }],
    ['/api/events', { body: event('d5'), headers: { ...auth, 'content-type': 'text/plain' } }],
    ['/api/events', { body: JSON.stringify({ title: 'x'.repeat(3000) }), headers: auth }],
  ];
  for (const [path, options] of declined) t.is((await raw(bareUrl, path, options)).status, 404, path);
  // With receipts: each recorded or refused event is guarded as Koa's receipt middleware guards it; a
  // malformed body is refused before any receipt, as the body parser refuses it before that middleware.
  const receiptLines = () =>
    fs
      .readFileSync(receiptFile(receiptsDir), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as AuditReceipt);
  const guarded = { ...auth, 'x-receipts': '1', 'x-request-id': 'guarded-1' };
  t.is((await raw(bareUrl, '/api/events', { body: event('guarded'), headers: guarded })).status, 201);
  t.is((await raw(bareUrl, '/api/events', { body: '{"type":"x"}', headers: guarded })).status, 400);
  t.is((await raw(bareUrl, '/api/events', { body: '{"type":', headers: guarded })).status, 400);
  const subject = { actor: 'control-token', action: 'POST /api/events', target: 'events' };
  const lines = receiptLines();
  t.is(lines.length, 4);
  t.like(lines[0], { phase: 'reserved', ...subject, refs: { request: 'guarded-1' } });
  t.like(lines[1], { phase: 'completed', outcome: 'succeeded', refs: { status: '201' } });
  t.like(lines[2], { phase: 'reserved', ...subject });
  t.like(lines[3], { phase: 'completed', outcome: 'refused', refs: { error: 'invalid_request' } });
  t.is((await raw(bareUrl, '/api/events', { body: event('open'), headers: { 'x-receipts': '1' } })).status, 404);

  // The same requests on the control plane: the fast path (`/api/events`) beside the Koa route (`?via=koa`).
  const { both, same } = fastPathBesideKoa(t, plane.url, '/api/events');
  same('bad JSON', await both({ body: '{"type":', headers: auth }), 400, 'invalid_json');
  same(
    'prototype poisoning',
    await both({ body: '{"__proto__":{"x":1},"type":"x","severity":"info","title":"t"}', headers: auth }),
    400,
    'invalid_json',
  );
  same('schema', await both({ body: '{"type":"x"}', headers: auth }), 400, 'invalid_request');
  same('empty body', await both({ body: '', headers: auth }), 400, 'invalid_request');
  same('a JSON string', await both({ body: '""', headers: auth }), 400, 'invalid_request');
  same('no token', await both({ body: event('n') }), 401, 'missing_credentials', ['www-authenticate']);
  same('bad token', await both({ body: event('n'), headers: { authorization: 'Bearer x' } }), 401, undefined, [
    'www-authenticate',
  ]);
  same('oversize', await both({ body: JSON.stringify({ title: 'x'.repeat(3000) }), headers: auth }), 413);
  // Recorded, then a duplicate on either path; a byte order mark is read past as the body parser does.
  const [first, second] = await both({ body: `\uFEFF${event('k1')}`, headers: { ...auth, 'x-request-id': 'req-1' } });
  t.is(first.status, 201);
  t.is(first.headers['x-request-id'], 'req-1');
  t.is(second.status, 200);
  t.deepEqual(second.body, { recorded: false, reason: 'duplicate' });
  t.is(second.headers['x-request-id'], 'req-1');
  t.deepEqual(Object.keys(first.body).sort(), ['event', 'recorded']);
  t.is(first.body.event.dedupeKey, 'k1');
  same('duplicate', await both({ body: event('k1'), headers: auth }), 200);
  const [fresh, koaFresh] = await both({ body: event('k2'), headers: auth });
  t.is(fresh.status, 201);
  t.is(koaFresh.status, 200);
  t.deepEqual(Object.keys(fresh.body.event).sort(), Object.keys(first.body.event).sort());
  t.regex(String(fresh.headers['x-request-id']), /^[0-9a-f-]{36}$/);
  t.is(fresh.headers['content-length'], String(Buffer.byteLength(JSON.stringify(fresh.body))));
});
