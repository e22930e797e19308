// tier: quick
import test from 'ava';
import fc from 'fast-check';
import {
  CATCH_ALL_SERVICE,
  catchAllIsLast,
  desiredIngress,
  planTunnelConfig,
  type IngressRule,
  type TunnelConfig,
} from '../../domain/routing/index.js';
import { webApp } from './routing-fixtures.js';

const identity = { tunnel: 'svc', credentialsFile: '/creds.json' };
const rule = (hostname: string, port = 8080): IngressRule => ({ hostname, service: `http://127.0.0.1:${port}` });
const hostnames = (config: TunnelConfig) =>
  config.ingress.filter((r) => r.hostname !== undefined).map((r) => r.hostname);

test('planTunnelConfig writes a new file with the rules and the catch-all last', (t) => {
  const plan = planTunnelConfig(undefined, [rule('a.test'), rule('b.test')], identity);
  t.true(plan.changed);
  t.deepEqual(plan.added, ['a.test', 'b.test']);
  t.deepEqual(plan.config.ingress, [rule('a.test'), rule('b.test'), { service: CATCH_ALL_SERVICE }]);
  t.is(plan.config.tunnel, 'svc');
  t.is(plan.config['credentials-file'], '/creds.json');
});

test('planTunnelConfig reports no change when the observed file already says the same', (t) => {
  const first = planTunnelConfig(undefined, [rule('a.test')], identity);
  const again = planTunnelConfig(first.config, [rule('a.test')], identity);
  t.false(again.changed);
  t.deepEqual([again.added, again.removed, again.updated], [[], [], []]);
});

test('planTunnelConfig inserts new rules before the catch-all and keeps the order of existing ones', (t) => {
  const observed: TunnelConfig = {
    ...identity,
    tunnel: 'svc',
    'credentials-file': '/creds.json',
    ingress: [rule('z.test'), rule('m.test'), { service: CATCH_ALL_SERVICE }],
  };
  const plan = planTunnelConfig(observed, [rule('a.test'), rule('m.test'), rule('z.test')], identity);
  t.deepEqual(hostnames(plan.config), ['z.test', 'm.test', 'a.test']);
  t.true(catchAllIsLast(plan.config));
});

test('planTunnelConfig removes rules no longer desired and updates changed services', (t) => {
  const observed: TunnelConfig = {
    tunnel: 'svc',
    'credentials-file': '/creds.json',
    ingress: [rule('a.test'), rule('b.test', 9000), { service: CATCH_ALL_SERVICE }],
  };
  const plan = planTunnelConfig(observed, [rule('b.test', 9001)], identity);
  t.deepEqual(plan.removed, ['a.test']);
  t.deepEqual(plan.updated, ['b.test']);
  t.deepEqual(plan.config.ingress, [rule('b.test', 9001), { service: CATCH_ALL_SERVICE }]);
});

test('planTunnelConfig repairs hand-edited drift: a catch-all in the middle, duplicates, a wrong tunnel name, extra fields', (t) => {
  const observed = {
    tunnel: 'hand-edited',
    'credentials-file': '/creds.json',
    'no-autoupdate': true,
    ingress: [
      { service: 'http_status:503' },
      rule('a.test'),
      rule('a.test', 1),
      { service: CATCH_ALL_SERVICE },
      rule('b.test'),
    ],
  } as unknown as TunnelConfig;
  const plan = planTunnelConfig(observed, [rule('a.test'), rule('b.test')], identity);
  t.true(plan.changed);
  t.true(plan.repaired);
  t.deepEqual(plan.config, {
    tunnel: 'svc',
    'credentials-file': '/creds.json',
    ingress: [rule('a.test'), rule('b.test'), { service: CATCH_ALL_SERVICE }],
  });
});

test('planTunnelConfig keeps only the catch-all when nothing is desired', (t) => {
  const plan = planTunnelConfig(undefined, [], identity);
  t.deepEqual(plan.config.ingress, [{ service: CATCH_ALL_SERVICE }]);
});

test('the catch-all stays last and the rules equal the desired set under random sequences of adds, removes and toggles', (t) => {
  const host = fc.constantFrom('a.test', 'b.test', 'c.test', 'd.test', 'e.test', 'f.test');
  const op = fc.oneof(
    fc.record({
      kind: fc.constant('add' as const),
      app: fc.constantFrom('one', 'two', 'three'),
      host,
      port: fc.integer({ min: 1024, max: 1030 }),
    }),
    fc.record({ kind: fc.constant('remove' as const), host }),
    fc.record({ kind: fc.constant('toggle' as const), host, enabled: fc.boolean() }),
    fc.record({ kind: fc.constant('drift' as const), at: fc.nat() }),
  );
  fc.assert(
    fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
      const endpoints = new Map<string, { app: string; port: number }>();
      const disabled = new Set<string>();
      let config: TunnelConfig | undefined;
      for (const o of ops) {
        if (o.kind === 'add') endpoints.set(o.host, { app: o.app, port: o.port });
        else if (o.kind === 'remove') endpoints.delete(o.host);
        else if (o.kind === 'toggle') {
          if (o.enabled) disabled.delete(o.host);
          else disabled.add(o.host);
        } else if (config) {
          // A hand edit: a second catch-all somewhere in the list.
          const ingress = [...config.ingress];
          ingress.splice(o.at % (ingress.length + 1), 0, { service: CATCH_ALL_SERVICE });
          config = { ...config, ingress };
        }
        const apps = ['one', 'two', 'three'].map((name) => {
          const mine = [...endpoints].filter(([, e]) => e.app === name);
          return {
            spec: webApp(
              name,
              mine.map(([h]) => h),
              { port: mine[0]?.[1].port ?? 8080 },
            ),
            routable: true,
          };
        });
        const before = config ? hostnames(config) : [];
        const plan = planTunnelConfig(config, desiredIngress(apps, disabled), identity);
        config = plan.config;
        if (!catchAllIsLast(config)) return false;
        const expected = [...endpoints.keys()].filter((h) => !disabled.has(h)).sort();
        if (JSON.stringify([...hostnames(config)].sort()) !== JSON.stringify(expected)) return false;
        // Rules that stay keep their relative order.
        const kept = before.filter((h) => expected.includes(h!));
        if (JSON.stringify(hostnames(config).filter((h) => kept.includes(h))) !== JSON.stringify(kept)) return false;
      }
      return true;
    }),
    { numRuns: 150 },
  );
  t.pass();
});
