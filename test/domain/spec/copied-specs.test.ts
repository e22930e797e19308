// tier: quick
/**
 * Specs as people copy them from other platforms' docs: endpoint URLs with a scheme (and a port),
 * a schedule's time zone, and the fields we rightly refuse (ADR 0016).
 */
import test from 'ava';
import {
  FindingSeverity,
  SpecRule,
  endpointHostname,
  parseEndpointUrl,
  validateInfraspec,
} from '../../../domain/spec/index.js';
import { translateApp } from '../../../domain/translate/index.js';

const withEndpoint = (url: string) => `name: demo\nprocesses:\n  web:\n    port: 8080\nendpoints:\n  - url: ${url}\n`;

test('validateInfraspec accepts an https endpoint URL, routes its hostname and warns at its line and column', (t) => {
  const result = validateInfraspec(withEndpoint('https://my-app.example.com'), { fileName: 'infraspec.yaml' });
  t.true(result.valid);
  t.deepEqual(result.spec?.endpoints, [{ url: 'my-app.example.com' }]);
  t.deepEqual(
    result.findings.map((f) => [f.rule, f.severity, f.path, f.line, f.column]),
    [[SpecRule.endpointUrl, FindingSeverity.warning, 'endpoints[0].url', 6, 10]],
  );
  t.is(
    result.findings[0]?.message,
    'endpoints[0].url: "https://my-app.example.com" is a URL; it is routed as the hostname my-app.example.com (the scheme https is dropped); write url: my-app.example.com (infraspec.yaml, line 6, column 10)',
  );
});

test('validateInfraspec accepts endpoint URLs with a port and drops the port with the scheme', (t) => {
  for (const [url, hostname, port] of [
    ['http://127.0.0.1:7701', '127.0.0.1', 7701],
    ['https://trove.example.com:4173', 'trove.example.com', 4173],
    ['HTTPS://Shop.Example.com/', 'shop.example.com', undefined],
  ] as const) {
    const result = validateInfraspec(withEndpoint(url));
    t.true(result.valid, url);
    t.is(result.spec?.endpoints[0]?.url, hostname, url);
    const warning = result.findings.find((f) => f.rule === SpecRule.endpointUrl);
    t.is(warning?.severity, FindingSeverity.warning, url);
    if (port !== undefined) t.regex(warning!.message, new RegExp(`the port ${port} are dropped`), url);
  }
});

test('validateInfraspec still refuses endpoint URLs with a path, another scheme, a bare port or an impossible port', (t) => {
  for (const url of [
    'https://my-app.example.com/app',
    'ftp://my-app.example.com',
    'my-app.example.com:8080',
    'https://',
    'https://my-app.example.com?x=1',
  ]) {
    const result = validateInfraspec(withEndpoint(JSON.stringify(url)));
    t.false(result.valid, url);
    t.regex(
      result.findings[0]!.message,
      /must be a hostname such as app\.example\.com, or an http\(s\) URL of one without a path/,
      url,
    );
  }
  const port = validateInfraspec(withEndpoint('https://my-app.example.com:70000'));
  t.false(port.valid);
  t.deepEqual(
    port.findings.map((f) => [f.rule, f.severity]),
    [[SpecRule.endpointUrl, FindingSeverity.error]],
  );
  t.regex(port.findings[0]!.message, /port 70000, which is not a port number/);
});

test('validateInfraspec leaves a bare hostname endpoint as it is, without a finding', (t) => {
  const result = validateInfraspec(withEndpoint('shop.example.com'));
  t.true(result.valid);
  t.deepEqual(result.findings, []);
  t.deepEqual(result.spec?.endpoints, [{ url: 'shop.example.com' }]);
});

test('parseEndpointUrl reads the scheme, hostname and port; endpointHostname leaves a hostname alone', (t) => {
  t.deepEqual(parseEndpointUrl('https://a.example.com:4173'), {
    scheme: 'https',
    hostname: 'a.example.com',
    port: 4173,
  });
  t.deepEqual(parseEndpointUrl('http://*.example.com'), { scheme: 'http', hostname: '*.example.com' });
  t.is(parseEndpointUrl('a.example.com'), undefined);
  t.is(endpointHostname('a.example.com'), 'a.example.com');
  t.is(endpointHostname('https://a.example.com/'), 'a.example.com');
});

const scheduled = (timezone: string, schedule = '"0 3 * * *"') =>
  `name: demo\nprocesses:\n  cleanup:\n    command: ./cleanup\n    schedule: ${schedule}\n    timezone: ${timezone}\n`;

test('validateInfraspec accepts a schedule time zone, spells it canonically, and the periodic job carries it', (t) => {
  const result = validateInfraspec(scheduled('europe/paris'));
  t.true(result.valid, result.findings.map((f) => f.message).join('\n'));
  t.deepEqual(result.findings, []);
  t.is(result.spec?.processes.cleanup?.timezone, 'Europe/Paris');
  const translation = translateApp(result.spec!, {
    release: { commit: 'c0ffee0000000000000000000000000000000000', workdir: '/srv/demo', command: 'true', env: {} },
  });
  const job = translation.jobs.find((candidate) => candidate.id === 'demo-cleanup');
  t.deepEqual(job?.periodic, { cron: '0 3 * * *', timeZone: 'Europe/Paris' });
});

test('validateInfraspec refuses an unknown time zone at its position and warns about a time zone without a schedule', (t) => {
  const unknown = validateInfraspec(scheduled('Mars/Olympus_Mons'));
  t.false(unknown.valid);
  t.deepEqual(
    unknown.findings.map((f) => [f.rule, f.severity, f.path, f.line, f.column]),
    [[SpecRule.scheduleTimeZone, FindingSeverity.error, 'processes.cleanup.timezone', 6, 15]],
  );
  t.regex(unknown.findings[0]!.message, /"Mars\/Olympus_Mons" is not an IANA time zone known to this host/);
  const idle = validateInfraspec('name: demo\nprocesses:\n  worker:\n    command: ./work\n    timezone: UTC\n');
  t.true(idle.valid);
  t.deepEqual(
    idle.findings.map((f) => [f.rule, f.severity]),
    [[SpecRule.scheduleTimeZone, FindingSeverity.warning]],
  );
});

test('validateInfraspec still refuses infrastructure.kv and objectStorage.bucket, with the hint', (t) => {
  const result = validateInfraspec(
    'name: demo\nprocesses:\n  web:\n    port: 8080\ninfrastructure:\n  kv:\n    namespace: demo\n  objectStorage:\n    bucket: demo-media\n',
  );
  t.false(result.valid);
  t.deepEqual(
    result.findings.map((f) => f.path),
    ['infrastructure.kv', 'infrastructure.objectStorage.bucket'],
  );
  t.regex(
    result.findings[0]!.message,
    /is not a field of Infrastructure; known fields: postgres, redis, kafka, nats, objectStorage/,
  );
  t.regex(result.findings[1]!.message, /did you mean "buckets"\?/);
});
