// tier: full
/**
 * The managed registry (ADR 0220) and its docker.io mirror (ADR 0221, 0222), against the real
 * Distribution registry and podman: a host whose engine storage lacks a base image resolves an
 * unmodified `docker.io/library/…` name through the mirror; the registry is adopted by the next
 * start and restarted when it dies. And the engine's absence is said aloud, never silent.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import test from 'ava';
import { ManagedRegistry } from '../../../platform/containers/managed-registry.js';
import { mirrorBaseImages } from '../../../platform/containers/base-image-mirror.js';
import { writeRegistriesConf } from '../../../platform/containers/containers-config.js';
import { Podman } from '../../../platform/containers/podman.js';
import { silentLogger } from '../../../platform/logger.js';
import { startContainers } from '../../../wiring/control/containers.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { assertBaseImages, RUBY_BASE } from '../../helpers/containers.js';
import { testConfig } from '../../helpers/test-config.js';

const run = promisify(execFile);

test('a base image absent from an engine’s storage resolves by its docker.io name through the registry’s mirror', async (t) => {
  assertBaseImages();
  const dataDir = path.join(tempDir(t), 'data');
  const registry = await ManagedRegistry.open({ dataDir, logger: silentLogger() });
  t.teardown(() => registry.close());
  const registriesConf = writeRegistriesConf(dataDir, registry.host);
  const mirrored = await mirrorBaseImages(new Podman({ registriesConf }), registry.host);
  const ruby = mirrored.find((m) => m.reference === RUBY_BASE);
  t.is(ruby?.outcome, 'pushed', JSON.stringify(mirrored));
  t.is(ruby?.mirrored, `${registry.host}/mirror/library/ruby:3.1-slim-bookworm`);
  // A second pass finds the very image there and pushes nothing.
  t.true((await mirrorBaseImages(new Podman({ registriesConf }), registry.host)).every((m) => m.outcome === 'present'));

  // Another engine storage (another host's, as far as podman knows) pulls the unmodified name.
  const storage = tempDir(t);
  const env = { ...process.env, CONTAINERS_REGISTRIES_CONF: registriesConf };
  const other = ['--root', path.join(storage, 'root'), '--runroot', path.join(storage, 'run'), '--runtime', 'runc'];
  // Its images go with it (never `system reset`: that clears /run/libpod, which every podman on the host shares).
  t.teardown(() => run('podman', [...other, 'rmi', '--all', '--force'], { env }).catch(() => undefined));
  await run('podman', [...other, 'pull', '--quiet', 'ruby:3.1-slim-bookworm'], { env });
  const { stdout } = await run(
    'podman',
    [...other, 'image', 'inspect', '--format', '{{index .Config.Labels "io.svc.base-image"}}', RUBY_BASE],
    { env },
  );
  t.is(stdout.trim(), RUBY_BASE);
});

test('the registry is adopted by the next start, restarted when it dies, and keeps its port', async (t) => {
  const dataDir = path.join(tempDir(t), 'data');
  const first = await ManagedRegistry.open({ dataDir, logger: silentLogger() });
  const pid = first.pid;
  first.release();
  const second = await ManagedRegistry.open({ dataDir, logger: silentLogger() });
  t.teardown(() => second.close());
  t.is(second.pid, pid, 'adopted, not started again');
  t.is(second.port, first.port);
  process.kill(pid, 'SIGKILL');
  // Restarted by its supervisor: answering again on the same port, under another pid.
  for (let i = 0; i < 200 && !(second.pid !== 0 && second.pid !== pid && (await second.answers())); i += 1)
    await new Promise((resolve) => setTimeout(resolve, 50));
  t.not(second.pid, pid);
  t.true(await second.answers());
  t.true(fs.statSync(path.join(dataDir, 'registry', 'storage')).isDirectory());
});

test('without a usable engine, auto says why apps run as host processes, and podman refuses to start', async (t) => {
  const root = tempDir(t);
  const auto = await startContainers(
    { ...testConfig(t, { SVC_CONTAINER_RUNTIME: 'auto', SVC_CONTAINER_OCI_RUNTIME: 'no-such-runtime' }) },
    path.join(root, 'a'),
    silentLogger(),
  );
  t.is(auto.runtime, undefined);
  t.is(auto.images, undefined);
  t.regex(auto.reason ?? '', /no-such-runtime is not installed.*SVC_CONTAINER_OCI_RUNTIME/);
  await t.throwsAsync(
    startContainers(
      testConfig(t, { SVC_CONTAINER_RUNTIME: 'podman', SVC_CONTAINER_OCI_RUNTIME: 'no-such-runtime' }),
      path.join(root, 'b'),
      silentLogger(),
    ),
    { message: /SVC_CONTAINER_RUNTIME=podman, but containers cannot run here: .*no-such-runtime/ },
  );
  const native = await startContainers(
    testConfig(t, { SVC_CONTAINER_RUNTIME: 'native' }),
    path.join(root, 'c'),
    silentLogger(),
  );
  t.is(native.reason, 'SVC_CONTAINER_RUNTIME=native');
  t.false(fs.existsSync(path.join(root, 'c', 'registry')));
});
