// tier: full
import http from 'node:http';
import os from 'node:os';
import test from 'ava';
import { freePort, hostRequest, startWithApps } from './wake-harness.js';

/** A local IPv4 address that is not loopback: a peer connecting from it is outside the trusted boundary. */
function nonLoopbackAddress(): string | undefined {
  return Object.values(os.networkInterfaces())
    .flat()
    .find((a) => a !== undefined && a.family === 'IPv4' && !a.internal)?.address;
}

test('the wake gateway forwards as a proxy should: hop-by-hop headers dropped both ways, repeated response headers kept, forwarded headers set, 502 when the upstream hangs up, aborted when the client leaves, HEAD answered', async (t) => {
  const port = await freePort();
  const { plane } = await startWithApps(t, [{ name: 'fwd', hostname: 'fwd.example.test', port, min: 1 }]);

  const seen = await hostRequest(`${plane.url}/headers?wakeTimeout=20s`, {
    host: 'fwd.example.test',
    headers: {
      connection: 'keep-alive, x-client-hop',
      'x-client-hop': 'secret',
      'proxy-authorization': 'Basic c2VjcmV0',
      te: 'trailers',
      'x-custom': 'kept',
    },
  });
  t.is(seen.status, 200, seen.text);
  const headers = seen.json().headers as Record<string, string>;
  t.is(headers['x-custom'], 'kept');
  for (const dropped of ['x-client-hop', 'proxy-authorization', 'te'])
    t.false(dropped in headers, `${dropped} reached the app`);
  t.is(headers.host, 'fwd.example.test');
  t.is(headers['x-forwarded-host'], 'fwd.example.test');
  t.is(headers['x-forwarded-proto'], 'http');
  t.is(headers['x-forwarded-port'], String(new URL(plane.url).port));
  t.is(headers['x-forwarded-for'], '127.0.0.1');

  const cookies = await hostRequest(`${plane.url}/cookies`, { host: 'fwd.example.test' });
  t.is(cookies.text, 'cookies');
  t.deepEqual(cookies.headers['set-cookie'], ['a=1', 'b=2']);
  t.is(cookies.headers['x-app'], 'yes');
  t.is(cookies.headers['x-app-hop'], undefined, 'a header the upstream Connection header names is hop-by-hop');
  t.is(cookies.headers['x-svc-wake-action'], 'ready');

  // An upstream that hangs up without answering: 502 with the error body, and the gateway goes on.
  const hangup = await hostRequest(`${plane.url}/hangup`, { host: 'fwd.example.test' });
  t.is(hangup.status, 502);
  t.is(hangup.json().error.code, 'upstream_unavailable');
  t.is(hangup.headers['x-svc-wake-gateway'], 'true');

  // A client that leaves mid-stream: the upstream request is aborted too (no connection left open).
  await new Promise<void>((resolve, reject) => {
    const req = http.request(`${plane.url}/stream`, { agent: false, headers: { host: 'fwd.example.test' } }, (res) => {
      res.once('data', () => {
        req.destroy();
        resolve();
      });
    });
    req.on('error', (error) => (req.destroyed ? undefined : reject(error)));
    req.end();
  });
  // The app's close happens on its own event loop: ask it (each ask is a round trip, no timer) until it tells, for 2 s at most.
  let closed = '';
  for (const deadline = Date.now() + 2_000; closed !== '1' && Date.now() < deadline;)
    closed = (await hostRequest(`${plane.url}/streams-closed`, { host: 'fwd.example.test' })).text;
  t.is(closed, '1');

  const head = await hostRequest(`${plane.url}/headers`, { host: 'fwd.example.test', method: 'HEAD' });
  t.is(head.status, 200);
  t.is(head.text, '');
  t.is(head.headers['x-svc-wake-gateway'], 'true');
});

const external = nonLoopbackAddress();
// Needs a network interface besides loopback (every peer on loopback is trusted by design).
(external === undefined ? test.skip : test)(
  'a peer outside the loopback boundary cannot forge edge identity or forwarded headers',
  async (t) => {
    const port = await freePort();
    const { plane } = await startWithApps(t, [{ name: 'edge', hostname: 'edge.example.test', port, min: 1 }], {
      SVC_HOST: '0.0.0.0',
    });
    const url = `http://${external!}:${new URL(plane.url).port}`;

    const forged = {
      'edge-access-jwt-assertion': 'forged',
      'cf-access-authenticated-user-email': 'root@example.test',
      'x-real-ip': '6.6.6.6',
      'x-forwarded-for': '6.6.6.6',
      'x-forwarded-host': 'evil.example.test',
      forwarded: 'for=6.6.6.6',
    };
    const fromOutside = await hostRequest(`${url}/who?wakeTimeout=20s`, { host: 'edge.example.test', headers: forged });
    t.is(fromOutside.status, 200, fromOutside.text);
    const outside = fromOutside.json().headers as Record<string, string>;
    for (const name of ['edge-access-jwt-assertion', 'cf-access-authenticated-user-email', 'x-real-ip', 'forwarded'])
      t.false(name in outside, `${name} reached the app`);
    t.is(outside['x-forwarded-for'], external);
    t.is(outside['x-forwarded-host'], 'edge.example.test');

    // The same headers from a loopback peer (the local tunnel daemon) are kept.
    const fromLoopback = (
      await hostRequest(`http://127.0.0.1:${new URL(plane.url).port}/who`, {
        host: 'edge.example.test',
        headers: forged,
      })
    ).json().headers as Record<string, string>;
    t.is(fromLoopback['edge-access-jwt-assertion'], 'forged');
    t.is(fromLoopback['x-forwarded-for'], '6.6.6.6,127.0.0.1');
  },
);
