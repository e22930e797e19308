// tier: quick
import test from 'ava';
import {
  instanceStatus,
  metricsServiceName,
  processServiceName,
  waitForHealthyInstances,
  worstStatus,
  type HealthChange,
} from '../../../domain/registry/index.js';
import { LocalRegistry } from '../../../platform/local-registry/index.js';

const instance = (id: string) => ({
  id,
  service: 'demo-web',
  app: 'demo',
  process: 'web',
  allocationId: id,
  address: '127.0.0.1',
  port: 1234,
  tags: [],
  checks: [
    { id: `${id}:http`, name: 'HTTP GET /healthz', status: 'critical' as const, output: 'no check has run yet' },
  ],
});

test('service names follow <app>-<process> and the -metrics companion', (t) => {
  t.is(processServiceName('shop', 'web'), 'shop-web');
  t.is(metricsServiceName('shop', 'web'), 'shop-web-metrics');
});

test('worstStatus orders passing, warning and critical', (t) => {
  t.is(worstStatus([]), 'passing');
  t.is(worstStatus(['passing', 'warning']), 'warning');
  t.is(worstStatus(['warning', 'critical', 'passing']), 'critical');
});

test('the local registry notifies watchers of registration, check changes and deregistration', async (t) => {
  const registry = new LocalRegistry();
  const changes: HealthChange[] = [];
  const unsubscribe = registry.watch((c) => changes.push(c));
  registry.register(instance('a'));
  registry.updateCheck({
    instanceId: 'a',
    checkId: 'a:http',
    status: 'passing',
    output: '200 OK',
    checkedAt: '2026-01-01T00:00:00.000Z',
  });
  registry.updateCheck({
    instanceId: 'a',
    checkId: 'a:http',
    status: 'passing',
    output: '200 OK',
    checkedAt: '2026-01-01T00:00:01.000Z',
  });
  registry.updateCheck({
    instanceId: 'a',
    checkId: 'a:http',
    status: 'warning',
    output: '429',
    checkedAt: '2026-01-01T00:00:02.000Z',
  });
  const [current] = await registry.instances('demo-web');
  t.is(instanceStatus(current!), 'warning');
  t.is(current!.checks[0]!.lastCheckedAt, '2026-01-01T00:00:02.000Z');
  registry.deregister('a');
  unsubscribe();
  registry.register(instance('b'));
  t.deepEqual(
    changes.map((c) => [c.kind, c.previousStatus ?? null, c.status ?? null]),
    [
      ['registered', null, 'critical'],
      ['updated', 'critical', 'passing'],
      ['updated', 'passing', 'warning'],
      ['deregistered', 'warning', null],
    ],
  );
  t.deepEqual(await registry.listServices(), ['demo-web']);
});

test('waitForHealthyInstances resolves on the change that makes enough instances pass and times out otherwise', async (t) => {
  const registry = new LocalRegistry();
  registry.register(instance('a'));
  const waiting = waitForHealthyInstances(registry, 'demo-web', { timeoutMs: 5000 });
  registry.updateCheck({
    instanceId: 'a',
    checkId: 'a:http',
    status: 'passing',
    output: 'ok',
    checkedAt: new Date().toISOString(),
  });
  t.is((await waiting).length, 1);
  await t.throwsAsync(waitForHealthyInstances(registry, 'demo-web', { count: 2, timeoutMs: 50 }), {
    message: /did not reach 2 passing instance\(s\) within 50ms/,
  });
});
