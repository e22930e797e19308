// tier: quick
import test from 'ava';
import { blockedAddressReason, checkTargetUrl, resolveTarget } from '../../platform/outbound/outbound-guard.js';
import { postTo } from '../../platform/notifications/outbound-request.js';
import { ValidationError } from '../../domain/errors.js';
import { startReceiver } from '../events/receiver.js';

/** Address, and why it is refused (undefined: public). */
const ADDRESSES: readonly (readonly [string, string | undefined])[] = [
  // IPv4
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['0.0.0.0', 'unspecified'],
  ['0.1.2.3', 'unspecified'],
  ['10.0.0.1', 'private'],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private'],
  ['192.168.1.1', 'private'],
  ['100.64.0.1', 'private (shared address space)'],
  ['100.127.255.255', 'private (shared address space)'],
  ['169.254.169.254', 'link-local'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['192.0.0.8', 'reserved'],
  ['198.18.0.1', 'reserved (benchmarking)'],
  ['198.19.255.255', 'reserved (benchmarking)'],
  ['240.0.0.1', 'reserved'],
  ['255.255.255.255', 'reserved'],
  ['8.8.8.8', undefined],
  ['1.1.1.1', undefined],
  ['93.184.216.34', undefined],
  ['172.32.0.1', undefined],
  ['100.128.0.1', undefined],
  ['192.0.1.1', undefined],
  ['198.20.0.1', undefined],
  ['169.255.0.1', undefined],
  // IPv6
  ['::1', 'loopback'],
  ['0:0:0:0:0:0:0:1', 'loopback'],
  ['[::1]', 'loopback'],
  ['::', 'unspecified'],
  ['fe80::1', 'link-local'],
  ['fe80::1%eth0', 'link-local'],
  ['febf::1', 'link-local'],
  ['fc00::1', 'private (unique local)'],
  ['fd12:3456::1', 'private (unique local)'],
  ['ff02::1', 'multicast'],
  ['64:ff9b::7f00:1', 'reserved'],
  ['64:ff9b::808:808', 'reserved'],
  ['2001:db8::1', 'reserved'],
  ['2606:4700::1111', undefined],
  ['2001:4860:4860::8888', undefined],
  ['fec0::1', undefined],
  // IPv4-mapped, IPv4-compatible and IPv4-translated IPv6
  ['::ffff:127.0.0.1', 'loopback'],
  ['::ffff:7f00:1', 'loopback'],
  ['0:0:0:0:0:ffff:7f00:1', 'loopback'],
  ['::FFFF:A9FE:A9FE', 'link-local'],
  ['::ffff:10.0.0.1', 'private'],
  ['::ffff:c0a8:101', 'private'],
  ['::ffff:8.8.8.8', undefined],
  ['::ffff:808:808', undefined],
  ['::7f00:1', 'reserved'],
  ['::127.0.0.1', 'reserved'],
  ['::ffff:0:7f00:1', 'reserved'],
  // Numeric forms are not IP literals: refused as such (a URL parser turns them into dotted quads first).
  ['2130706433', 'not an IP address'],
  ['0x7f.1', 'not an IP address'],
  ['017700000001', 'not an IP address'],
  ['127.1', 'not an IP address'],
  ['localhost', 'not an IP address'],
  ['', 'not an IP address'],
];

test('the outbound guard classifies every address of the table', (t) => {
  for (const [address, reason] of ADDRESSES) t.is(blockedAddressReason(address), reason, address);
});

test('the outbound guard refuses URLs naming a blocked host in numeric, bracketed and mapped forms before DNS', (t) => {
  const deny = { allowPrivate: false };
  for (const url of [
    'http://2130706433/',
    'http://0x7f.1/',
    'http://017700000001/',
    'http://127.1/',
    'http://0x7f000001/',
    'http://0177.0.0.1/',
    'http://[::ffff:127.0.0.1]/',
    'http://[::ffff:7f00:1]/',
    'http://[0:0:0:0:0:0:0:1]/',
    'http://[::1]:8080/',
    'https://[fd00::1]/',
    'http://169.254.169.254/latest/meta-data',
    'http://3232235777/',
    'http://192.0.0.170/',
    'http://198.18.0.1/',
    'http://[64:ff9b::a00:1]/',
    'http://[2001:db8::1]/',
    'http://localhost/',
    'http://api.localhost/',
  ]) {
    const error = t.throws(() => checkTargetUrl(url, deny), { instanceOf: ValidationError }, url);
    t.is(error?.code, 'target_not_allowed', url);
  }
  for (const url of [
    'http://8.8.8.8/',
    'http://134744072/',
    'https://[2606:4700::1111]/',
    'http://[::ffff:808:808]/',
    'https://hooks.example.com/x',
  ]) {
    t.notThrows(() => checkTargetUrl(url, deny), url);
  }
  for (const url of ['http://2130706433/', 'http://[::ffff:7f00:1]/'])
    t.notThrows(() => checkTargetUrl(url, { allowPrivate: true }), url);
});

test('the outbound guard refuses a name when any resolved address is blocked, in any form', async (t) => {
  const resolvesTo = (addresses: string[]) => ({ allowPrivate: false, resolve: async () => addresses });
  const url = new URL('https://hooks.example.test/');
  for (const addresses of [
    ['::ffff:7f00:1'],
    ['93.184.216.34', '::ffff:a9fe:a9fe'],
    ['2606:4700::1111', 'fe80::1'],
    ['198.18.0.9'],
    ['64:ff9b::808:808'],
  ]) {
    await t.throwsAsync(
      resolveTarget(url, resolvesTo(addresses)),
      { message: /resolves to .*, which is / },
      addresses.join(','),
    );
  }
  await t.throwsAsync(resolveTarget(url, resolvesTo([])), { message: /does not resolve/ });
  t.like(await resolveTarget(url, resolvesTo(['2606:4700::1111'])), { address: '2606:4700::1111', family: 6 });
  t.like(await resolveTarget(url, { allowPrivate: true, resolve: async () => ['127.0.0.1'] }), {
    address: '127.0.0.1',
    family: 4,
  });
});

test('an outbound POST never follows a redirect, so a redirect to a private address reaches nothing', async (t) => {
  const target = await startReceiver(t);
  const privateHost = await startReceiver(t);
  target.status = 302;
  target.responseHeaders = { location: `${privateHost.url}/internal` };
  const result = await postTo(
    new URL(`${target.url}/hook`),
    { headers: { 'content-type': 'application/json' }, body: '{}' },
    { allowPrivate: true },
  );
  t.like(result, { ok: false, status: 302, error: 'redirect 302 not followed' });
  t.is(target.received.length, 1);
  t.is(privateHost.received.length, 0);
});
