// tier: quick
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { waitForHealthyInstances } from '../../../domain/registry/index.js';
import { milliseconds, waitForAllocations, type JobSpec } from '../../../domain/scheduler/index.js';
import { LocalRegistry } from '../../../platform/local-registry/index.js';
import { isProcessAlive, LocalScheduler } from '../../../platform/local-scheduler/index.js';
import { openDriver, reopenDriver, SERVER_JS, serviceGroup, serviceJob } from './fixtures.js';

test('a new driver instance on the same data dir re-adopts the running process with the same pid', async (t) => {
  const first = await openDriver(t, { 'server.mjs': SERVER_JS });
  await first.driver.submitJob(
    serviceJob('demo-web', serviceGroup({ command: `${process.execPath} server.mjs`, workdir: first.appDir })),
  );
  await waitForHealthyInstances(first.registry, 'demo-web', { timeoutMs: 10_000 });
  const [before] = await first.driver.listAllocations({ jobId: 'demo-web' });
  await first.driver.close();
  t.true(isProcessAlive(before!.task.pid!, undefined));

  const second = await reopenDriver(t, first.dataDir);
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
  const [restarted] = await waitForAllocations(
    second.driver,
    (a) => a.length === 1 && a[0]!.task.restarts === 1 && a[0]!.task.state === 'running',
    {
      filter: { jobId: 'demo-web' },
      timeoutMs: 10_000,
    },
  );
  t.is(restarted!.id, before!.id);
  t.regex(restarted!.task.events.find((e) => e.type === 'Terminated')!.message, /exit status unknown/);
  await waitForHealthyInstances(second.registry, 'demo-web', { timeoutMs: 10_000 });
});

test('a process that vanished while no driver ran is marked lost and replaced on start', async (t) => {
  const first = await openDriver(t, { 'server.mjs': SERVER_JS });
  await first.driver.submitJob(
    serviceJob('demo-web', serviceGroup({ command: [process.execPath, 'server.mjs'], workdir: first.appDir })),
  );
  const [before] = await waitForAllocations(first.driver, (a) => a.length === 1 && a[0]!.task.state === 'running', {
    filter: { jobId: 'demo-web' },
  });
  await first.driver.close();
  process.kill(-before!.task.pid!, 'SIGKILL');
  await waitUntilDead(before!.task.pid!);

  const second = await reopenDriver(t, first.dataDir);
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
  await first.driver.submitJob(
    serviceJob('demo-web', serviceGroup({ command: [process.execPath, 'server.mjs'], workdir: first.appDir })),
  );
  const [before] = await waitForAllocations(first.driver, (a) => a.length === 1 && a[0]!.task.state === 'running', {
    filter: { jobId: 'demo-web' },
  });
  await first.driver.close();
  const second = await reopenDriver(t, first.dataDir);
  t.is(await second.driver.stopJob('demo-web'), 'deleted');
  t.false(isProcessAlive(before!.task.pid!, undefined));
  const stopped = await second.driver.getAllocation(before!.id);
  t.is(stopped!.status, 'complete');
  t.true(stopped!.task.events.some((e) => e.type === 'Killed' && e.message === 'Task exited after SIGTERM'));
  t.deepEqual(await second.registry.instances('demo-web'), []);
});

test('a second driver cannot open a data dir held by a live driver', async (t) => {
  const first = await openDriver(t);
  await t.throwsAsync(LocalScheduler.open({ dataDir: first.dataDir, registry: new LocalRegistry() }), {
    message: /is in use by process/,
  });
});

/** Waits for the kernel to reap `pid` (upper bound only). */
async function waitUntilDead(pid: number): Promise<void> {
  const deadline = Date.now() + 5000;
  while (isProcessAlive(pid, undefined) && Date.now() < deadline) await new Promise((r) => setImmediate(r));
}

test('a re-adopted run-to-completion task that ends reports its real exit status, recorded by its shell', async (t) => {
  // Each run waits for its own file, written once a second driver has adopted it, and exits with
  // the code in it: the first driver is gone, so only the recorded status can tell the outcome.
  const script = `const fs = require('node:fs');
const file = 'go-' + process.env.SVC_DISPATCH_PAYLOAD;
const poll = setInterval(() => {
  if (!fs.existsSync(file)) return;
  clearInterval(poll);
  const code = Number(fs.readFileSync(file, 'utf8'));
  process.stdout.write('finishing with ' + code);
  process.exit(code);
}, 20);`;
  const first = await openDriver(t, { 'wait.cjs': script });
  const job: JobSpec = {
    id: 'demo-fn',
    app: 'demo',
    type: 'batch',
    parameterized: { payload: 'required' },
    taskGroups: [
      {
        name: 'fn',
        count: 0,
        task: {
          name: 'fn',
          command: [process.execPath, 'wait.cjs'],
          workdir: first.appDir,
          env: {},
          resources: { cpuMhz: 100, memoryMb: 128 },
        },
        ports: [],
        services: [],
        drain: { signal: 'SIGTERM', timeout: milliseconds(200) },
      },
    ],
  };
  await first.driver.submitJob(job);
  const runs = {
    ok: await first.driver.dispatch('demo-fn', { payload: 'ok' }),
    bad: await first.driver.dispatch('demo-fn', { payload: 'bad' }),
  };
  const ids = [runs.ok.id, runs.bad.id];
  await waitForAllocations(
    first.driver,
    (a) => ids.every((id) => a.some((x) => x.executionId === id && x.status === 'running' && x.task.pid !== undefined)),
    { filter: { jobId: 'demo-fn' }, timeoutMs: 10_000 },
  );
  await first.driver.close();

  const second = await reopenDriver(t, first.dataDir);
  // Renamed into place: a run polling for its file must never read it created but still empty.
  for (const [name, code] of [
    ['go-ok', '0'],
    ['go-bad', '3'],
  ]) {
    fs.writeFileSync(path.join(first.appDir, `${name}.tmp`), code!);
    fs.renameSync(path.join(first.appDir, `${name}.tmp`), path.join(first.appDir, name!));
  }
  await waitForAllocations(
    second.driver,
    (a) => ids.every((id) => a.some((x) => x.executionId === id && ['complete', 'failed'].includes(x.status))),
    { filter: { jobId: 'demo-fn', includeTerminal: true }, timeoutMs: 10_000 },
  );
  t.like(await second.driver.getExecution(runs.ok.id), { status: 'succeeded', exitCode: 0 });
  const bad = (await second.driver.getExecution(runs.bad.id))!;
  t.like(bad, { status: 'failed', exitCode: 3 });
  t.regex(bad.output, /finishing with 3/);
});
