// tier: full
import fs from 'node:fs';
import http from 'node:http';
import test from 'ava';
import YAML from 'yaml';
import type { ControlPlane } from '../../wiring/control-plane.js';
import { waitForReconciled } from '../helpers/wait-for.js';
import { request } from '../helpers/servers.js';
import { freePort, hostRequest, startWithApps, waitForState } from './wake-harness.js';

const controllers = (plane: ControlPlane) => [plane.reconcilers.appController, plane.routing.controller];

async function wakeTarget(plane: ControlPlane, app: string): Promise<any> {
  const view = await request(`${plane.url}/api/operator/wake-targets`);
  return view.body.targets.find((target: { app: string }) => target.app === app);
}

async function waitForReadiness(plane: ControlPlane, app: string, readiness: string, timeoutMs = 15_000): Promise<any> {
  return waitForState(
    plane,
    async () => {
      const target = await wakeTarget(plane, app);
      return target?.readiness === readiness ? target : undefined;
    },
    `${app} ${readiness}`,
    timeoutMs,
  );
}

test('the wake gateway scales a process up from zero, proxies, shares one scale-up among 50 concurrent requests, scales down when idle, and times out with 504 for an app that never gets ready', async (t) => {
  const [lazyPort, stuckPort] = [await freePort(), await freePort()];
  const { plane, config } = await startWithApps(
    t,
    [
      { name: 'lazy', hostname: 'lazy.example.test', port: lazyPort, min: 0 },
      { name: 'stuck', hostname: 'stuck.example.test', port: stuckPort, min: 0, neverReady: true },
    ],
    { SVC_WAKE_IDLE_TIMEOUT: '1h' },
  );

  // Deployed with zero allocations, routed through the gateway in the tunnel config.
  const zero = await waitForReadiness(plane, 'lazy', 'scaled_to_zero');
  t.is(zero.desiredCount, 0);
  const tunnel = await waitForReconciled(
    controllers(plane),
    async () => {
      const ingress = (await request(`${plane.url}/api/tunnel/ingress`)).body;
      return ingress.hostnames.includes('lazy.example.test') && ingress.hostnames.includes('stuck.example.test')
        ? ingress
        : undefined;
    },
    { what: 'both hostnames routed' },
  );
  t.deepEqual(
    tunnel.rules.find((r: { hostname: string }) => r.hostname === 'lazy.example.test'),
    { hostname: 'lazy.example.test', service: plane.url, app: 'lazy', process: 'web', viaGateway: true },
  );
  const file = YAML.parse(fs.readFileSync(config.tunnelConfigFile, 'utf8'));
  t.deepEqual(file.ingress.at(-1), { service: 'http_status:404' });
  t.deepEqual(
    file.ingress
      .slice(0, 2)
      .map((r: { hostname: string }) => r.hostname)
      .sort(),
    ['lazy.example.test', 'stuck.example.test'],
  );

  // A first request (host-based) wakes the process: scaled, path and Host preserved, wakeTimeout removed.
  const first = await hostRequest(`${plane.url}/hello/there?x=1&wakeTimeout=20s`, {
    host: 'lazy.example.test',
    headers: { 'edge-access-jwt-assertion': 'forged', 'x-forwarded-for': '6.6.6.6' },
  });
  t.is(first.status, 200, first.text);
  t.is(first.headers['x-svc-wake-gateway'], 'true');
  t.is(first.headers['x-svc-wake-action'], 'scaled');
  const seen = first.json();
  t.is(seen.url, '/hello/there?x=1');
  t.is(seen.host, 'lazy.example.test');
  // The test client is a loopback peer (the trusted boundary): its forwarded headers are kept and extended.
  t.is(seen.headers['x-forwarded-for'], '6.6.6.6,127.0.0.1');
  t.is(plane.routing.gateway.stats.scaleUps, 1);

  // Warm: the next request finds a passing instance.
  const warm = await hostRequest(`${plane.url}/again`, { host: 'lazy.example.test' });
  t.is(warm.headers['x-svc-wake-action'], 'ready');
  t.is(warm.json().pid, seen.pid);

  // The explicit form strips the prefix, streams a POST body both ways.
  const payload = Buffer.alloc(3 * 1024 * 1024, 7);
  const echoed = await hostRequest(`${plane.url}/api/wake-gateway/lazy.example.test/upload`, {
    method: 'POST',
    body: payload,
  });
  t.is(echoed.status, 200);
  t.is(echoed.text.length, payload.length);

  // Idle: a sweep an hour later scales it back to zero (the app controller keeps the count at 0).
  t.deepEqual(await plane.routing.idle.sweep(Date.now() + 2 * 3_600_000), ['lazy/web']);
  // Readiness says scaled_to_zero as soon as the desired count is 0; the draining instance leaves the registry after.
  const drained = await waitForState(
    plane,
    async () => {
      const target = await wakeTarget(plane, 'lazy');
      return target?.readiness === 'scaled_to_zero' && target.instances.total === 0 ? target : undefined;
    },
    'lazy scaled to zero with no instance left',
  );
  t.is(drained.instances.total, 0);

  // 50 concurrent first requests: exactly one scale-up, all succeed.
  const before = plane.routing.gateway.stats.scaleUps;
  const answers = await Promise.all(
    Array.from({ length: 50 }, (_, i) => hostRequest(`${plane.url}/burst/${i}`, { host: 'lazy.example.test' })),
  );
  t.deepEqual([...new Set(answers.map((a) => a.status))], [200]);
  t.is(plane.routing.gateway.stats.scaleUps - before, 1);
  t.is(new Set(answers.map((a) => a.json().pid)).size, 1);
  // Requests that waited for the wake say `scaled`; on a loaded host a few may arrive after it finished (`ready`).
  const actions = answers.map((a) => a.headers['x-svc-wake-action']);
  t.true(actions.includes('scaled'));
  t.true(actions.every((action) => action === 'scaled' || action === 'ready'));
  // One allocation is wanted; the one scaled in before may still be draining (withdrawn, then drained).
  const allocations = (await (await plane.reconcilers.targets.get()).listAllocations({ app: 'lazy' })).filter(
    (a) => a.status === 'running' && a.desiredStatus === 'run',
  );
  t.is(allocations.length, 1);

  // A WebSocket-style upgrade is proxied and the raw stream flows both ways.
  const upgraded = await new Promise<string>((resolve, reject) => {
    // `/ws` is also the event stream's path on the API: a public Host must reach the app instead.
    const req = http.request(`${plane.url}/ws`, {
      agent: false,
      headers: { host: 'lazy.example.test', connection: 'Upgrade', upgrade: 'websocket' },
    });
    req.on('upgrade', (res, socket) => {
      socket.write('ping');
      socket.once('data', (data: Buffer) => {
        resolve(`${res.statusCode} ${data.toString()}`);
        socket.destroy();
      });
    });
    req.on('error', reject);
    req.end();
  });
  t.is(upgraded, '101 ping');

  // An app that never gets ready: 504 with Retry-After, within the requested timeout.
  const started = Date.now();
  const stuck = await hostRequest(`${plane.url}/?wakeTimeout=1500ms`, { host: 'stuck.example.test' });
  const elapsed = Date.now() - started;
  t.is(stuck.status, 504, stuck.text);
  t.truthy(stuck.headers['retry-after']);
  t.is(stuck.json().error.code, 'wake_timeout');
  t.true(elapsed >= 1400 && elapsed < 3000, `answered after ${elapsed} ms`);
});
