// tier: quick
import test from 'ava';
import { ValidationError } from '../../domain/errors.js';
import {
  accessPatterns,
  aggregateLogpush,
  desiredIngress,
  edgeSyncWindows,
  hostnameMatches,
  hostOfHeader,
  isLocalHostname,
  logpushRecords,
  logTimestamp,
  normalizeHostname,
  publicProcess,
  serviceAddress,
  statusBucket,
  toggleHostname,
  wakeTimeoutMs,
  type AccessBucket,
} from '../../domain/routing/index.js';
import { specOf, webApp } from './routing-fixtures.js';

test('desiredIngress routes endpoints of deployable, routable apps sorted by hostname', (t) => {
  const rules = desiredIngress(
    [
      { spec: webApp('b', ['z.test', 'y.test'], { port: 9001 }), routable: true },
      { spec: webApp('a', ['x.test']), routable: true },
    ],
    new Set(),
  );
  t.deepEqual(
    rules.map((r) => [r.hostname, r.service, r.app, r.process, r.viaGateway]),
    [
      ['x.test', 'http://127.0.0.1:8080', 'a', 'web', false],
      ['y.test', 'http://127.0.0.1:9001', 'b', 'web', false],
      ['z.test', 'http://127.0.0.1:9001', 'b', 'web', false],
    ],
  );
});

test('desiredIngress leaves out apps with deploy false, apps that are not routable and hostnames toggled off', (t) => {
  const rules = desiredIngress(
    [
      { spec: webApp('off', ['off.test'], { deploy: false }), routable: true },
      { spec: webApp('sick', ['sick.test']), routable: false },
      { spec: webApp('ok', ['ok.test', 'muted.test']), routable: true },
    ],
    new Set(['muted.test']),
  );
  t.deepEqual(
    rules.map((r) => r.hostname),
    ['ok.test'],
  );
});

test('desiredIngress gives a hostname declared twice to the first app by name', (t) => {
  const rules = desiredIngress(
    [
      { spec: webApp('b', ['same.test'], { port: 2 }), routable: true },
      { spec: webApp('a', ['Same.Test'], { port: 1 }), routable: true },
    ],
    new Set(),
  );
  t.deepEqual(
    rules.map((r) => [r.hostname, r.app]),
    [['same.test', 'a']],
  );
});

test('desiredIngress routes gateway-managed processes (scaling.min 0) to the wake gateway when its address is known', (t) => {
  const spec = webApp('lazy', ['lazy.test'], { min: 0 });
  t.deepEqual(
    desiredIngress([{ spec, routable: true }], new Set(), { gatewayUrl: 'http://127.0.0.1:8800' }).map((r) => [
      r.service,
      r.viaGateway,
    ]),
    [['http://127.0.0.1:8800', true]],
  );
  t.deepEqual(
    desiredIngress([{ spec, routable: true }], new Set()).map((r) => [r.service, r.viaGateway]),
    [['http://127.0.0.1:8080', false]],
  );
});

test('serviceAddress uses loopback on host networking and the node IP with the static port on bridge networking', (t) => {
  const spec = specOf(
    'name: p\ndeploy: true\nprocesses:\n  web:\n    port: 8080\n    hostPort: 18080\nendpoints:\n  - url: p.test\n',
  );
  t.is(serviceAddress(spec, 'web'), 'http://127.0.0.1:18080');
  t.is(serviceAddress(spec, 'web', { networking: 'bridge', nodeIp: '10.1.2.3' }), 'http://10.1.2.3:18080');
  t.is(serviceAddress(spec, 'nope'), undefined);
});

test('publicProcess picks web, else the first process with a port by name', (t) => {
  t.is(publicProcess(specOf('name: a\nprocesses:\n  web:\n    port: 1\n  api:\n    port: 2\n')), 'web');
  t.is(publicProcess(specOf('name: a\nprocesses:\n  zeta:\n    port: 1\n  api:\n    port: 2\n')), 'api');
  t.is(publicProcess(specOf('name: a\nprocesses:\n  worker:\n    command: run\n')), undefined);
});

test('hostnames are normalized, Host headers lose their port, wildcards match subdomains only', (t) => {
  t.is(normalizeHostname('App.Example.TEST.'), 'app.example.test');
  t.is(normalizeHostname('http://x'), undefined);
  t.is(hostOfHeader('App.example.test:8443'), 'app.example.test');
  t.is(hostOfHeader('[::1]:8800'), undefined);
  t.is(hostOfHeader(undefined), undefined);
  t.true(hostnameMatches('*.example.test', 'a.b.example.test'));
  t.false(hostnameMatches('*.example.test', 'example.test'));
  t.true(isLocalHostname('127.0.0.1'));
  t.true(isLocalHostname('localhost'));
  t.false(isLocalHostname('app.test'));
});

test('toggleHostname accepts a declared endpoint and refuses malformed or undeclared hostnames', (t) => {
  const spec = webApp('a', ['a.test']);
  t.is(toggleHostname(spec, 'A.test'), 'a.test');
  t.throws(() => toggleHostname(spec, 'not a host'), { instanceOf: ValidationError, message: /is not a hostname/ });
  const error = t.throws(() => toggleHostname(spec, 'b.test'), {
    instanceOf: ValidationError,
    message: /"b.test" is not an endpoint of app "a" \(declared: a.test\)/,
  });
  t.is(error.code, 'endpoint_not_declared');
});

test('wakeTimeoutMs defaults to 30s, accepts durations up to 2m and refuses the rest', (t) => {
  t.is(wakeTimeoutMs(undefined), 30_000);
  t.is(wakeTimeoutMs('60s'), 60_000);
  t.is(wakeTimeoutMs('2m'), 120_000);
  t.is(wakeTimeoutMs('1500ms'), 1500);
  t.throws(() => wakeTimeoutMs('3m'), { instanceOf: ValidationError, message: /at most 2m/ });
  t.throws(() => wakeTimeoutMs('0s'), { instanceOf: ValidationError, message: /more than 0/ });
  t.throws(() => wakeTimeoutMs('soon'), { instanceOf: ValidationError, message: /not a duration/ });
});

test('edgeSyncWindows gives day-sized windows ending at the current hour, clamped to the ceiling', (t) => {
  const now = new Date('2026-03-10T12:34:56Z');
  t.deepEqual(edgeSyncWindows(now, 36 * 3_600_000, 7 * 86_400_000), [
    { start: '2026-03-09T00:00:00.000Z', end: '2026-03-10T00:00:00.000Z' },
    { start: '2026-03-10T00:00:00.000Z', end: '2026-03-10T12:00:00.000Z' },
  ]);
  t.is(edgeSyncWindows(now, 30 * 86_400_000, 2 * 86_400_000).length, 2);
  t.deepEqual(edgeSyncWindows(now, 0, 86_400_000), []);
});

test('statusBucket groups statuses by hundreds and logTimestamp reads RFC 3339 and Unix seconds, milliseconds and nanoseconds', (t) => {
  t.deepEqual(
    [statusBucket(204), statusBucket(404), statusBucket(503), statusBucket(42)],
    ['2xx', '4xx', '5xx', 'other'],
  );
  const iso = '2026-03-10T12:00:00.000Z';
  t.is(logTimestamp(iso)?.toISOString(), iso);
  t.is(logTimestamp(1773144000)?.toISOString(), iso);
  t.is(logTimestamp(1773144000000)?.toISOString(), iso);
  t.is(logTimestamp('1773144000000000000')?.toISOString(), iso);
  t.is(logTimestamp('yesterday'), undefined);
});

test('aggregateLogpush keeps only counts for mapped hostnames and drops unusable records', (t) => {
  const records = logpushRecords(
    [
      '{"ClientRequestHost":"a.test","EdgeResponseStatus":200,"EdgeStartTimestamp":"2026-03-10T12:10:00Z","ClientIP":"1.2.3.4","RequestHeaders":{"authorization":"secret"}}',
      '{"ClientRequestHost":"a.test","EdgeResponseStatus":201,"EdgeStartTimestamp":"2026-03-10T12:50:00Z"}',
      '{"ClientRequestHost":"x.sub.test","EdgeResponseStatus":502,"EdgeStartTimestamp":1773144000}',
      '{"ClientRequestHost":"unmapped.test","EdgeResponseStatus":200,"EdgeStartTimestamp":1773144000}',
      'not json',
    ].join('\n'),
  );
  const aggregate = aggregateLogpush(records, ['a.test', '*.sub.test']);
  t.is(aggregate.accepted, 3);
  t.is(aggregate.dropped, 2);
  t.deepEqual(aggregate.counts.map((c) => [c.hostname, c.hour, c.statusBucket, c.count]).sort(), [
    ['a.test', '2026-03-10T12:00:00.000Z', '2xx', 2],
    ['x.sub.test', '2026-03-10T12:00:00.000Z', '5xx', 1],
  ]);
  t.false(JSON.stringify(aggregate).includes('secret'));
  t.false(JSON.stringify(aggregate).includes('1.2.3.4'));
});

test('accessPatterns counts an hour once when gateway and edge saw the same requests, with status buckets from a detailed source', (t) => {
  const hour = '2026-03-10T12:00:00.000Z';
  const buckets: AccessBucket[] = [
    { hostname: 'a.test', hour, source: 'gateway', statusBucket: '2xx', count: 8 },
    { hostname: 'a.test', hour, source: 'gateway', statusBucket: '5xx', count: 2 },
    { hostname: 'a.test', hour, source: 'edge-graphql', statusBucket: 'total', count: 12 },
    { hostname: 'b.test', hour, source: 'logpush', statusBucket: '4xx', count: 1 },
  ];
  const patterns = accessPatterns(buckets);
  t.deepEqual(
    patterns.map((p) => [p.hostname, p.total, p.statusBuckets]),
    [
      ['a.test', 12, { '2xx': 8, '5xx': 2 }],
      ['b.test', 1, { '4xx': 1 }],
    ],
  );
  t.deepEqual(patterns[0]!.sources, { gateway: 10, 'edge-graphql': 12 });
});
