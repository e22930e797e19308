// tier: full
/**
 * Containers prepared ahead of their start (ADR 0228), on the local driver with the real podman:
 * a group scaled to zero has its next container created, and the scale-up starts that one; a group
 * on a fixed host port has its replacement created while the old container runs, and placed as soon
 * as the old container's processes are gone, before its client has cleaned up; a closed driver
 * leaves nothing prepared, and a new driver removes what a crashed one prepared.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import test, { type ExecutionContext } from 'ava';
import type { Allocation, JobSpec } from '../../../domain/scheduler/index.js';
import { instanceStatus } from '../../../domain/registry/index.js';
import type { LocalRegistry } from '../../../platform/local-registry/index.js';
import type { LocalScheduler } from '../../../platform/local-scheduler/index.js';
import { Podman } from '../../../platform/containers/podman.js';
import { silentLogger } from '../../../platform/logger.js';
import { NODE_BASE, assertBaseImages, containersOf } from '../../helpers/containers.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { freePort } from '../../routing/wake-harness.js';
import { reopenDriver, serviceGroup } from '../local-scheduler/fixtures.js';
import { waitForChange } from '../../helpers/wait-for.js';

const RUNTIME = { podman: new Podman(), network: 'host' as const, limits: { nofile: 1024, nproc: 1024 } };

const SERVER = `const http = require('node:http');
const server = http.createServer((req, res) => res.end(process.env.VERSION ?? ''));
server.listen(Number(process.env.PORT), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));`;

function openDriver(
  t: ExecutionContext,
  dataDir: string,
): Promise<{ driver: LocalScheduler; registry: LocalRegistry }> {
  return reopenDriver(t, dataDir, { logger: silentLogger(), containers: RUNTIME });
}

/** A service job of app `app` whose one process runs SERVER in the Node base image. */
function job(app: string, options: { count: number; version: string; staticPort?: number }): JobSpec {
  const group = serviceGroup({
    command: ['node', '-e', SERVER],
    workdir: '/',
    count: options.count,
    env: { VERSION: options.version },
    ...(options.staticPort !== undefined ? { staticPort: options.staticPort } : {}),
  });
  return { id: app, app, type: 'service', taskGroups: [{ ...group, task: { ...group.task, image: NODE_BASE } }] };
}

/** The allocation of `app` that runs and passes its check, once there is one other than `not`. */
function running(driver: LocalScheduler, registry: LocalRegistry, app: string, not?: string): Promise<Allocation> {
  return waitForChange(
    [(listener) => driver.watch(() => listener()), (listener) => registry.watch(() => listener())],
    async () => {
      const live = await driver.listAllocations({ app });
      const passing = new Set(
        (await registry.instances('demo-web'))
          .filter((i) => instanceStatus(i) === 'passing')
          .map((i) => i.allocationId),
      );
      return live.find((a) => a.id !== not && a.status === 'running' && a.desiredStatus === 'run' && passing.has(a.id));
    },
    { what: `a passing allocation of ${app}`, timeoutMs: 60_000 },
  );
}

function suffix(t: ExecutionContext): string {
  return `${process.pid}-${t.title.length}`;
}

test('a group scaled to zero has its next container created, and the scale-up starts it; a closed driver leaves none, a new one removes what a crashed one left', async (t) => {
  t.timeout(120_000);
  assertBaseImages();
  const app = `prep-zero-${suffix(t)}`;
  const dataDir = path.join(tempDir(t, 'svc-prepared-'), 'data');
  let { driver, registry } = await openDriver(t, dataDir);
  await driver.submitJob(job(app, { count: 0, version: 'v1' }));
  await driver.preparedSettled();
  const prepared = containersOf(app, 'created');
  t.is(prepared.length, 1, 'one container created for the next start');
  t.deepEqual(containersOf(app), prepared, 'and none started');

  await driver.scale(app, 'web', 1);
  const alloc = await running(driver, registry, app);
  t.deepEqual(prepared, [`svc-${alloc.id}`], 'the scale-up started the prepared container');
  t.true(alloc.task.events.some((e) => e.type === 'Started' && e.message.includes('the prepared container')));
  const port = alloc.ports[0]!.value;
  t.is(await (await fetch(`http://127.0.0.1:${port}/`)).text(), 'v1');

  // Back to zero: the next one is prepared; a driver that closes removes it.
  await driver.scale(app, 'web', 0);
  await driver.preparedSettled();
  t.is(containersOf(app, 'created').length, 1);
  await driver.close();
  t.deepEqual(containersOf(app, 'created'), [], 'a closed driver leaves no prepared container');

  // A driver that crashed leaves its prepared container: the next driver on its data folder removes
  // it, then prepares its own. One that another platform of the host prepared is left alone.
  const prepare = (name: string, allocations: string) => {
    execFileSync('podman', [
      ...RUNTIME.podman.globalArgs(),
      'create',
      '--name',
      name,
      '--label',
      `io.svc.app=${app}`,
      '--label',
      'io.svc.prepared=true',
      '--label',
      `io.svc.prepared-by=${allocations}`,
      '--label',
      // The allocation a prepared container is for: its name is `svc-<allocation>`.
      `io.svc.allocation=${name.replace(/^svc-/, '')}`,
      NODE_BASE,
      'true',
    ]);
    t.teardown(() => void RUNTIME.podman.run(['rm', '--force', '--ignore', name]));
  };
  const orphan = `svc-orphan-${suffix(t)}`;
  const others = `svc-others-${suffix(t)}`;
  prepare(orphan, path.join(dataDir, 'allocs'));
  prepare(others, path.join(dataDir, 'another-platform', 'allocs'));
  ({ driver, registry } = await openDriver(t, dataDir));
  await driver.preparedSettled();
  const after = containersOf(app, 'created');
  t.false(after.includes(orphan), "the crashed driver's prepared container was removed");
  t.true(after.includes(others), "another platform's prepared container is left alone");
  t.is(after.filter((name) => name !== others).length, 1, 'the group at zero has its next container prepared again');
});

test('a fixed host port: the replacement is created while the old container runs, and placed once its processes are gone, before its client has cleaned up', async (t) => {
  t.timeout(120_000);
  assertBaseImages();
  const app = `prep-port-${suffix(t)}`;
  const hostPort = await freePort();
  const dataDir = path.join(tempDir(t, 'svc-prepared-'), 'data');
  const { driver, registry } = await openDriver(t, dataDir);
  await driver.submitJob(job(app, { count: 1, version: 'v1', staticPort: hostPort }));
  const old = await running(driver, registry, app);
  t.is(await (await fetch(`http://127.0.0.1:${hostPort}/`)).text(), 'v1');

  await driver.submitJob(job(app, { count: 1, version: 'v2', staticPort: hostPort }));
  const next = await running(driver, registry, app, old.id);
  t.is(await (await fetch(`http://127.0.0.1:${hostPort}/`)).text(), 'v2');
  t.true(next.task.events.some((e) => e.type === 'Started' && e.message.includes('the prepared container')));
  // The old container's client may still be cleaning up while the replacement serves: its end is awaited.
  const killed = await waitForChange(
    [(listener) => driver.watch(() => listener())],
    async () => (await driver.getAllocation(old.id))?.task.events.find((e) => e.type === 'Killed'),
    { what: `the end of ${old.id}`, timeoutMs: 30_000 },
  );
  const received = next.task.events.find((e) => e.type === 'Received')!;
  t.true(
    Date.parse(received.at) < Date.parse(killed.at),
    `placed at ${received.at}, before the old container's client ended at ${killed.at}`,
  );
});
