// tier: full
import net from 'node:net';
import test from 'ava';
import { runSvc } from '../helpers/cli.js';
import { request } from '../helpers/servers.js';
import { pipelineConfig, startPlane } from '../pipeline/pipeline-fixture.js';
import { tempDir } from '../helpers/temp-dir.js';

/** A port nothing listens on. */
async function unreachableUrl(): Promise<string> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(probe.address() as net.AddressInfo).port}`;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return url;
}

test('svc platform commands queue lane operations and exit 0, 1 on a conflict, 2 on wrong usage, 3 unreachable and 4 for an unknown operation', async (t) => {
  // SVC_AGENT=off: the operations stay queued (no agent is started), which is what this test reads.
  const config = pipelineConfig(t, { SVC_AGENT: 'off' });
  const plane = await startPlane(t, config);
  const api = ['--api', plane.url];
  const source = tempDir(t);
  const queued = await runSvc(['platform', 'upgrade', source, '--label', 'next', '--drain-mode', 'wait', ...api]);
  t.is(queued.code, 0, queued.stderr);
  const id = /^queued platform\.upgrade (op_[0-9a-f]{20})$/m.exec(queued.stdout)?.[1];
  t.truthy(id, queued.stdout);
  const again = await runSvc(['platform', 'upgrade', source, ...api]);
  t.is(again.code, 1);
  t.regex(again.stderr, /platform\.upgrade op_[0-9a-f]{20} is queued: one at a time \(platform_operation_active\)/);
  const shown = await runSvc(['platform', 'show', id!, '--json', ...api]);
  t.is(shown.code, 0, shown.stderr);
  const view = JSON.parse(shown.stdout);
  t.like(view.operation, {
    kind: 'platform.upgrade',
    status: 'queued',
    ref: source,
    payload: { source, label: 'next', drainMode: 'wait' },
    maxAttempts: 5,
  });
  t.is(view.upgrade, null);
  t.deepEqual(view.steps, []);
  t.is((await runSvc(['platform', 'show', 'op_00000000000000000000', ...api])).code, 4);
  t.is((await runSvc(['platform', 'upgrade', ...api])).code, 2, 'a missing source');
  t.is((await runSvc(['platform', 'upgrade', source, '--drain-mode', 'sometimes', ...api])).code, 2);
  t.is((await runSvc(['platform', 'releases', '--api', await unreachableUrl()])).code, 3);
  const releases = await runSvc(['platform', 'releases', '--json', ...api]);
  t.is(releases.code, 0, releases.stderr);
  t.true((JSON.parse(releases.stdout).operations as { id: string }[]).some((o) => o.id === id));
  t.is((await runSvc(['platform', 'smoke', ...api])).code, 0);
  // The HTTP edge refuses bad bodies with a 400, never a 5xx.
  const bad = await request(`${plane.url}/api/platform/upgrade`, {
    method: 'POST',
    json: { source: '', drainMode: 'later' },
  });
  t.is(bad.status, 400);
  const extra = await request(`${plane.url}/api/platform/preflight`, {
    method: 'POST',
    json: { source: '/x', drainMode: 'wait' },
  });
  t.is(extra.status, 400);
  t.is(extra.body.error.code, 'invalid_drain_mode');
  t.is((await request(`${plane.url}/api/platform/operations/op_x`)).status, 404);
});
