// tier: full
/**
 * The release artifact through the platform lane, end to end: a platform started from a built
 * checkout is upgraded to the real artifact archive (built once per ava run) with two apps under a
 * request loop, then, by the artifact's own host agent, to a second distinct artifact; and a platform
 * first started from an unpacked artifact folder, which stages that folder as its first release.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import { runSvc } from '../helpers/cli.js';
import { repackedArtifact, sharedArtifact, type SharedArtifact } from '../helpers/shared-artifact.js';
import { runningAgent } from '../../platform/platform-lane/index.js';
import {
  api,
  appAddresses,
  builtTree,
  currentRelease,
  deployAndWait,
  killAndWait,
  queueLane,
  requestLoop,
  startLanePlatform,
  tail,
  waitForLane,
  waitUntil,
  type LanePlatform,
} from './lane-harness.js';

let platform: LanePlatform;
let artifact: SharedArtifact;
const appsAtStart: Record<string, string[]> = {};
const teardowns: (() => Promise<void> | void)[] = [];

test.after.always(async () => {
  for (const fn of teardowns.reverse()) await fn();
});

test.before(async (t) => {
  t.timeout(600_000);
  const [tree, built] = await Promise.all([builtTree(), sharedArtifact()]);
  artifact = built;
  platform = await startLanePlatform({ teardown: (fn) => void teardowns.push(fn) }, tree, { apps: ['alpha', 'beta'] });
  for (const app of ['alpha', 'beta']) {
    const op = await deployAndWait(platform, app);
    if (op.status !== 'succeeded')
      throw new Error(
        `deploy ${app} ${op.status}: ${op.lastError}; ${tail(path.join(platform.root, 'first-api.log'))}`,
      );
    appsAtStart[app] = await appAddresses(platform, app);
  }
});

let another: Promise<{ archive: string; sha256: string }> | undefined;

/**
 * A second artifact, distinct from the shared one: repacked once for the file (a repack unpacks and
 * packs the whole artifact again) and upgraded to by both platforms, neither of which had it.
 */
function anotherArtifact(): Promise<{ archive: string; sha256: string }> {
  another ??= (() => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-lane-another-'));
    teardowns.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    return repackedArtifact(artifact, dir, new Date().toISOString());
  })();
  return another;
}

/** The argv of a process, from /proc. */
function commandLine(pid: number): string[] {
  return fs
    .readFileSync(`/proc/${pid}/cmdline`, 'utf8')
    .split('\0')
    .filter((part) => part !== '');
}

const steps = (view: any): string[] => view.steps.map((s: any) => `${s.step} ${s.status}`);
const UPGRADE_STEPS = [
  'stage succeeded',
  'verify skipped',
  'candidate succeeded',
  'drain succeeded',
  'promote succeeded',
  'restart succeeded',
  'postflight succeeded',
];

test.serial(
  'An upgrade from a built checkout to the release artifact restarts the API as current/svc serve while both apps keep serving',
  async (t) => {
    t.timeout(300_000);
    const before = platform.api()!;
    const loop = requestLoop([...appsAtStart['alpha']!, ...appsAtStart['beta']!]);
    const started = Date.now();
    const cli = await runSvc(['platform', 'upgrade', artifact.archive, '--follow', '--api', platform.url], {
      timeoutMs: 250_000,
    });
    const upgradeMs = Date.now() - started;
    const counts = await loop.stop();
    t.is(
      cli.code,
      0,
      `${cli.stdout}${cli.stderr}; agent log: ${tail(path.join(platform.platformDir, 'agent.log'))}; api log: ${tail(path.join(platform.platformDir, 'api.log'))}`,
    );
    const id = /^platform\.upgrade (op_[0-9a-f]{20})$/m.exec(cli.stdout)?.[1];
    t.truthy(id, cli.stdout);
    const view = await waitForLane(platform, id!);
    t.is(view.operation.status, 'succeeded', JSON.stringify(view, null, 1));
    t.deepEqual(steps(view), UPGRADE_STEPS);
    const ms = (s: any) => Date.parse(s.endedAt) - Date.parse(s.startedAt);
    t.log(
      `artifact built in ${(artifact.buildMs / 1000).toFixed(1)} s; upgrade to the artifact ${(upgradeMs / 1000).toFixed(1)} s (${view.steps.map((s: any) => `${s.step} ${ms(s)} ms`).join(', ')}); requests to the apps: ${counts.ok} answered, ${counts.failed} failed`,
    );
    t.true(counts.ok > 20, `requests answered: ${counts.ok}`);
    t.is(counts.failed, 0, counts.errors.slice(0, 5).join('; '));

    // The API runs the artifact's executable, started through the current link.
    const release = view.upgrade.toRelease as string;
    t.is(currentRelease(platform), release);
    const after = await waitUntil(
      () => platform.api()?.pid !== before.pid && platform.api(),
      30_000,
      'the restarted API to record itself',
    );
    const releaseDir = path.join(platform.platformDir, 'releases', release);
    t.is(fs.readlinkSync(`/proc/${after.pid}/exe`), path.join(releaseDir, 'svc'));
    t.deepEqual(commandLine(after.pid).slice(0, 4), [
      path.join(platform.platformDir, 'current', 'svc'),
      'serve',
      '--only',
      'control',
    ]);
    t.is(after.root, releaseDir);
    const version = await api(platform, 'GET', '/api/version');
    t.like(version.body, {
      release,
      version: artifact.release.version,
      commit: artifact.release.commit,
      label: `v${artifact.release.version}-platform${artifact.release.commit ? `-g${artifact.release.commit.slice(0, 7)}` : ''}`,
    });
    // The apps were not restarted (same addresses, re-adopted).
    for (const app of ['alpha', 'beta']) t.deepEqual(await appAddresses(platform, app), appsAtStart[app]);
    const releases = await api(platform, 'GET', '/api/platform/releases');
    const build = (releases.body.builds as any[]).find((b) => b.id === release);
    t.like(build, {
      current: true,
      version: artifact.release.version,
      source: `artifact:${artifact.archive} (sha256 ${artifact.sha256})`,
    });
    t.is(releases.body.runningRelease, release);
  },
);

test.serial('A second upgrade, from the artifact to another artifact, is run by the artifact host agent', async (t) => {
  t.timeout(300_000);
  const previous = currentRelease(platform)!;
  const second = await anotherArtifact();
  // The agent that ran the first upgrade is the checkout's: stopped, so the artifact API starts its own.
  const oldAgent = runningAgent(platform.platformDir);
  if (oldAgent !== undefined) await killAndWait(oldAgent, undefined, 'SIGTERM');
  const before = platform.api()!;
  const loop = requestLoop([...appsAtStart['alpha']!, ...appsAtStart['beta']!]);
  const started = Date.now();
  const id = await queueLane(platform, 'upgrade', { source: second.archive });
  const agent = await waitUntil(
    () => runningAgent(platform.platformDir),
    30_000,
    'the artifact API to start a host agent',
  );
  t.is(fs.readlinkSync(`/proc/${agent}/exe`), path.join(platform.platformDir, 'releases', previous, 'svc'));
  const view = await waitForLane(platform, id);
  const upgradeMs = Date.now() - started;
  const counts = await loop.stop();
  t.is(
    view.operation.status,
    'succeeded',
    `${JSON.stringify(view, null, 1)}; agent log: ${tail(path.join(platform.platformDir, 'agent.log'))}`,
  );
  t.deepEqual(steps(view), UPGRADE_STEPS);
  t.log(
    `artifact to artifact: ${(upgradeMs / 1000).toFixed(1)} s; requests to the apps: ${counts.ok} answered, ${counts.failed} failed`,
  );
  t.is(counts.failed, 0, counts.errors.slice(0, 5).join('; '));
  const release = view.upgrade.toRelease as string;
  t.not(release, previous);
  t.is(view.upgrade.fromRelease, previous);
  t.is(currentRelease(platform), release);
  const after = await waitUntil(
    () => platform.api()?.pid !== before.pid && platform.api(),
    30_000,
    'the restarted API to record itself',
  );
  t.is(fs.readlinkSync(`/proc/${after.pid}/exe`), path.join(platform.platformDir, 'releases', release, 'svc'));
  t.is((await api(platform, 'GET', '/api/version')).body.release, release);
  const builds = (await api(platform, 'GET', '/api/platform/releases')).body.builds as any[];
  t.like(
    builds.find((b) => b.id === release),
    { current: true, source: `artifact:${second.archive} (sha256 ${second.sha256})` },
  );
  t.true(builds.some((b) => b.id === previous && !b.current));
});

test.serial(
  'A platform first started from an unpacked artifact stages its own folder as the first release and upgrades to another artifact',
  async (t) => {
    t.timeout(300_000);
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-lane-unpacked-'));
    teardowns.push(() => fs.rmSync(work, { recursive: true, force: true }));
    fs.chmodSync(work, 0o711);
    execFileSync('tar', ['-xzf', artifact.archive, '-C', work]);
    const folder = path.join(work, path.basename(artifact.archive, '.tar.gz'));
    const unpacked = await startLanePlatform({ teardown: (fn) => void teardowns.push(fn) }, folder, {
      apps: ['alpha'],
    });
    t.is(unpacked.api()!.root, folder);
    t.is(fs.readlinkSync(`/proc/${unpacked.api()!.pid}/exe`), path.join(folder, 'svc'));
    const op = await deployAndWait(unpacked, 'alpha');
    t.is(op.status, 'succeeded', String(op.lastError));
    const addresses = await appAddresses(unpacked, 'alpha');
    const second = await anotherArtifact();
    const loop = requestLoop(addresses);
    const id = await queueLane(unpacked, 'upgrade', { source: second.archive });
    const view = await waitForLane(unpacked, id);
    const counts = await loop.stop();
    t.is(
      view.operation.status,
      'succeeded',
      `${JSON.stringify(view, null, 1)}; agent log: ${tail(path.join(unpacked.platformDir, 'agent.log'))}`,
    );
    t.deepEqual(steps(view), UPGRADE_STEPS);
    t.is(counts.failed, 0, counts.errors.slice(0, 5).join('; '));
    // The first release is the running folder, staged with the identity of the archive it came from.
    const builds = (await api(unpacked, 'GET', '/api/platform/releases')).body.builds as any[];
    const baseline = builds.find((b) => b.id === view.upgrade.fromRelease);
    t.like(baseline, { current: false, version: artifact.release.version, source: `artifact:${folder}` });
    t.true(fs.existsSync(path.join(unpacked.platformDir, 'releases', view.upgrade.fromRelease, 'svc')));
    const after = await waitUntil(
      () => unpacked.api()?.root !== folder && unpacked.api(),
      30_000,
      'the restarted API to record itself',
    );
    t.is(
      fs.readlinkSync(`/proc/${after.pid}/exe`),
      path.join(unpacked.platformDir, 'releases', view.upgrade.toRelease, 'svc'),
    );
    t.is((await api(unpacked, 'GET', '/api/version')).body.release, view.upgrade.toRelease);
    t.deepEqual(await appAddresses(unpacked, 'alpha'), addresses);
  },
);
