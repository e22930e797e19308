// tier: full
import test from 'ava';
import { blockedAddressReason, checkTargetUrl, resolveTarget } from '../../platform/outbound/outbound-guard.js';
import { notifyChannel } from '../../platform/notifications/notifier.js';
import { ValidationError } from '../../domain/errors.js';
import type { EventRecord } from '../../domain/events/event-record.js';
import { request, startTestControlPlane } from '../helpers/servers.js';
import { testConfig } from '../helpers/test-config.js';
import { startReceiver } from './receiver.js';

const quiet = { SVC_CAPACITY_CHECK_INTERVAL: 'off' };
const event: EventRecord = {
  id: 'evt_test',
  source: 's',
  app: 'web',
  environment: 'e',
  type: 'event.test',
  severity: 'warning',
  state: 'open',
  title: 'T',
  body: 'B',
  dedupeKey: null,
  occurredAt: '2026-01-01T00:00:00.000Z',
  snoozedUntil: null,
  metadata: {},
  correlationKey: 'k',
  acknowledgement: null,
  recordedAt: '2026-01-01T00:00:00.000Z',
};

test('the outbound guard classifies loopback, private, link-local and reserved addresses', (t) => {
  for (const address of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1'])
    t.is(blockedAddressReason(address), 'loopback', address);
  for (const address of ['10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', 'fd00::1', '100.64.0.1'])
    t.regex(blockedAddressReason(address)!, /^private/, address);
  for (const address of ['169.254.169.254', 'fe80::1']) t.is(blockedAddressReason(address), 'link-local', address);
  for (const address of ['0.0.0.0', '::']) t.is(blockedAddressReason(address), 'unspecified', address);
  t.is(blockedAddressReason('224.0.0.1'), 'multicast');
  for (const address of ['8.8.8.8', '172.32.0.1', '1.1.1.1', '2606:4700::1111', '::ffff:8.8.8.8'])
    t.is(blockedAddressReason(address), undefined, address);
});

test('target URLs are refused before DNS when they name a blocked address, a non-http scheme or credentials', (t) => {
  const deny = { allowPrivate: false };
  for (const url of [
    'http://127.0.0.1/x',
    'http://localhost:9/x',
    'http://[::1]/',
    'http://169.254.169.254/latest/meta-data',
    'http://10.0.0.1/',
    'https://192.168.0.10/hook',
  ]) {
    t.throws(() => checkTargetUrl(url, deny), {
      instanceOf: ValidationError,
      message: /is (loopback|private|link-local)/,
    });
  }
  t.throws(() => checkTargetUrl('ftp://example.com/', deny), {
    instanceOf: ValidationError,
    message: /only http and https/,
  });
  t.throws(() => checkTargetUrl('http://user:pw@example.com/', deny), {
    instanceOf: ValidationError,
    message: /credentials/,
  });
  t.throws(() => checkTargetUrl('not a url', deny), { instanceOf: ValidationError });
  t.notThrows(() => checkTargetUrl('http://127.0.0.1:9/x', { allowPrivate: true }));
  t.notThrows(() => checkTargetUrl('https://hooks.example.com/x', deny));
});

test('after DNS resolution a host with any blocked address is refused, and nothing is sent', async (t) => {
  const resolvesTo = (addresses: string[]) => ({ allowPrivate: false, resolve: async () => addresses });
  await t.throwsAsync(resolveTarget(new URL('https://hooks.example.test/'), resolvesTo(['10.0.0.7'])), {
    message: /resolves to 10.0.0.7, which is private/,
  });
  await t.throwsAsync(
    resolveTarget(new URL('https://hooks.example.test/'), resolvesTo(['93.184.216.34', '169.254.169.254'])),
    { message: /link-local/ },
  );
  t.like(await resolveTarget(new URL('https://hooks.example.test/'), resolvesTo(['93.184.216.34'])), {
    address: '93.184.216.34',
    family: 4,
  });
  // Real DNS: localhost resolves to loopback and is refused unless allowed.
  const receiver = await startReceiver(t);
  const port = new URL(receiver.url).port;
  const channel = {
    id: 'c',
    provider: 'webhook' as const,
    name: 'n',
    url: `http://localhost:${port}/hook`,
    severities: null,
    token: null,
    userKey: null,
    createdAt: '',
  };
  const refused = await notifyChannel(channel, event, { allowPrivate: false });
  t.false(refused.ok);
  t.regex(refused.error!, /refused: localhost resolves to (127.0.0.1|::1), which is loopback/);
  t.is(receiver.received.length, 0);
  t.true((await notifyChannel(channel, event, { allowPrivate: true })).ok);
  t.is(receiver.received.length, 1);
});

test('redirects are never followed', async (t) => {
  const target = await startReceiver(t);
  const redirector = await startReceiver(t);
  redirector.status = 302;
  redirector.responseHeaders = { location: `${target.url}/stolen` };
  const channel = {
    id: 'c',
    provider: 'webhook' as const,
    name: 'n',
    url: `${redirector.url}/hook`,
    severities: null,
    token: null,
    userKey: null,
    createdAt: '',
  };
  const result = await notifyChannel(channel, event, { allowPrivate: true });
  t.deepEqual(result, { ok: false, status: 302, error: 'redirect 302 not followed' });
  t.is(redirector.received.length, 1);
  t.is(target.received.length, 0);
});

test('channels get provider payloads asynchronously, filtered by severity; a failing channel blocks nothing; secrets never come back', async (t) => {
  const plane = await startTestControlPlane(t, testConfig(t, { ...quiet, SVC_NOTIFY_ALLOW_PRIVATE: 'true' }));
  const u = plane.url;
  const ok = await startReceiver(t);
  const broken = await startReceiver(t);
  broken.status = 500;
  const create = (json: unknown) => request(`${u}/api/notifications/channels`, { method: 'POST', json });
  const embed = await create({ provider: 'embed_webhook', name: 'chat', url: `${ok.url}/embed` });
  const topic = await create({ provider: 'topic_push', name: 'topic', url: `${ok.url}/topic` });
  const mobile = await create({
    provider: 'mobile_push',
    name: 'phone',
    url: `${ok.url}/mobile`,
    token: 'APP-TOKEN-SECRET',
    userKey: 'USER-KEY-SECRET',
  });
  const hook = await create({
    provider: 'webhook',
    name: 'hook',
    url: `${ok.url}/hook`,
    token: 'BEARER-SECRET',
    severities: ['warning', 'critical'],
  });
  const criticalOnly = await create({
    provider: 'webhook',
    name: 'pager',
    url: `${ok.url}/pager`,
    severities: ['critical'],
  });
  const failing = await create({ provider: 'webhook', name: 'broken', url: `${broken.url}/down` });
  for (const res of [embed, topic, mobile, hook, criticalOnly, failing])
    t.is(res.status, 201, JSON.stringify(res.body));
  t.like(mobile.body, { hasToken: true, hasUserKey: true });
  const list = await request(`${u}/api/notifications/channels`);
  for (const text of [mobile.text, hook.text, list.text])
    for (const secret of ['APP-TOKEN-SECRET', 'USER-KEY-SECRET', 'BEARER-SECRET']) t.false(text.includes(secret));
  t.is(list.body.channels.length, 6);

  const emitted = await request(`${u}/api/events`, {
    method: 'POST',
    json: {
      type: 'service.health.warning',
      severity: 'warning',
      title: 'Slow web',
      body: 'p99 high',
      app: 'web',
      metadata: { correlationKey: 'web:web:health' },
    },
  });
  t.is(emitted.status, 201, 'recording does not wait for channels');
  const got = await ok.waitFor(4);
  await broken.waitFor(1);
  const byPath = new Map(got.map((r) => [r.path, r]));
  const embedBody = JSON.parse(byPath.get('/embed')!.body);
  t.is(embedBody.embeds[0].color, 0xf1c40f);
  t.is(embedBody.embeds[0].title, '[WARNING] Slow web');
  t.like(byPath.get('/topic')!.headers, { priority: '4', title: '[WARNING] Slow web' });
  t.is(byPath.get('/topic')!.body, 'p99 high');
  const form = new URLSearchParams(byPath.get('/mobile')!.body);
  t.is(byPath.get('/mobile')!.headers['content-type'], 'application/x-www-form-urlencoded');
  t.like(Object.fromEntries(form), {
    token: 'APP-TOKEN-SECRET',
    user: 'USER-KEY-SECRET',
    priority: '1',
    title: '[WARNING] Slow web',
  });
  t.is(byPath.get('/hook')!.headers.authorization, 'Bearer BEARER-SECRET');
  t.is(JSON.parse(byPath.get('/hook')!.body).event.id, emitted.body.event.id);
  t.false(byPath.has('/pager'), 'the severity filter keeps warnings from a critical-only channel');

  const critical = await request(`${u}/api/events`, {
    method: 'POST',
    json: { type: 'deploy.failed', severity: 'critical', title: 'Deploy failed', app: 'web' },
  });
  t.is(critical.status, 201);
  const pager = await ok.waitFor(1, (r) => r.path === '/pager');
  t.is(JSON.parse(pager[0]!.body).event.severity, 'critical');
  const critMobile = await ok.waitFor(2, (r) => r.path === '/mobile');
  t.like(Object.fromEntries(new URLSearchParams(critMobile[1]!.body)), { priority: '2', retry: '60', expire: '3600' });

  const tested = await request(`${u}/api/notifications/channels/${hook.body.id}/test`, { method: 'POST' });
  t.like(tested.body, { delivered: true, status: 200 });
  const testedBroken = await request(`${u}/api/notifications/channels/${failing.body.id}/test`, { method: 'POST' });
  t.like(testedBroken.body, { delivered: false, status: 500 });
  t.is((await request(`${u}/api/notifications/channels/${failing.body.id}`, { method: 'DELETE' })).status, 204);
  t.is(
    (await request(`${u}/api/notifications/channels/${failing.body.id}`, { method: 'DELETE' })).body.error.code,
    'channel_not_found',
  );
  t.is((await request(`${u}/api/notifications/channels/ch_nope/test`, { method: 'POST' })).status, 404);
});

test('channel creation validates its body and refuses private targets unless configuration allows them', async (t) => {
  const plane = await startTestControlPlane(t, testConfig(t, quiet));
  const create = (json: unknown) => request(`${plane.url}/api/notifications/channels`, { method: 'POST', json });
  for (const body of [
    {},
    { provider: 'fax', name: 'n', url: 'https://x.example' },
    { provider: 'webhook', name: 'n' },
    { provider: 'webhook', name: 'n', url: 'https://x.example', severities: ['loud'] },
    { provider: 'mobile_push', name: 'n', url: 'https://x.example' },
    { provider: 'embed_webhook', name: 'n', url: 'https://x.example', token: 't' },
    { provider: 'webhook', name: 'n', url: 'ftp://x.example' },
  ]) {
    const res = await create(body);
    t.is(res.status, 400, JSON.stringify(body));
    t.truthy(res.body.error.code);
  }
  for (const url of [
    'http://127.0.0.1:9/hook',
    'http://localhost/hook',
    'http://169.254.169.254/',
    'http://10.0.0.2/',
  ]) {
    const res = await create({ provider: 'webhook', name: 'n', url });
    t.is(res.status, 400);
    t.is(res.body.error.code, 'target_not_allowed');
  }
  t.is((await create({ provider: 'webhook', name: 'n', url: 'https://hooks.example.com/x' })).status, 201);
});
