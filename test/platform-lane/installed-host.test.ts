// tier: full
/**
 * An installed host upgrades itself (ADR 0087): the real artifact installed by `svc install --root`
 * into a host tree, its API run the way the unit runs it (`<prefix>/current/svc serve`, the unit's
 * `Environment=` settings, restarted whenever it exits by a stand-in for systemd's `Restart=always`:
 * there is no systemd PID 1 here), then upgraded to another artifact with the host agent in `stop`
 * mode: it stages into `/opt/svc/releases`, swaps `/opt/svc/current`, only stops the API, and the
 * supervisor starts the new release; and a release that fails outside its candidate check is rolled
 * back the same way.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import { commitApp, initAppsRepo } from '../pipeline/pipeline-fixture.js';
import { prepareHostRoot } from '../helpers/host-root.js';
import { repackedArtifact, sharedArtifact, type SharedArtifact } from '../helpers/shared-artifact.js';
import { HOST_PATHS, renderUnit } from '../../domain/host-install/index.js';
import { freePort, readApiProcess } from '../../platform/platform-lane/index.js';
import {
  api,
  appAddresses,
  currentRelease,
  deployAndWait,
  laneEnvironment,
  queueLane,
  requestLoop,
  stopLanePlatform,
  tail,
  waitForLane,
  waitUntil,
  type LanePlatform,
} from './lane-harness.js';

/** The settings the installed unit sets with `Environment=`. */
function unitEnvironment(prefix: string): Record<string, string> {
  const settings: Record<string, string> = {};
  for (const match of renderUnit().matchAll(/^Environment=([A-Z_]+)=(.*)$/gm)) settings[match[1]!] = match[2]!;
  // The unit's paths are the host's; here the host is a tree under a temporary folder.
  if (settings.SVC_PLATFORM_DIR === HOST_PATHS.prefix) settings.SVC_PLATFORM_DIR = prefix;
  return settings;
}

/**
 * A stand-in for systemd running the unit with `Restart=always`: runs `command` and starts it again
 * whenever it exits, after `restartMs` (the unit's RestartSec, shortened), until stopped.
 */
function supervise(
  command: string,
  args: readonly string[],
  options: { cwd: string; env: Record<string, string>; log: string; restartMs: number },
): { pids: number[]; stop(): Promise<void> } {
  let stopped = false;
  let child: ChildProcess | undefined;
  let timer: NodeJS.Timeout | undefined;
  const pids: number[] = [];
  const start = (): void => {
    const log = fs.openSync(options.log, 'a');
    child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', log, log] });
    fs.closeSync(log);
    if (child.pid !== undefined) pids.push(child.pid);
    child.once('exit', () => {
      child = undefined;
      if (!stopped) timer = setTimeout(start, options.restartMs);
    });
  };
  start();
  return {
    pids,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      const running = child;
      if (running && running.exitCode === null && running.signalCode === null) {
        await new Promise((resolve) => {
          running.once('exit', resolve);
          running.kill('SIGTERM');
        });
      }
    },
  };
}

let artifact: SharedArtifact;
let platform: LanePlatform;
let supervisor: ReturnType<typeof supervise>;
let installed: string;
let addresses: string[] = [];
const teardowns: (() => Promise<void> | void)[] = [];

test.after.always(async () => {
  for (const fn of teardowns.reverse()) await fn();
});

test.before(async (t) => {
  t.timeout(600_000);
  artifact = await sharedArtifact();
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-lane-installed-'));
  // Apps run as their own users (ADR 0047): they pass through the folders above their releases.
  fs.chmodSync(root, 0o711);
  teardowns.push(() => fs.rmSync(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }));
  execFileSync('tar', ['-xzf', artifact.archive, '-C', root]);
  const unpacked = path.join(root, path.basename(artifact.archive, '.tar.gz'));
  const host = path.join(root, 'host');
  prepareHostRoot(host);
  execFileSync(path.join(unpacked, 'svc'), ['install', '--root', host], { cwd: root, stdio: 'ignore' });
  const prefix = path.join(host, HOST_PATHS.prefix);
  installed = path.join(prefix, 'releases', artifact.release.version);
  // The data folder stays outside the tree: its `svc` user is not one of this host's, and apps must enter it.
  const dataDir = path.join(root, 'data');
  const appsDir = path.join(root, 'apps');
  initAppsRepo({ appsDir } as never);
  commitApp(appsDir, 'alpha', { version: 'alpha' });
  const port = await freePort();
  // The unit's settings, then the test platform's folders, port and short timeouts over them.
  const env = laneEnvironment(
    { port, root, dataDir, appsDir },
    { SVC_UPGRADE_BOOT_TIMEOUT: '20s' },
    unitEnvironment(prefix),
  );
  t.is(env.SVC_AGENT_RESTART_MODE, 'stop');
  platform = {
    root,
    dataDir,
    appsDir,
    platformDir: prefix,
    url: `http://127.0.0.1:${port}`,
    env,
    api: () => readApiProcess(prefix),
  };
  teardowns.push(() => stopLanePlatform(platform));
  supervisor = supervise(path.join(prefix, 'current', 'svc'), ['serve', '--only', 'control'], {
    cwd: root,
    env,
    log: path.join(root, 'supervised.log'),
    restartMs: 500,
  });
  // Stopped first (teardowns run in reverse), so that nothing starts the API again while it is stopped.
  teardowns.push(() => supervisor.stop());
  await waitUntil(
    () => platform.api()?.pid === supervisor.pids[0],
    60_000,
    `the installed API to record itself; log: ${tail(path.join(root, 'supervised.log'))}`,
  );
  const op = await deployAndWait(platform, 'alpha');
  if (op.status !== 'succeeded') throw new Error(`deploy alpha ${op.status}: ${op.lastError}`);
  addresses = await appAddresses(platform, 'alpha');
});

const steps = (view: any): string[] => view.steps.map((s: any) => `${s.step} ${s.status}`);

test.serial(
  'An installed host upgrades itself to another artifact: the agent only stops the API and the supervisor starts current/svc serve from the new release',
  async (t) => {
    t.timeout(300_000);
    const second = await repackedArtifact(artifact, platform.root, new Date().toISOString());
    const before = platform.api()!;
    t.is(before.root, installed);
    const loop = requestLoop(addresses);
    const started = Date.now();
    const id = await queueLane(platform, 'upgrade', { source: second.archive });
    const view = await waitForLane(platform, id);
    const counts = await loop.stop();
    t.is(
      view.operation.status,
      'succeeded',
      `${JSON.stringify(view, null, 1)}; agent log: ${tail(path.join(platform.platformDir, 'agent.log'))}; supervised: ${tail(path.join(platform.root, 'supervised.log'))}`,
    );
    t.deepEqual(steps(view), [
      'stage succeeded',
      'verify skipped',
      'candidate succeeded',
      'drain succeeded',
      'promote succeeded',
      'restart succeeded',
      'postflight succeeded',
    ]);
    t.log(
      `installed host upgrade: ${((Date.now() - started) / 1000).toFixed(1)} s; requests to the app: ${counts.ok} answered, ${counts.failed} failed`,
    );
    t.is(counts.failed, 0, counts.errors.slice(0, 5).join('; '));
    // The first release of the lane is the installed one, staged beside it (the install's folder has no release.json).
    const releases = path.join(platform.platformDir, 'releases');
    t.true(fs.existsSync(path.join(installed, 'svc')), 'the installed release is left in place');
    t.true(fs.existsSync(path.join(releases, view.upgrade.fromRelease, 'release.json')));
    t.is(currentRelease(platform), view.upgrade.toRelease);
    // The supervisor, not the agent, started the new API: its latest child, running the new release's executable.
    const after = platform.api()!;
    t.is(supervisor.pids.at(-1), after.pid);
    t.is(supervisor.pids.length, 2, 'the supervisor started the API twice: at first, and after the agent stopped it');
    t.is(fs.readlinkSync(`/proc/${after.pid}/exe`), path.join(releases, view.upgrade.toRelease, 'svc'));
    t.is((await api(platform, 'GET', '/api/version')).body.release, view.upgrade.toRelease);
    t.deepEqual(await appAddresses(platform, 'alpha'), addresses);
  },
);

test.serial(
  'An installed host rolls a release that fails its postflight back: the supervisor starts the previous release again',
  async (t) => {
    t.timeout(300_000);
    const previous = currentRelease(platform)!;
    // The artifact's executable behind a script that serves only as a candidate (workers off).
    const failing = path.join(platform.root, 'failing');
    fs.cpSync(path.join(platform.platformDir, 'releases', previous), failing, {
      recursive: true,
      verbatimSymlinks: true,
    });
    fs.rmSync(path.join(failing, 'release.json'));
    fs.renameSync(path.join(failing, 'svc'), path.join(failing, 'svc-program'));
    fs.writeFileSync(
      path.join(failing, 'svc'),
      `#!/bin/sh\nif [ "$SVC_OPERATION_WORKER" != false ] && [ "$1" = serve ]; then echo 'this release refuses to serve with workers on' >&2; exit 1; fi\nexec "$(dirname "$0")/svc-program" "$@"\n`,
      { mode: 0o755 },
    );
    const loop = requestLoop(addresses);
    const id = await queueLane(platform, 'upgrade', { source: failing });
    const view = await waitForLane(platform, id);
    const counts = await loop.stop();
    t.is(view.upgrade.phase, 'rolled_back', JSON.stringify(view, null, 1));
    t.deepEqual(steps(view), [
      'stage succeeded',
      'verify skipped',
      'candidate succeeded',
      'drain succeeded',
      'promote succeeded',
      'restart succeeded',
      'postflight failed',
      'rollback succeeded',
    ]);
    t.is(currentRelease(platform), previous);
    const after = platform.api()!;
    t.is(supervisor.pids.at(-1), after.pid);
    t.is(fs.readlinkSync(`/proc/${after.pid}/exe`), path.join(platform.platformDir, 'releases', previous, 'svc'));
    t.is((await api(platform, 'GET', '/api/version')).body.release, previous);
    t.is(counts.failed, 0, counts.errors.slice(0, 5).join('; '));
  },
);
