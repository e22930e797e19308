// tier: full
/**
 * A new local driver's sweep of processes a previous one spawned but never recorded (ADR 0219), with
 * real podman: an unrecorded `podman run` client is killed and its container removed, while the
 * processes inside a container, which carry the app's variables too, are never taken for leftovers.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import { LocalRegistry } from '../../../platform/local-registry/index.js';
import { isProcessAlive, LocalScheduler } from '../../../platform/local-scheduler/index.js';
import { Podman } from '../../../platform/containers/podman.js';
import { NODE_BASE, assertBaseImages, containerState } from '../../helpers/containers.js';
import { silentLogger } from '../../../platform/logger.js';

const RUNTIME = {
  podman: new Podman(),
  network: 'host' as const,
  limits: { nofile: 1024, nproc: 1024 },
};

/** Starts a detached `podman run` of a sleeping container named `svc-<id>` with an allocation's variables. */
function startContainer(id: string, dataDir: string): { pid: number; name: string } {
  const name = `svc-${id}`;
  const env = { ...process.env, SVC_ALLOC_ID: id, SVC_ALLOC_DIR: path.join(dataDir, 'allocs', id) };
  const child = spawn(
    'podman',
    [
      ...RUNTIME.podman.globalArgs(),
      'run',
      '--name',
      name,
      '--replace',
      '--ulimit',
      'nofile=1024:1024',
      '--ulimit',
      'nproc=1024:1024',
      '--env',
      'SVC_ALLOC_ID',
      '--env',
      'SVC_ALLOC_DIR',
      '--entrypoint',
      'sleep',
      NODE_BASE,
      '300',
    ],
    { detached: true, stdio: 'ignore', env },
  );
  child.unref();
  return { pid: child.pid!, name };
}

async function running(name: string): Promise<boolean> {
  const result = await RUNTIME.podman.run(['inspect', '--format', '{{.State.Running}}', name]);
  return result.code === 0 && result.stdout.trim() === 'true';
}

async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

test('a new driver kills an unrecorded podman client, removes its container, and leaves other containers alone', async (t) => {
  t.timeout(120_000);
  assertBaseImages();
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-unrecorded-containers-'));
  const dataDir = path.join(root, 'data');
  fs.mkdirSync(path.join(dataDir, 'scheduler'), { recursive: true });
  const suffix = path
    .basename(root)
    .slice(-6)
    .toLowerCase()
    .replace(/[^a-z0-9]/g, 'x');
  const orphan = startContainer(`gone-${suffix}`, dataDir);
  // A container of another data folder: neither its client nor its processes are this driver's.
  const stranger = startContainer(`other-${suffix}`, path.join(root, 'elsewhere'));
  t.teardown(async () => {
    await RUNTIME.podman.run(['rm', '--force', '--ignore', '--time', '0', orphan.name, stranger.name]);
    fs.rmSync(root, { recursive: true, force: true });
  });
  await until('both containers to run', async () => (await running(orphan.name)) && (await running(stranger.name)));
  const strangerState = containerState(stranger.name);

  const driver = await LocalScheduler.open({
    dataDir,
    registry: new LocalRegistry(),
    logger: silentLogger(),
    containers: RUNTIME,
  });
  t.teardown(() => driver.close());
  await until('the orphan client to end', () => !isProcessAlive(orphan.pid, undefined));
  const gone = await RUNTIME.podman.run(['container', 'exists', orphan.name]);
  t.is(gone.code, 1, 'the unrecorded container was removed');
  t.true(isProcessAlive(stranger.pid, undefined), "another data folder's client is left alone");
  t.is(containerState(stranger.name), strangerState, "another data folder's container was not restarted");
});
