// tier: quick
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { metricsServiceName, processServiceName, waitForHealthyInstances } from '../../../domain/registry/index.js';
import { milliseconds, waitForAllocations, type JobSpec } from '../../../domain/scheduler/index.js';
import { LocalRegistry } from '../../../platform/local-registry/index.js';
import { LocalScheduler, pickFreePort } from '../../../platform/local-scheduler/index.js';
import { SERVER_JS, serviceGroup, stopEverything } from './fixtures.js';
import { tempDir } from '../../helpers/temp-dir.js';

test('a job with a static port, a host volume, a metrics companion and placement fields runs with all of them', async (t) => {
  const root = tempDir(t, 'svc-placement-');
  const appDir = path.join(root, 'app');
  const volumeDir = path.join(root, 'volume');
  fs.mkdirSync(appDir);
  fs.mkdirSync(volumeDir);
  fs.writeFileSync(path.join(appDir, 'server.mjs'), SERVER_JS);
  const registry = new LocalRegistry();
  const driver = await LocalScheduler.open({
    dataDir: path.join(root, 'data'),
    registry,
    monitorInterval: milliseconds(40),
    hostVolumes: { uploads: { path: volumeDir } },
  });
  t.teardown(() => stopEverything(driver));
  const staticPort = await pickFreePort('127.0.0.1', new Set());
  const base = serviceGroup({
    command: [process.execPath, 'server.mjs'],
    workdir: appDir,
    staticPort,
    serviceName: processServiceName('shop', 'web'),
  });
  const job: JobSpec = {
    id: 'shop-web',
    app: 'shop',
    type: 'service',
    region: 'eu',
    datacenters: ['dc2'],
    nodePool: 'edge',
    taskGroups: [
      {
        ...base,
        ports: [...base.ports, { label: 'metrics' }],
        services: [
          ...base.services,
          { name: metricsServiceName('shop', 'web'), portLabel: 'metrics', tags: ['metrics'] },
        ],
        task: { ...base.task, volumes: [{ volume: 'uploads', destination: '/data/uploads', readOnly: false }] },
      },
    ],
  };
  await driver.submitJob(job);
  const [web] = await waitForHealthyInstances(registry, 'shop-web', { timeoutMs: 10_000 });
  t.is(web!.port, staticPort);
  const [metrics] = await waitForHealthyInstances(registry, 'shop-web-metrics', { timeoutMs: 10_000 });
  t.deepEqual(metrics!.tags, ['metrics']);
  const [alloc] = await driver.listAllocations({ jobId: 'shop-web' });
  t.like(alloc, { region: 'eu', datacenter: 'dc2', nodePool: 'edge' });
  const env = (await (await fetch(`http://127.0.0.1:${staticPort}/env`)).json()) as Record<string, string>;
  t.is(env.SVC_PORT_METRICS, String(metrics!.port));
  // The volume is a bind mount in the task's own mount namespace (root), never a symlink; else the host folder itself.
  const mounted = path.join(env.SVC_ALLOC_DIR!, 'volumes', 'uploads');
  if (process.getuid!() === 0) {
    t.is(env.SVC_VOLUME_UPLOADS, mounted);
    t.true(fs.lstatSync(mounted).isDirectory());
    const mountinfo = fs.readFileSync(`/proc/${alloc!.task.pid!}/mountinfo`, 'utf8');
    t.true(
      mountinfo.split('\n').some((line) => line.split(' ')[4] === mounted),
      `no mount at ${mounted}`,
    );
    t.false(fs.readFileSync('/proc/self/mountinfo', 'utf8').includes(mounted));
  } else {
    t.is(env.SVC_VOLUME_UPLOADS, volumeDir);
  }

  const clash: JobSpec = { ...job, id: 'other-web' };
  await t.throwsAsync(driver.submitJob(clash), {
    message: new RegExp(`static port ${staticPort} is held by allocation`),
  });
});

test('a batch job without parameters runs its allocations to completion once', async (t) => {
  const root = tempDir(t, 'svc-batch-');
  const registry = new LocalRegistry();
  const driver = await LocalScheduler.open({
    dataDir: path.join(root, 'data'),
    registry,
    monitorInterval: milliseconds(40),
  });
  t.teardown(() => stopEverything(driver));
  const job: JobSpec = {
    id: 'demo-migrate',
    app: 'demo',
    type: 'batch',
    taskGroups: [
      {
        name: 'migrate',
        count: 2,
        task: {
          name: 'migrate',
          command: 'echo "$SVC_ALLOC_INDEX" >> "$HOME/runs.txt"',
          env: {},
          resources: { cpuMhz: 100, memoryMb: 64 },
        },
        ports: [],
        services: [],
        drain: { signal: 'SIGTERM', timeout: milliseconds(200) },
      },
    ],
  };
  await driver.submitJob(job);
  const done = await waitForAllocations(driver, (a) => a.length === 2 && a.every((x) => x.status === 'complete'), {
    filter: { jobId: 'demo-migrate', includeTerminal: true },
  });
  t.true(done.every((a) => a.task.exitCode === 0 && !a.task.failed));
  t.deepEqual(
    fs
      .readFileSync(path.join(root, 'data', 'app-data', 'demo', 'runs.txt'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .sort(),
    ['0', '1'],
  );
  t.is((await driver.submitJob(job)).outcome, 'unchanged');
  t.is((await driver.listAllocations({ jobId: 'demo-migrate', includeTerminal: true })).length, 2);
});
