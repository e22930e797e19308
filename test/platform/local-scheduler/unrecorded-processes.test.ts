// tier: quick
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { waitForHealthyInstances } from '../../../domain/registry/index.js';
import { milliseconds } from '../../../domain/scheduler/index.js';
import { LocalRegistry } from '../../../platform/local-registry/index.js';
import { isProcessAlive, LocalScheduler } from '../../../platform/local-scheduler/index.js';
import { fastRestart, openDriver, SERVER_JS, serviceGroup, serviceJob, stopEverything } from './fixtures.js';

function exited(pid: number): Promise<void> {
  return new Promise((resolve) => {
    const check = () => (isProcessAlive(pid, undefined) ? setTimeout(check, 20) : resolve());
    check();
  });
}

test('a new driver adopts a process whose pid the previous driver never recorded', async (t) => {
  const first = await openDriver(t, { 'server.mjs': SERVER_JS });
  await first.driver.submitJob(
    serviceJob('demo-web', serviceGroup({ command: `${process.execPath} server.mjs`, workdir: first.appDir })),
  );
  await waitForHealthyInstances(first.registry, 'demo-web', { timeoutMs: 10_000 });
  const [before] = await first.driver.listAllocations({ jobId: 'demo-web' });
  await first.driver.close();
  // Simulate a crash between spawning the process and writing its pid.
  const stateFile = path.join(first.dataDir, 'scheduler', 'state.json');
  const state = JSON.parse(fs.readFileSync(stateFile, 'utf8'));
  delete state.allocations[before!.id].task.pid;
  delete state.allocations[before!.id].task.pidStartTime;
  fs.writeFileSync(stateFile, JSON.stringify(state));

  const driver = await LocalScheduler.open({
    dataDir: first.dataDir,
    registry: new LocalRegistry(),
    monitorInterval: milliseconds(40),
    defaultRestart: fastRestart,
  });
  t.teardown(() => stopEverything(driver));
  const [after] = await driver.listAllocations({ jobId: 'demo-web' });
  t.is(after!.task.pid, before!.task.pid);
  t.is(after!.status, 'running');
});

test('a new driver kills an app process that belongs to no allocation it knows', async (t) => {
  const first = await openDriver(t, {});
  await first.driver.close();
  const orphan = spawn('sleep', ['300'], {
    detached: true,
    stdio: 'ignore',
    env: {
      ...process.env,
      SVC_ALLOC_ID: 'gone-allocation',
      SVC_ALLOC_DIR: path.join(first.dataDir, 'allocs', 'gone-allocation'),
    },
  });
  orphan.unref();
  const stranger = spawn('sleep', ['300'], {
    detached: true,
    stdio: 'ignore',
    env: { ...process.env, SVC_ALLOC_ID: 'x', SVC_ALLOC_DIR: '/elsewhere/allocs/x' },
  });
  stranger.unref();
  t.teardown(() => {
    for (const pid of [orphan.pid!, stranger.pid!]) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
  });
  const driver = await LocalScheduler.open({ dataDir: first.dataDir, registry: new LocalRegistry() });
  t.teardown(() => driver.close());
  await exited(orphan.pid!);
  t.false(isProcessAlive(orphan.pid!, undefined));
  t.true(isProcessAlive(stranger.pid!, undefined), 'a process of another data dir is left alone');
});
