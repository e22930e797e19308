// tier: quick
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { waitForAllocations } from '../../../domain/scheduler/index.js';
import { isProcessAlive } from '../../../platform/local-scheduler/index.js';
import { openDriver, serviceGroup, serviceJob, STUBBORN_JS } from './fixtures.js';

test('stopping a job sends the drain signal and kills the task after the drain timeout', async (t) => {
  const { driver, appDir, dataDir } = await openDriver(t, { 'stubborn.mjs': STUBBORN_JS });
  await driver.submitJob(
    serviceJob(
      'demo-stubborn',
      serviceGroup({
        name: 'worker',
        command: `${process.execPath} stubborn.mjs`,
        workdir: appDir,
        check: false,
        drainSignal: 'SIGUSR1',
        drainMs: 400,
      }),
    ),
  );
  const [alloc] = await waitForAllocations(driver, (a) => a.length === 1 && a[0]!.task.state === 'running', {
    filter: { jobId: 'demo-stubborn' },
  });
  const taskDir = path.join(dataDir, 'allocs', alloc!.id, 'local');
  await waitForFile(path.join(taskDir, 'ready.txt'));
  const started = Date.now();
  t.is(await driver.stopJob('demo-stubborn'), 'deleted');
  const elapsed = Date.now() - started;
  t.true(elapsed >= 400, `stop took ${elapsed}ms`);
  t.regex(fs.readFileSync(path.join(taskDir, 'drained.txt'), 'utf8'), /^SIGUSR1\n$/);
  const node = Number(fs.readFileSync(path.join(taskDir, 'ready.txt'), 'utf8'));
  t.false(isProcessAlive(node, undefined));
  const stopped = await driver.getAllocation(alloc!.id);
  t.is(stopped!.status, 'complete');
  t.true(stopped!.task.events.some((e) => e.type === 'Killing' && /SIGUSR1/.test(e.message)));
  t.true(
    stopped!.task.events.some((e) => e.type === 'Killed' && /SIGKILL after the drain timeout of 400ms/.test(e.message)),
  );
});

/** Resolves when `file` exists, watching its folder (the timeout is an upper bound). */
function waitForFile(file: string, timeoutMs = 10_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const watcher = fs.watch(path.dirname(file), () => {
      if (fs.existsSync(file)) done();
    });
    const timer = setTimeout(() => {
      watcher.close();
      reject(new Error(`${file} did not appear within ${timeoutMs}ms`));
    }, timeoutMs);
    const done = (): void => {
      clearTimeout(timer);
      watcher.close();
      resolve();
    };
    if (fs.existsSync(file)) done();
  });
}
