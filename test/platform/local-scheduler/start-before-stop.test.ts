// tier: quick
import test from 'ava';
import { instanceStatus, type HealthChange, type ServiceInstance } from '../../../domain/registry/index.js';
import { waitForAllocations, type Allocation } from '../../../domain/scheduler/index.js';
import type { LocalRegistry } from '../../../platform/local-registry/index.js';
import { isProcessAlive } from '../../../platform/local-scheduler/index.js';
import { openDriver, serviceGroup, serviceJob } from './fixtures.js';
import { staticPort } from '../../helpers/static-port.js';

const node = process.execPath;

// The driver's timers (health probes, the monitor) are unref'd, as a server's should be: without a
// handle of the test's own, ava would take an empty event loop between two probes for a test that
// never resolves.
const keepAlive = setInterval(() => undefined, 1000);
test.after.always(() => clearInterval(keepAlive));

/** Listens after LISTEN_DELAY_MS, answers /healthz with HEALTH (200 by default), and VERSION on /. */
const VERSIONED_JS = `
import http from 'node:http';
const server = http.createServer((req, res) => {
  if (req.url === '/healthz') { res.statusCode = Number(process.env.HEALTH ?? 200); res.end('health'); return; }
  res.end(String(process.env.VERSION));
});
setTimeout(() => server.listen(Number(process.env.PORT), '127.0.0.1'), Number(process.env.LISTEN_DELAY_MS ?? 0));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
`;

const running =
  (n: number) =>
  (list: readonly Allocation[]): boolean =>
    list.filter((a) => a.status === 'running').length === n;

/** Records, at every registry change of `service`, how many of its instances pass. */
function passingTimeline(registry: LocalRegistry, service: string): { counts: number[]; stop: () => void } {
  const counts: number[] = [];
  const stop = registry.watch((change: HealthChange) => {
    if (change.service !== service) return;
    void registry
      .instances(service)
      .then((list: readonly ServiceInstance[]) =>
        counts.push(list.filter((i) => instanceStatus(i) === 'passing').length),
      );
  });
  return { counts, stop };
}

function job(appDir: string, version: string, options: { health?: number; staticPort?: number; files?: string } = {}) {
  return serviceJob(
    'demo-web',
    serviceGroup({
      command: [node, 'server.mjs'],
      workdir: appDir,
      env: { VERSION: version, LISTEN_DELAY_MS: '150', HEALTH: String(options.health ?? 200) },
      ...(options.staticPort !== undefined ? { staticPort: options.staticPort } : {}),
      ...(options.files !== undefined ? { files: [{ destination: 'local/config', contents: options.files }] } : {}),
    }),
  );
}

async function passingIn(registry: LocalRegistry, allocationId: string): Promise<boolean> {
  const list = await registry.instances('demo-web');
  return list.some((i) => i.allocationId === allocationId && instanceStatus(i) === 'passing');
}

test('a changed job starts its new allocation on a port of its own beside the old one, and withdraws the old one only once the new one passes', async (t) => {
  const { driver, registry, appDir } = await openDriver(t, { 'server.mjs': VERSIONED_JS });
  await driver.submitJob(job(appDir, 'v1'));
  const [first] = await waitForAllocations(driver, running(1), { filter: { jobId: 'demo-web' } });
  await waitForPassing(registry, first!.id);
  const timeline = passingTimeline(registry, 'demo-web');
  t.teardown(timeline.stop);

  await driver.submitJob(job(appDir, 'v2'));
  // Right after the submit both run: the old one still registered and passing, the new one starting.
  const both = (await driver.listAllocations({ jobId: 'demo-web' })).filter((a) => a.status === 'running');
  t.is(both.length, 2);
  const second = both.find((a) => a.id !== first!.id)!;
  t.not(second.ports[0]!.value, first!.ports[0]!.value);
  t.true(await passingIn(registry, first!.id));
  const starting = (await registry.instances('demo-web')).find((i) => i.allocationId === second.id)!;
  t.true(starting.checks[0]!.starting);

  // The old one stops only after the new one passed; the service never had zero passing instances.
  await waitForAllocations(driver, (list) => list.find((a) => a.id === first!.id)?.status === 'complete', {
    filter: { jobId: 'demo-web', includeTerminal: true },
  });
  t.true(await passingIn(registry, second.id));
  t.false(timeline.counts.includes(0), `passing counts ${timeline.counts.join(',')}`);
  const old = await driver.getAllocation(first!.id);
  t.is(old!.desiredStatus, 'stop');
  t.is(old!.task.events.at(-1)?.type, 'Killed');
});

test('a new allocation that never passes leaves the old one serving; resubmitting the old job stops the new one and keeps the old process', async (t) => {
  const { driver, registry, appDir } = await openDriver(t, { 'server.mjs': VERSIONED_JS });
  await driver.submitJob(job(appDir, 'v1'));
  const [first] = await waitForAllocations(driver, running(1), { filter: { jobId: 'demo-web' } });
  await waitForPassing(registry, first!.id);

  await driver.submitJob(job(appDir, 'v2', { health: 500 }));
  const bad = (await driver.listAllocations({ jobId: 'demo-web' })).find((a) => a.id !== first!.id)!;
  // Wait for the new allocation's first failing probes (event-driven: registry changes).
  await new Promise<void>((resolve) => {
    const stop = registry.watch((change) => {
      const check = change.instance?.allocationId === bad.id ? change.instance.checks[0] : undefined;
      if (check?.output.includes(': 500')) {
        stop();
        resolve();
      }
    });
  });
  t.true(await passingIn(registry, first!.id));
  t.is((await driver.getAllocation(first!.id))!.desiredStatus, 'run');

  // A rollback resubmits the old job: the old allocation matches it and passes, so the new one goes.
  const result = await driver.submitJob(job(appDir, 'v1'));
  t.deepEqual(result.rolled, ['web']);
  const [kept] = await waitForAllocations(driver, running(1), { filter: { jobId: 'demo-web' } });
  t.is(kept!.id, first!.id);
  t.is(kept!.task.pid, first!.task.pid);
  t.true(isProcessAlive(first!.task.pid!, undefined));
  t.is((await driver.getAllocation(bad.id))!.desiredStatus, 'stop');
});

test('a group with a static port cannot overlap: the old allocation stops before the new one starts', async (t) => {
  const { driver, registry, appDir } = await openDriver(t, { 'server.mjs': VERSIONED_JS });
  const port = await staticPort();
  await driver.submitJob(job(appDir, 'v1', { staticPort: port }));
  const [first] = await waitForAllocations(driver, running(1), { filter: { jobId: 'demo-web' } });
  await waitForPassing(registry, first!.id);
  await driver.submitJob(job(appDir, 'v2', { staticPort: port }));
  // The submit returns after the old one stopped: it is complete before the new one exists.
  const old = await driver.getAllocation(first!.id);
  t.is(old!.status, 'complete');
  const [second] = await waitForAllocations(driver, running(1), { filter: { jobId: 'demo-web' } });
  t.is(second!.ports[0]!.value, port);
  t.not(second!.id, first!.id);
});

test('a changed rendered file of a group that can overlap rolls to a new allocation instead of restarting in place', async (t) => {
  const { driver, registry, appDir } = await openDriver(t, { 'server.mjs': VERSIONED_JS });
  await driver.submitJob(job(appDir, 'v1', { files: 'one' }));
  const [first] = await waitForAllocations(driver, running(1), { filter: { jobId: 'demo-web' } });
  await waitForPassing(registry, first!.id);
  const result = await driver.submitJob(job(appDir, 'v1', { files: 'two' }));
  t.deepEqual(result.restarted, []);
  t.deepEqual(result.rolled, ['web']);
  const [second] = await waitForAllocations(
    driver,
    (list) => list.length === 1 && list[0]!.id !== first!.id && list[0]!.status === 'running',
    { filter: { jobId: 'demo-web' } },
  );
  t.true(await passingIn(registry, second!.id));
  t.is((await driver.getAllocation(first!.id))!.task.restarts, 0);
});

async function waitForPassing(registry: LocalRegistry, allocationId: string): Promise<void> {
  // Watch first, then look: a change between the look and the watch would otherwise be missed.
  let stop: () => void = () => undefined;
  const passed = new Promise<void>((resolve) => {
    stop = registry.watch((change) => {
      if (change.instance?.allocationId === allocationId && instanceStatus(change.instance) === 'passing') resolve();
    });
  });
  try {
    if (await passingIn(registry, allocationId)) return;
    await passed;
  } finally {
    stop();
  }
}
