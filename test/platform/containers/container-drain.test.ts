// tier: full
/**
 * The drain signal of a container reaches every process in it, as it reaches a host task's whole
 * tree (ADR 0219): a command that runs under a shell (`sh -c`, the container's first process, which
 * ignores SIGTERM) still has its program drained by the signal instead of killed at the timeout.
 */
import path from 'node:path';
import test from 'ava';
import { instanceStatus } from '../../../domain/registry/index.js';
import type { JobSpec } from '../../../domain/scheduler/index.js';
import { Podman } from '../../../platform/containers/podman.js';
import { silentLogger } from '../../../platform/logger.js';
import { NODE_BASE, assertBaseImages, containersOf } from '../../helpers/containers.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { waitForChange } from '../../helpers/wait-for.js';
import { reopenDriver, serviceGroup } from '../local-scheduler/fixtures.js';

const RUNTIME = { podman: new Podman(), network: 'host' as const, limits: { nofile: 1024, nproc: 1024 } };

// Two commands: the shell stays the container's first process, node its child.
const COMMAND = `node -e "require('http').createServer((q, s) => s.end('ok')).listen(Number(process.env.PORT), '127.0.0.1'); process.on('SIGTERM', () => { console.log('drained'); process.exit(0); })"; echo ended`;

test('a container whose command runs under a shell drains on the signal, not at the timeout', async (t) => {
  t.timeout(90_000);
  assertBaseImages();
  const app = `drain-${process.pid}`;
  const { driver, registry } = await reopenDriver(t, path.join(tempDir(t, 'svc-container-drain-'), 'data'), {
    logger: silentLogger(),
    containers: RUNTIME,
  });
  const group = serviceGroup({ command: COMMAND, workdir: '/', drainMs: 30_000 });
  const job: JobSpec = {
    id: app,
    app,
    type: 'service',
    taskGroups: [{ ...group, task: { ...group.task, image: NODE_BASE } }],
  };
  await driver.submitJob(job);
  const alloc = await waitForChange(
    [(listener) => driver.watch(() => listener()), (listener) => registry.watch(() => listener())],
    async () => {
      const [a] = await driver.listAllocations({ app });
      const passing = (await registry.instances('demo-web')).some(
        (i) => i.allocationId === a?.id && instanceStatus(i) === 'passing',
      );
      return a?.status === 'running' && passing ? a : undefined;
    },
    { what: 'the container to pass its check', timeoutMs: 60_000 },
  );
  const started = performance.now();
  await driver.stopJob(app, { purge: false });
  const stoppedMs = performance.now() - started;
  const stopped = (await driver.getAllocation(alloc.id))!;
  const killed = stopped.task.events.find((e) => e.type === 'Killed');
  t.is(killed?.message, 'Task exited after SIGTERM', JSON.stringify(stopped.task.events));
  t.true(stoppedMs < 30_000, `stopped in ${Math.round(stoppedMs)} ms`);
  t.deepEqual(containersOf(app), [], 'its container is removed');
});
