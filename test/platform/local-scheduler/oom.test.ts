// tier: quick
import test from 'ava';
import { waitForAllocations } from '../../../domain/scheduler/index.js';
import { HOG_JS, openDriver, serviceGroup, serviceJob } from './fixtures.js';

test('a process growing beyond its memory limit is killed and reported OOM-killed', async (t) => {
  const { driver, appDir } = await openDriver(t, { 'hog.mjs': HOG_JS });
  await driver.submitJob(
    serviceJob(
      'demo-hog',
      serviceGroup({
        name: 'hog',
        command: [process.execPath, 'hog.mjs'],
        workdir: appDir,
        memoryMb: 64,
        check: false,
      }),
    ),
  );
  const [alloc] = await waitForAllocations(driver, (a) => a.length === 1 && a[0]!.task.oomKilled, {
    filter: { jobId: 'demo-hog' },
    timeoutMs: 15_000,
  });
  t.true(alloc!.task.events.some((e) => e.type === 'OOM Killed' && /exceeded the limit of 64 MB/.test(e.message)));
  t.true(alloc!.task.restarts >= 1);
  t.is(alloc!.status, 'running');
  const usage = await driver.memoryUsage(alloc!.id);
  t.true(usage.peakRssBytes > 64 * 1024 * 1024);
  t.true(usage.peakRssBytes < 200 * 1024 * 1024);
  t.is(usage.limitBytes, 64 * 1024 * 1024);
});
