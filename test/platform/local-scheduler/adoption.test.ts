import test, { type ExecutionContext } from 'ava';
import { waitForHealthyInstances } from '../../../domain/registry/index.js';
import { milliseconds, waitForAllocations } from '../../../domain/scheduler/index.js';
import { LocalRegistry } from '../../../platform/local-registry/index.js';
import { isProcessAlive, LocalScheduler } from '../../../platform/local-scheduler/index.js';
import { fastRestart, openDriver, SERVER_JS, serviceGroup, serviceJob, stopEverything } from './fixtures.js';

async function reopen(t: ExecutionContext, dataDir: string): Promise<{ driver: LocalScheduler; registry: LocalRegistry }> {
  const registry = new LocalRegistry();
  const driver = await LocalScheduler.open({ dataDir, registry, monitorInterval: milliseconds(40), defaultRestart: fastRestart });
  t.teardown(() => stopEverything(driver));
  return { driver, registry };
}

test('a new driver instance on the same data dir re-adopts the running process with the same pid', async (t) => {
  const first = await openDriver(t, { 'server.mjs': SERVER_JS });
  await first.driver.submitJob(serviceJob('demo-web', serviceGroup({ command: `${process.execPath} server.mjs`, workdir: first.appDir })));
  await waitForHealthyInstances(first.registry, 'demo-web', { timeoutMs: 10_000 });
  const [before] = await first.driver.listAllocations({ jobId: 'demo-web' });
  await first.driver.close();
  t.true(isProcessAlive(before!.task.pid!, undefined));

  const second = await reopen(t, first.dataDir);
  const [after] = await second.driver.listAllocations({ jobId: 'demo-web' });
  t.is(after!.id, before!.id);
  t.is(after!.task.pid, before!.task.pid);
  t.is(after!.status, 'running');
  t.is(after!.task.restarts, 0);
  t.is(after!.task.lastEventMessage, `Re-adopted running process ${before!.task.pid} after a driver restart`);
  t.deepEqual(after!.ports, before!.ports);
  const [instance] = await waitForHealthyInstances(second.registry, 'demo-web', { timeoutMs: 10_000 });
  t.is(instance!.port, before!.ports[0]!.value);
  t.is((await second.driver.getJob('demo-web'))!.version, 1);

  // The adopted process is not a child of the new driver: its exit is found by polling /proc.
  process.kill(before!.task.pid!, 'SIGKILL');
  const [restarted] = await waitForAllocations(second.driver, (a) => a.length === 1 && a[0]!.task.restarts === 1 && a[0]!.task.state === 'running', {
    filter: { jobId: 'demo-web' },
    timeoutMs: 10_000,
  });
  t.is(restarted!.id, before!.id);
  t.regex(restarted!.task.events.find((e) => e.type === 'Terminated')!.message, /exit status unknown/);
  await waitForHealthyInstances(second.registry, 'demo-web', { timeoutMs: 10_000 });
});

test('a process that vanished while no driver ran is marked lost and replaced on start', async (t) => {
  const first = await openDriver(t, { 'server.mjs': SERVER_JS });
  await first.driver.submitJob(serviceJob('demo-web', serviceGroup({ command: [process.execPath, 'server.mjs'], workdir: first.appDir })));
  const [before] = await waitForAllocations(first.driver, (a) => a.length === 1 && a[0]!.task.state === 'running', { filter: { jobId: 'demo-web' } });
  await first.driver.close();
  process.kill(-before!.task.pid!, 'SIGKILL');
  await waitUntilDead(before!.task.pid!);

  const second = await reopen(t, first.dataDir);
  const lost = await second.driver.getAllocation(before!.id);
  t.is(lost!.status, 'lost');
  t.regex(lost!.statusDescription!, /vanished while the driver was down/);
  await waitForHealthyInstances(second.registry, 'demo-web', { timeoutMs: 10_000 });
  const [replacement] = await second.driver.listAllocations({ jobId: 'demo-web' });
  t.not(replacement!.id, before!.id);
  t.is(replacement!.index, before!.index);
});

test('a re-adopted process is drained by the new driver instance when its job stops', async (t) => {
  const first = await openDriver(t, { 'server.mjs': SERVER_JS });
  await first.driver.submitJob(serviceJob('demo-web', serviceGroup({ command: [process.execPath, 'server.mjs'], workdir: first.appDir })));
  const [before] = await waitForAllocations(first.driver, (a) => a.length === 1 && a[0]!.task.state === 'running', { filter: { jobId: 'demo-web' } });
  await first.driver.close();
  const second = await reopen(t, first.dataDir);
  t.is(await second.driver.stopJob('demo-web'), 'deleted');
  t.false(isProcessAlive(before!.task.pid!, undefined));
  const stopped = await second.driver.getAllocation(before!.id);
  t.is(stopped!.status, 'complete');
  t.true(stopped!.task.events.some((e) => e.type === 'Killed' && e.message === 'Task exited after SIGTERM'));
  t.deepEqual(await second.registry.instances('demo-web'), []);
});

test('a second driver cannot open a data dir held by a live driver', async (t) => {
  const first = await openDriver(t);
  await t.throwsAsync(LocalScheduler.open({ dataDir: first.dataDir, registry: new LocalRegistry() }), { message: /is in use by process/ });
});

/** Waits for the kernel to reap `pid` (upper bound only). */
async function waitUntilDead(pid: number): Promise<void> {
  const deadline = Date.now() + 5000;
  while (isProcessAlive(pid, undefined) && Date.now() < deadline) await new Promise((r) => setImmediate(r));
}
