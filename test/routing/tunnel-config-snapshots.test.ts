// tier: quick
import fs from 'node:fs';
import path from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { desiredIngress, planTunnelConfig, type RoutableApp } from '../../domain/routing/index.js';
import { renderTunnelConfig } from '../../platform/edge/index.js';
import { fixtureApps, fixtureSpec, root } from './routing-fixtures.js';

const update = process.env.UPDATE_SNAPSHOTS === '1';
const snapshotDir = path.join(root, 'test/routing/__snapshots__');
const identity = { tunnel: 'svc', credentialsFile: '/etc/svc/edge/svc.json' };

function snapshot(t: ExecutionContext, name: string, actual: string): void {
  const file = path.join(snapshotDir, name);
  if (update) fs.writeFileSync(file, actual);
  t.true(fs.existsSync(file), `${name} exists (run with UPDATE_SNAPSHOTS=1 to create it)`);
  t.is(actual, fs.readFileSync(file, 'utf8'));
}

function render(apps: readonly RoutableApp[], options: Parameters<typeof desiredIngress>[2] = {}): string {
  return renderTunnelConfig(planTunnelConfig(undefined, desiredIngress(apps, new Set(), options), identity).config);
}

for (const app of fixtureApps) {
  test(`the tunnel config of fixture ${app}, deployed and healthy, matches __snapshots__/${app}.tunnel.yml`, (t) => {
    snapshot(t, `${app}.tunnel.yml`, render([{ spec: fixtureSpec(app), routable: true }]));
  });
}

test('the tunnel config of every fixture app together matches __snapshots__/all-fixtures.tunnel.yml', (t) => {
  snapshot(
    t,
    'all-fixtures.tunnel.yml',
    render(fixtureApps.map((app) => ({ spec: fixtureSpec(app), routable: true }))),
  );
});

test('the tunnel config of fixture hello-web on bridge networking matches __snapshots__/hello-web.bridge.tunnel.yml', (t) => {
  snapshot(
    t,
    'hello-web.bridge.tunnel.yml',
    render([{ spec: fixtureSpec('hello-web'), routable: true }], { networking: 'bridge', nodeIp: '10.0.0.4' }),
  );
});

test('the tunnel config of fixture hello-web scaled to zero routes through the wake gateway (__snapshots__/hello-web.gateway.tunnel.yml)', (t) => {
  const spec = fixtureSpec('hello-web');
  const managed = {
    ...spec,
    processes: {
      ...spec.processes,
      web: { ...spec.processes.web!, scaling: { ...spec.processes.web!.scaling, min: 0 } },
    },
  };
  snapshot(
    t,
    'hello-web.gateway.tunnel.yml',
    render([{ spec: managed, routable: true }], { gatewayUrl: 'http://127.0.0.1:8800' }),
  );
});

test('the snapshot folder holds exactly the files these tests write', (t) => {
  const expected = [
    ...fixtureApps.map((app) => `${app}.tunnel.yml`),
    'all-fixtures.tunnel.yml',
    'hello-web.bridge.tunnel.yml',
    'hello-web.gateway.tunnel.yml',
  ].sort();
  t.deepEqual(
    fs
      .readdirSync(snapshotDir)
      .filter((f) => f.endsWith('.tunnel.yml'))
      .sort(),
    expected,
  );
});
