// tier: quick
import test from 'ava';
import { milliseconds, waitForAllocations, type Allocation, type JobSpec } from '../../../domain/scheduler/index.js';
import { LocalRegistry } from '../../../platform/local-registry/index.js';
import { LocalScheduler } from '../../../platform/local-scheduler/index.js';
import { openDriver, stopEverything } from './fixtures.js';

function periodicJob(workdir: string): JobSpec {
  return {
    id: 'demo-tick',
    app: 'demo',
    type: 'periodic',
    periodic: { cron: '* * * * * *' },
    taskGroups: [
      {
        name: 'tick',
        count: 1,
        task: {
          name: 'tick',
          command: 'echo "tick $SVC_PERIODIC_LAUNCH"',
          workdir,
          env: {},
          resources: { cpuMhz: 100, memoryMb: 64 },
        },
        ports: [],
        services: [],
        drain: { signal: 'SIGTERM', timeout: milliseconds(500) },
      },
    ],
  };
}

const completedChildren = (allocs: readonly Allocation[]) =>
  allocs.filter((a) => a.kind === 'periodic_child' && a.status === 'complete');

test('a periodic job launches children on its cron schedule and pause, resume and force work', async (t) => {
  const { driver, appDir } = await openDriver(t);
  await driver.submitJob(periodicJob(appDir));
  const all = { jobId: 'demo-tick', includeTerminal: true };
  const ran = await waitForAllocations(driver, (a) => completedChildren(a).length >= 1, {
    filter: all,
    timeoutMs: 5000,
  });
  const child = completedChildren(ran)[0]!;
  const execution = await driver.getExecution(child.executionId!);
  t.is(execution!.status, 'succeeded');
  t.is(execution!.exitCode, 0);
  t.is(execution!.output, 'tick scheduled\n');

  t.is(await driver.pausePeriodic('demo-tick'), 'updated');
  t.is(await driver.pausePeriodic('demo-tick'), 'unchanged');
  const paused = await driver.getJob('demo-tick');
  t.true(paused!.paused);
  t.is(paused!.nextLaunchAt, undefined);
  // While paused no tick launches; a forced run still does.
  const countBefore = (await driver.listAllocations(all)).length;
  const forced = await driver.forcePeriodic('demo-tick');
  const done = await waitForAllocations(
    driver,
    (a) => a.some((x) => x.executionId === forced.id && x.status === 'complete'),
    { filter: all },
  );
  t.is(done.length, countBefore + 1, 'only the forced child ran while paused');
  t.is((await driver.getExecution(forced.id))!.output, 'tick forced\n');

  t.is(await driver.resumePeriodic('demo-tick'), 'updated');
  t.truthy((await driver.getJob('demo-tick'))!.nextLaunchAt);
  await waitForAllocations(
    driver,
    (a) => completedChildren(a).filter((c) => !done.some((d) => d.id === c.id)).length >= 1,
    { filter: all, timeoutMs: 5000 },
  );
  t.true((await driver.listExecutions('demo-tick')).length >= 3);
});

test('a paused periodic job stays paused after a driver restart and resumes on the new instance', async (t) => {
  const first = await openDriver(t);
  await first.driver.submitJob(periodicJob(first.appDir));
  await first.driver.pausePeriodic('demo-tick');
  await first.driver.close();
  const driver = await LocalScheduler.open({
    dataDir: first.dataDir,
    registry: new LocalRegistry(),
    monitorInterval: milliseconds(40),
  });
  t.teardown(() => stopEverything(driver));
  const job = await driver.getJob('demo-tick');
  t.true(job!.paused);
  t.is(job!.version, 1);
  t.is(job!.nextLaunchAt, undefined);
  await driver.resumePeriodic('demo-tick');
  const ran = await waitForAllocations(driver, (a) => completedChildren(a).length >= 1, {
    filter: { jobId: 'demo-tick', includeTerminal: true },
    timeoutMs: 5000,
  });
  t.is((await driver.getExecution(completedChildren(ran)[0]!.executionId!))!.status, 'succeeded');
});

test('a periodic job reads its cron schedule in its time zone', async (t) => {
  const { driver, appDir } = await openDriver(t);
  // 03:00 in Kolkata (UTC+05:30, no daylight saving) is 21:30 UTC; in UTC it is 03:00.
  await driver.submitJob({
    ...periodicJob(appDir),
    id: 'demo-kolkata',
    periodic: { cron: '0 3 * * *', timeZone: 'Asia/Kolkata' },
  });
  await driver.submitJob({ ...periodicJob(appDir), id: 'demo-utc', periodic: { cron: '0 3 * * *' } });
  const kolkata = new Date((await driver.getJob('demo-kolkata'))!.nextLaunchAt!);
  const utc = new Date((await driver.getJob('demo-utc'))!.nextLaunchAt!);
  t.deepEqual([kolkata.getUTCHours(), kolkata.getUTCMinutes()], [21, 30]);
  t.deepEqual([utc.getUTCHours(), utc.getUTCMinutes()], [3, 0]);
});
