// tier: quick
import test from 'ava';
import { milliseconds, waitForAllocations, type Execution, type JobSpec } from '../../../domain/scheduler/index.js';
import type { LocalScheduler } from '../../../platform/local-scheduler/index.js';
import { openDriver } from './fixtures.js';

const SCRIPT = `
const input = JSON.parse(process.env.SVC_DISPATCH_PAYLOAD ?? '{}');
if (input.sleep) setTimeout(() => {}, input.sleep);
else { process.stdout.write('hello ' + input.name + ' via ' + process.env.SVC_REQUEST_METHOD); process.exitCode = input.code ?? 0; }
`;

function functionJob(workdir: string): JobSpec {
  return {
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
          command: [process.execPath, 'fn.js'],
          workdir,
          env: {},
          resources: { cpuMhz: 100, memoryMb: 128 },
          timeout: milliseconds(5000),
        },
        ports: [],
        services: [],
        drain: { signal: 'SIGTERM', timeout: milliseconds(200) },
      },
    ],
  };
}

/** Waits for the execution's allocation to end, then reads the execution record. */
async function settled(driver: LocalScheduler, id: string): Promise<Execution> {
  await waitForAllocations(
    driver,
    (a) => a.some((x) => x.executionId === id && ['complete', 'failed'].includes(x.status)),
    {
      filter: { jobId: 'demo-fn', includeTerminal: true },
      timeoutMs: 10_000,
    },
  );
  return (await driver.getExecution(id))!;
}

test('a dispatched batch job receives its payload and its stdout and exit code are captured', async (t) => {
  const { driver, appDir } = await openDriver(t, { 'fn.js': SCRIPT });
  await driver.submitJob(functionJob(appDir));
  t.is(
    (await driver.listAllocations({ jobId: 'demo-fn' })).length,
    0,
    'a parameterized job runs nothing until dispatched',
  );
  const ok = await driver.dispatch('demo-fn', {
    payload: JSON.stringify({ name: 'ada' }),
    env: { SVC_REQUEST_METHOD: 'POST' },
  });
  // Answered once launched: running, or already ended when the machine is slow to answer.
  t.true(['running', 'succeeded'].includes(ok.status), ok.status);
  const okDone = await settled(driver, ok.id);
  t.is(okDone.status, 'succeeded');
  t.is(okDone.exitCode, 0);
  t.is(okDone.output, 'hello ada via POST');
  t.true(okDone.durationMs! >= 0);

  const bad = await driver.dispatch('demo-fn', {
    payload: JSON.stringify({ name: 'bob', code: 3 }),
    executionId: 'exec-bad',
  });
  const badDone = await settled(driver, bad.id);
  t.is(badDone.id, 'exec-bad');
  t.is(badDone.status, 'failed');
  t.is(badDone.exitCode, 3);
  t.is(badDone.output, 'hello bob via undefined');
  await t.throwsAsync(driver.dispatch('demo-fn', {}), { message: 'dispatch demo-fn: payload is required' });
});

test('a dispatched batch job running past its timeout ends timed_out', async (t) => {
  const { driver, appDir } = await openDriver(t, { 'fn.js': SCRIPT });
  await driver.submitJob(functionJob(appDir));
  const started = Date.now();
  const slow = await driver.dispatch('demo-fn', {
    payload: JSON.stringify({ sleep: 60_000 }),
    timeout: milliseconds(300),
  });
  const done = await settled(driver, slow.id);
  t.is(done.status, 'timed_out');
  t.is(done.exitCode, null);
  t.true(Date.now() - started >= 300);
  t.true(Date.now() - started < 5000);
});

test('a dispatch whose working directory is missing fails with a driver failure message', async (t) => {
  const { driver, appDir } = await openDriver(t, { 'fn.js': SCRIPT });
  const job = functionJob(appDir);
  const group = job.taskGroups[0]!;
  await driver.submitJob({ ...job, taskGroups: [{ ...group, task: { ...group.task, workdir: `${appDir}/missing` } }] });
  const execution = await driver.dispatch('demo-fn', { payload: '{}' });
  const done = await settled(driver, execution.id);
  t.is(done.status, 'failed');
  t.is(done.exitCode, null);
  const alloc = await driver.getAllocation(done.allocationId);
  t.regex(alloc!.statusDescription!, /^failed to start task: spawn .* ENOENT$/);
});
