// tier: quick
import test from 'ava';
import { waitForHealthyInstances } from '../../../domain/registry/index.js';
import { waitForAllocations } from '../../../domain/scheduler/index.js';
import { openDriver, SERVER_JS, serviceGroup, serviceJob } from './fixtures.js';

test('a changed group with canaries starts them beside the old allocations and promotion replaces the old ones', async (t) => {
  const { driver, registry, appDir } = await openDriver(t, { 'server.mjs': SERVER_JS });
  const job = (version: string) =>
    serviceJob(
      'demo-web',
      serviceGroup({
        command: [process.execPath, 'server.mjs'],
        workdir: appDir,
        count: 2,
        canary: 1,
        env: { VERSION: version },
      }),
    );
  await driver.submitJob(job('v1'));
  const v1 = await waitForAllocations(driver, (a) => a.length === 2 && a.every((x) => x.task.state === 'running'), {
    filter: { jobId: 'demo-web' },
  });

  const update = await driver.submitJob(job('v2'));
  t.deepEqual(update.rolled, ['web']);
  t.deepEqual(update.awaitingPromotion, ['web']);
  const during = await waitForAllocations(driver, (a) => a.length === 3 && a.every((x) => x.task.state === 'running'), {
    filter: { jobId: 'demo-web' },
  });
  const canaries = during.filter((a) => a.canary);
  t.is(canaries.length, 1);
  t.is(canaries[0]!.jobVersion, 2);
  t.true(v1.every((old) => during.some((a) => a.id === old.id && a.task.pid === old.task.pid)));
  const healthy = await waitForHealthyInstances(registry, 'demo-web', { count: 3, timeoutMs: 10_000 });
  t.deepEqual(
    healthy.filter((i) => i.tags.includes('canary')).map((i) => i.allocationId),
    [canaries[0]!.id],
  );
  t.deepEqual((await driver.getJob('demo-web'))!.awaitingPromotion, ['web']);

  t.is(await driver.promoteCanaries('demo-web'), 'updated');
  const after = await waitForAllocations(driver, (a) => a.length === 2 && a.every((x) => x.task.state === 'running'), {
    filter: { jobId: 'demo-web' },
  });
  t.true(after.every((a) => a.jobVersion === 2 && !a.canary));
  t.true(after.some((a) => a.id === canaries[0]!.id));
  t.true(v1.every((old) => !after.some((a) => a.id === old.id)));
  t.deepEqual((await driver.getJob('demo-web'))!.awaitingPromotion, []);
  const instances = await waitForHealthyInstances(registry, 'demo-web', { count: 2, timeoutMs: 10_000 });
  t.true(instances.every((i) => !i.tags.includes('canary')));
  t.is(await driver.promoteCanaries('demo-web'), 'unchanged');
});
