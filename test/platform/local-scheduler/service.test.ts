// tier: quick
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { instanceStatus, waitForHealthyInstances, type ServiceInstance } from '../../../domain/registry/index.js';
import type { LocalRegistry } from '../../../platform/local-registry/index.js';
import { milliseconds, waitForAllocations, type Allocation } from '../../../domain/scheduler/index.js';
import { isProcessAlive } from '../../../platform/local-scheduler/index.js';
import { openDriver, SERVER_JS, serviceGroup, serviceJob } from './fixtures.js';

const node = process.execPath;
const running = (n: number) => (allocs: readonly Allocation[]) =>
  allocs.length === n && allocs.every((a) => a.status === 'running' && a.task.state === 'running');

test('a service started by the local driver passes its health check and the registry reports passing', async (t) => {
  const { driver, registry, appDir, dataDir } = await openDriver(t, { 'server.mjs': SERVER_JS });
  const result = await driver.submitJob(
    serviceJob('demo-web', serviceGroup({ command: `${node} server.mjs`, workdir: appDir, env: { GREETING: 'hi' } })),
  );
  t.is(result.outcome, 'created');
  const [instance] = await waitForHealthyInstances(registry, 'demo-web', { timeoutMs: 10_000 });
  t.truthy(instance);
  t.is(instanceStatus(instance!), 'passing');
  t.regex(instance!.checks[0]!.output, /200 OK/);
  const [alloc] = await driver.listAllocations({ jobId: 'demo-web' });
  t.is(alloc!.status, 'running');
  t.is(instance!.port, alloc!.ports[0]!.value);
  const env = (await (await fetch(`http://127.0.0.1:${instance!.port}/env`)).json()) as Record<string, string>;
  t.is(env.PORT, String(instance!.port));
  t.is(env.SVC_PORT_HTTP, String(instance!.port));
  t.is(env.GREETING, 'hi');
  t.is(env.SVC_ALLOC_ID, alloc!.id);
  t.is(env.SVC_SECRETS_DIR, path.join(dataDir, 'allocs', alloc!.id, 'secrets'));
  // As root the folder is the platform's, readable by the app's group (its files are the app user's); otherwise private.
  t.is(fs.statSync(env.SVC_SECRETS_DIR!).mode & 0o777, process.getuid!() === 0 ? 0o750 : 0o700);
});

test('a killed service process is restarted by the local driver and the restart is counted', async (t) => {
  const { driver, registry, appDir } = await openDriver(t, { 'server.mjs': SERVER_JS });
  await driver.submitJob(serviceJob('demo-web', serviceGroup({ command: `${node} server.mjs`, workdir: appDir })));
  await waitForHealthyInstances(registry, 'demo-web', { timeoutMs: 10_000 });
  const [before] = await driver.listAllocations({ jobId: 'demo-web' });
  const pid = before!.task.pid!;
  process.kill(pid, 'SIGKILL');
  const [after] = await waitForAllocations(
    driver,
    (a) => a.length === 1 && a[0]!.task.restarts === 1 && a[0]!.task.state === 'running',
    {
      filter: { jobId: 'demo-web' },
      timeoutMs: 10_000,
    },
  );
  t.not(after!.task.pid, pid);
  t.is(after!.id, before!.id);
  t.true(after!.task.events.some((e) => e.type === 'Restarting'));
  t.true(after!.task.events.some((e) => e.type === 'Terminated' && /SIGKILL/.test(e.message)));
  await waitForHealthyInstances(registry, 'demo-web', { timeoutMs: 10_000 });
});

test('a task group scales from 1 to 3 to 0 to 1 without restarting the allocations it keeps', async (t) => {
  const { driver, registry, appDir } = await openDriver(t, { 'server.mjs': SERVER_JS });
  const job = (count: number) =>
    serviceJob('demo-web', serviceGroup({ command: [node, 'server.mjs'], workdir: appDir, count }));
  await driver.submitJob(job(1));
  const [first] = await waitForAllocations(driver, running(1), { filter: { jobId: 'demo-web' } });

  const up = await driver.submitJob(job(3));
  t.deepEqual(up.scaled, ['web']);
  t.deepEqual(up.rolled, []);
  const three = await waitForAllocations(driver, running(3), { filter: { jobId: 'demo-web' } });
  t.true(three.some((a) => a.id === first!.id && a.task.pid === first!.task.pid && a.task.restarts === 0));
  t.deepEqual([...new Set(three.map((a) => a.ports[0]!.value))].length, 3);
  await waitForHealthyInstances(registry, 'demo-web', { count: 3, timeoutMs: 10_000 });

  // A scale-in withdraws the allocations from the registry at once (no new request picks them),
  // then drains them after the withdraw delay, as a replaced allocation is (ADR 0160).
  t.is(await driver.scale('demo-web', 'web', 0), 'updated');
  t.deepEqual(await registry.instances('demo-web'), []);
  const stopping = await driver.listAllocations({ jobId: 'demo-web' });
  t.true(stopping.every((a) => a.desiredStatus === 'stop'));
  await waitForAllocations(driver, (a) => a.length === 0, { filter: { jobId: 'demo-web' } });
  for (const a of three) t.false(isProcessAlive(a.task.pid!, undefined));

  await driver.scale('demo-web', 'web', 1);
  await waitForAllocations(driver, running(1), { filter: { jobId: 'demo-web' } });
  await waitForHealthyInstances(registry, 'demo-web', { timeoutMs: 10_000 });
});

test('submitting an identical job reports unchanged and a changed env rolls the allocations', async (t) => {
  const { driver, appDir } = await openDriver(t, { 'server.mjs': SERVER_JS });
  const job = (value: string) =>
    serviceJob('demo-web', serviceGroup({ command: [node, 'server.mjs'], workdir: appDir, env: { VALUE: value } }));
  await driver.submitJob(job('a'));
  const [first] = await waitForAllocations(driver, running(1), { filter: { jobId: 'demo-web' } });
  const same = await driver.submitJob(job('a'));
  t.is(same.outcome, 'unchanged');
  t.is(same.jobVersion, 1);
  const changed = await driver.submitJob(job('b'));
  t.is(changed.outcome, 'updated');
  t.is(changed.jobVersion, 2);
  t.deepEqual(changed.rolled, ['web']);
  const [second] = await waitForAllocations(driver, running(1), { filter: { jobId: 'demo-web' } });
  t.not(second!.id, first!.id);
  t.is(second!.jobVersion, 2);
  const old = await driver.getAllocation(first!.id);
  t.is(old!.status, 'complete');
  t.is(old!.desiredStatus, 'stop');
});

test('a template file is written with its mode and a change of its contents restarts the task in place (a group that cannot overlap)', async (t) => {
  const { driver, appDir, dataDir } = await openDriver(t, { 'server.mjs': SERVER_JS });
  const job = (secret: string) =>
    serviceJob(
      'demo-web',
      serviceGroup({
        command: [node, 'server.mjs'],
        workdir: appDir,
        check: false,
        files: [{ destination: 'secrets/token', contents: secret }],
      }),
    );
  await driver.submitJob(job('one'));
  const [first] = await waitForAllocations(driver, running(1), { filter: { jobId: 'demo-web' } });
  const file = path.join(dataDir, 'allocs', first!.id, 'secrets', 'token');
  t.is(fs.readFileSync(file, 'utf8'), 'one');
  t.is(fs.statSync(file).mode & 0o777, 0o400);
  const result = await driver.submitJob(job('two'));
  t.deepEqual(result.restarted, ['web']);
  t.deepEqual(result.rolled, []);
  const [after] = await waitForAllocations(
    driver,
    (a) => a.length === 1 && a[0]!.task.restarts === 1 && a[0]!.task.state === 'running',
    {
      filter: { jobId: 'demo-web' },
    },
  );
  t.is(after!.id, first!.id);
  t.not(after!.task.pid, first!.task.pid);
  t.is(fs.readFileSync(file, 'utf8'), 'two');
  t.is(fs.statSync(file).mode & 0o777, 0o400);
});

test('a job with a container image is refused by the local driver with a clear message', async (t) => {
  const { driver } = await openDriver(t);
  const group = serviceGroup({ command: 'x', workdir: '/tmp' });
  const job = serviceJob('demo-img', {
    ...group,
    task: { ...group.task, command: undefined, image: 'ghcr.io/acme/demo@sha256:abc' },
  });
  await t.throwsAsync(driver.submitJob(job), {
    message: /is a container image, and this local driver runs no containers/,
  });
});

test('a crashing service is restarted with exponentially growing delays capped at the maximum', async (t) => {
  const { driver, appDir } = await openDriver(t);
  await driver.submitJob(
    serviceJob(
      'demo-crash',
      serviceGroup({ name: 'crash', command: 'echo starting; exit 3', workdir: appDir, check: false }),
    ),
  );
  const [alloc] = await waitForAllocations(driver, (a) => a.length === 1 && a[0]!.task.restarts >= 5, {
    filter: { jobId: 'demo-crash' },
    timeoutMs: 10_000,
  });
  const delays = alloc!.task.events.filter((e) => e.type === 'Restarting').map((e) => /in (\d+)ms/.exec(e.message)![1]);
  t.deepEqual(delays.slice(0, 5), ['50', '100', '200', '400', '400']);
  t.true(alloc!.task.events.some((e) => e.type === 'Terminated' && e.message === 'Exit Code: 3'));
  t.is(alloc!.status, 'running');
  t.false(alloc!.task.oomKilled);
});

test('a service exceeding its restart attempts fails its allocation', async (t) => {
  const { driver, appDir } = await openDriver(t);
  const group = serviceGroup({ name: 'crash', command: 'exit 2', workdir: appDir, check: false });
  const restart = {
    initialDelay: milliseconds(20),
    maxDelay: milliseconds(40),
    resetAfter: milliseconds(5000),
    attempts: 2,
    interval: milliseconds(60_000),
  };
  await driver.submitJob(serviceJob('demo-crash', { ...group, restart }));
  const [alloc] = await waitForAllocations(driver, (a) => a.length === 1 && a[0]!.status === 'failed', {
    filter: { jobId: 'demo-crash', includeTerminal: true },
    timeoutMs: 10_000,
  });
  t.is(alloc!.task.restarts, 2);
  t.true(alloc!.task.failed);
  t.regex(alloc!.statusDescription!, /^Exit Code: 2; exceeded 2 restart attempts within 60000ms$/);
});

test('a health endpoint answering 429 reads warning and one answering 500 reads critical with the check output', async (t) => {
  const { driver, registry, appDir } = await openDriver(t, {
    'status.mjs': `import http from 'node:http';
http.createServer((req, res) => { res.statusCode = Number(process.env.CODE); res.end('status ' + process.env.CODE); }).listen(Number(process.env.PORT), '127.0.0.1');`,
  });
  const job = (code: string) =>
    serviceJob(
      `demo-${code}`,
      serviceGroup({
        name: 'web',
        serviceName: `demo-${code}`,
        command: [process.execPath, 'status.mjs'],
        workdir: appDir,
        env: { CODE: code },
      }),
    );
  await driver.submitJob(job('429'));
  await driver.submitJob(job('500'));
  const [warning] = await waitForHealthyInstances(registry, 'demo-429', { status: 'warning', timeoutMs: 10_000 });
  t.regex(warning!.checks[0]!.output, /: 429 Too Many Requests Output: status 429$/);
  const critical = await waitForCheckOutput(registry, 'demo-500', / 500 /);
  t.is(critical.checks[0]!.status, 'critical');
  t.regex(critical.checks[0]!.output, /: 500 Internal Server Error Output: status 500$/);
});

/** Resolves with the first instance of `service` whose check output matches, awaiting registry changes. */
function waitForCheckOutput(registry: LocalRegistry, service: string, pattern: RegExp): Promise<ServiceInstance> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`${service}: no check output matched ${pattern}`));
    }, 10_000);
    const off = registry.watch((change) => {
      if (change.service === service && change.instance && pattern.test(change.instance.checks[0]?.output ?? '')) {
        clearTimeout(timer);
        off();
        resolve(change.instance);
      }
    });
    void registry.instances(service).then((list) => {
      const found = list.find((i) => pattern.test(i.checks[0]?.output ?? ''));
      if (found) {
        clearTimeout(timer);
        off();
        resolve(found);
      }
    });
  });
}
