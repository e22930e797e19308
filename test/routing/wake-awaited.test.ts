// tier: full
import test from 'ava';
import { startPlaneWithApps } from '../helpers/plane-with-apps.js';
import { APP_SERVER, freePort, hostRequest, wakeSpec } from './wake-harness.js';

test("a cold wake marks its service awaited from the request until the instance passes, so the starting check looks for the port (ADR 0163), and its request is forwarded in the registry's turn (ADR 0201)", async (t) => {
  const port = await freePort();
  const app = { name: 'sleepy', hostname: 'sleepy.example.test', port, min: 0 };
  const { plane } = await startPlaneWithApps(t, {
    server: APP_SERVER,
    apps: [{ name: app.name, spec: wakeSpec(app) }],
  });
  const registry = plane.reconcilers.registry;
  t.false(registry.isAwaited('sleepy-web'), 'nothing waits before the first request');
  // What the registry says about the service when the new allocation's instance is registered.
  const awaitedAtRegistration = new Promise<boolean>((resolve) => {
    const off = registry.watch((change) => {
      if (change.service === 'sleepy-web' && change.kind === 'registered') {
        off();
        resolve(registry.isAwaited('sleepy-web'));
      }
    });
  });
  // How many requests were forwarded by the first reaction queued by a watcher of the passing change
  // that runs before the wake's: the waiting request goes in the registry's turn (ADR 0201).
  const proxiedBefore = plane.routing.gateway.stats.proxied;
  const forwardedInTurn = new Promise<number>((resolve) => {
    const off = registry.watch((change) => {
      if (change.service === 'sleepy-web' && change.status === 'passing') {
        off();
        queueMicrotask(() => resolve(plane.routing.gateway.stats.proxied - proxiedBefore));
      }
    });
  });
  const woken = await hostRequest(`${plane.url}/?wakeTimeout=20s`, { host: app.hostname });
  t.is(woken.status, 200, woken.text);
  t.is(woken.headers['x-svc-wake-action'], 'scaled');
  t.true(await awaitedAtRegistration, 'the wake was awaited while its instance started');
  t.false(registry.isAwaited('sleepy-web'), 'released once the instance passed');
  t.is(await forwardedInTurn, 1, 'forwarded before the reactions the passing change queued');
});
