// tier: full
import test from 'ava';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { runSvc } from '../helpers/cli.js';
import { containerState } from '../helpers/containers.js';
import { runningAgent } from '../../platform/platform-lane/index.js';
import {
  FAILS_OUTSIDE_CANDIDATE,
  MIGRATES_THEN_FAILS,
  NEVER_STARTS,
  newestControlMigration,
  waitUntil,
  api,
  appAddresses,
  builtTree,
  currentRelease,
  deployAndWait,
  queueLane,
  requestLoop,
  startLanePlatform,
  tail,
  treeVariant,
  waitForLane,
  type LanePlatform,
} from './lane-harness.js';

// One platform for the file: the upgrade, then a failing candidate and a failing postflight against the upgraded platform.
// Its apps run as podman containers (ADR 0219): an upgrade adopts them as it adopts host processes.
let platform: LanePlatform;
const appsAtStart: Record<string, string[]> = {};
const allocationsAtStart: Record<string, string[]> = {};
const containersAtStart: Record<string, string[]> = {};
const teardowns: (() => Promise<void> | void)[] = [];

test.after.always(async () => {
  for (const fn of teardowns.reverse()) await fn();
});

test.before(async () => {
  const tree = await builtTree();
  platform = await startLanePlatform({ teardown: (fn) => void teardowns.push(fn) }, tree, {
    apps: ['alpha', 'beta'],
    containers: true,
    // The signature policy: a release whose version says "unsigned" is rejected.
    env: {
      SVC_RELEASE_KEEP: '2',
      SVC_RELEASE_VERIFY_COMMAND:
        'if grep -q unsigned package.json; then echo "no signature for $SVC_RELEASE_SHA256" >&2; exit 1; fi; echo "signed $SVC_RELEASE_ID"',
    },
  });
  for (const app of ['alpha', 'beta']) {
    const op = await deployAndWait(platform, app);
    if (op.status !== 'succeeded')
      throw new Error(
        `deploy ${app} ${op.status}: ${op.lastError}; ${tail(path.join(platform.root, 'first-api.log'))}`,
      );
    appsAtStart[app] = await appAddresses(platform, app);
    const allocations = await runningAllocations(platform, app);
    if (allocations.length === 0) throw new Error(`${app} runs no allocation`);
    allocationsAtStart[app] = allocations.map(allocationLine);
    containersAtStart[app] = allocations.map((a) => containerState(`svc-${a.id}`));
  }
});

test.serial(
  'An upgrade moves the running platform to another build while both apps keep serving and are re-adopted',
  async (t) => {
    t.timeout(240_000);
    const tree = await builtTree();
    const next = treeVariant(t, tree, '0.1.1-lane');
    const before = platform.api()!;
    const loop = requestLoop([...appsAtStart['alpha']!, ...appsAtStart['beta']!]);
    // The CLI queues and follows the upgrade across the API restart.
    const cli = await runSvc(['platform', 'upgrade', next, '--follow', '--api', platform.url], { timeoutMs: 200_000 });
    const counts = await loop.stop();
    t.is(cli.code, 0, cli.stdout + cli.stderr);
    const id = /^platform\.upgrade (op_[0-9a-f]{20})$/m.exec(cli.stdout)?.[1];
    t.truthy(id, cli.stdout);
    for (const step of ['stage', 'candidate', 'drain', 'promote', 'restart', 'postflight'])
      t.regex(cli.stdout, new RegExp(`^  ${step} +succeeded`, 'm'));
    t.regex(cli.stdout, /^platform\.upgrade succeeded \(succeeded\)$/m);
    const view = await waitForLane(platform, id!);
    t.is(view.operation.status, 'succeeded', JSON.stringify(view, null, 1));
    t.is(view.upgrade.phase, 'succeeded');
    t.deepEqual(
      view.steps.map((s: any) => `${s.step} ${s.status}`),
      [
        'stage succeeded',
        'verify succeeded',
        'candidate succeeded',
        'drain succeeded',
        'promote succeeded',
        'restart succeeded',
        'postflight succeeded',
      ],
    );
    t.is(view.steps[1].message, `accepted: signed ${view.upgrade.toRelease}`);
    t.true(counts.ok > 20, `requests answered: ${counts.ok}`);
    const ms = (s: any) => Date.parse(s.endedAt) - Date.parse(s.startedAt);
    t.log(
      `requests to the apps during the upgrade: ${counts.ok} answered, ${counts.failed} failed; steps: ${view.steps.map((s: any) => `${s.step} ${ms(s)} ms`).join(', ')}`,
    );
    t.is(counts.failed, 0, counts.errors.slice(0, 5).join('; '));
    // The API was replaced and runs the new release; the apps were not restarted (same addresses, re-adopted).
    const after = platform.api()!;
    t.not(after.pid, before.pid);
    const version = await api(platform, 'GET', '/api/version');
    t.is(version.body.release, view.upgrade.toRelease);
    t.is(version.body.version, '0.1.1-lane');
    t.regex(version.body.label, /^v0\.1\.1-lane-platform/);
    t.is(currentRelease(platform), view.upgrade.toRelease);
    // The new release's driver adopted each app's podman client by pid; the container it runs, built
    // and pushed to the managed registry and run by runc, is the one that ran before the upgrade.
    const registryPort = (
      JSON.parse(fs.readFileSync(path.join(platform.dataDir, 'registry', 'state.json'), 'utf8')) as { port: number }
    ).port;
    for (const app of ['alpha', 'beta']) {
      t.deepEqual(await appAddresses(platform, app), appsAtStart[app]);
      const allocations = await runningAllocations(platform, app);
      t.deepEqual(
        allocations.map(allocationLine),
        allocationsAtStart[app],
        `${app}'s allocations, as the new API shows them`,
      );
      for (const a of allocations)
        t.is(a.lastEvent, `Re-adopted running process ${a.pid} after a driver restart`, `${app} ${a.id}`);
      t.deepEqual(
        allocations.map((a) => containerState(`svc-${a.id}`)),
        containersAtStart[app],
        `${app}'s containers were not restarted`,
      );
      for (const a of allocations)
        t.regex(
          containerInspect(`svc-${a.id}`, '{{.State.Status}} {{.OCIRuntime}} {{.ImageName}}'),
          new RegExp(`^running runc 127\\.0\\.0\\.1:${registryPort}/${app}@sha256:[0-9a-f]{64}$`),
        );
    }
    // The history shows both releases, label apart from identity.
    const releases = await api(platform, 'GET', '/api/platform/releases');
    const builds = releases.body.builds as any[];
    t.deepEqual(builds.map((b) => b.id).sort(), [view.upgrade.fromRelease, view.upgrade.toRelease].sort());
    for (const b of builds) t.regex(b.sha256, /^[0-9a-f]{64}$/);
    t.is(releases.body.runningRelease, view.upgrade.toRelease);
    t.true(builds.find((b) => b.id === view.upgrade.toRelease).current);
    const op = (releases.body.operations as any[]).find((o) => o.id === id);
    t.is(op.upgrade.phase, 'succeeded');
    const listed = await runSvc(['platform', 'releases', '--api', platform.url]);
    t.is(listed.code, 0, listed.stderr);
    t.regex(listed.stdout, new RegExp(`^\\* +${view.upgrade.toRelease} +v0\\.1\\.1-lane-platform`, 'm'));
    t.regex(listed.stdout, new RegExp(`^ +${view.upgrade.fromRelease} +v0\\.1\\.0-platform`, 'm'));
    const events = await api(platform, 'GET', '/api/events?limit=50');
    const types = (events.body.events as any[]).map((e) => e.type);
    t.true(types.includes('platform.upgrade.started'));
    t.true(types.includes('platform.upgrade.succeeded'));
    // The agent that ran the upgrade ran the old code: it handed over to an agent of the new release.
    const successor = await waitUntil(
      () => {
        const pid = runningAgent(platform.platformDir);
        return pid !== undefined &&
          commandLine(pid).includes(`${path.join(platform.platformDir, 'releases', view.upgrade.toRelease)}/`)
          ? pid
          : undefined;
      },
      30_000,
      `an agent of ${view.upgrade.toRelease}; agent log: ${tail(path.join(platform.platformDir, 'agent.log'), 1500)}`,
    );
    t.regex(
      fs.readFileSync(path.join(platform.platformDir, 'agent.log'), 'utf8'),
      /host agent handed over to the current release/,
    );
    t.log(`agent ${successor} runs ${commandLine(successor)}`);
  },
);

test.serial('A candidate that fails its health check is never promoted and the API is not restarted', async (t) => {
  t.timeout(240_000);
  const tree = await builtTree();
  const broken = treeVariant(t, tree, '0.1.2-broken', NEVER_STARTS);
  const before = platform.api()!;
  const current = currentRelease(platform);
  const id = await queueLane(platform, 'upgrade', { source: broken });
  const view = await waitForLane(platform, id);
  t.is(view.operation.status, 'failed', `operation ${id}: ${JSON.stringify(view.steps)}`);
  t.is(view.upgrade.phase, 'failed');
  t.regex(view.operation.lastError, /^not promoted: .*candidate/);
  t.deepEqual(
    view.steps.map((s: any) => `${s.step} ${s.status}`),
    ['stage succeeded', 'verify succeeded', 'candidate failed'],
  );
  t.is(currentRelease(platform), current);
  t.is(platform.api()!.pid, before.pid);
  const events = await api(platform, 'GET', '/api/events?limit=50');
  t.true((events.body.events as any[]).some((e) => e.type === 'platform.upgrade.failed'));
});

test.serial(
  'A release whose postflight fails is rolled back: current points at the previous release again and the API serves it',
  async (t) => {
    t.timeout(240_000);
    const tree = await builtTree();
    const failing = treeVariant(t, tree, '0.1.3-postflight', FAILS_OUTSIDE_CANDIDATE);
    const previous = currentRelease(platform)!;
    const loop = requestLoop([...appsAtStart['alpha']!, ...appsAtStart['beta']!]);
    const id = await queueLane(platform, 'upgrade', { source: failing });
    const view = await waitForLane(platform, id);
    const counts = await loop.stop();
    t.is(view.operation.status, 'failed');
    t.is(view.upgrade.phase, 'rolled_back');
    t.regex(view.operation.lastError, new RegExp(`^rolled back to ${previous}: `));
    t.deepEqual(
      view.steps.map((s: any) => `${s.step} ${s.status}`),
      [
        'stage succeeded',
        'verify succeeded',
        'candidate succeeded',
        'drain succeeded',
        'promote succeeded',
        'restart succeeded',
        'postflight failed',
        'rollback succeeded',
      ],
    );
    t.is(currentRelease(platform), previous);
    const version = await api(platform, 'GET', '/api/version');
    t.is(version.body.release, previous);
    t.is(counts.failed, 0, counts.errors.slice(0, 5).join('; '));
    // Across the failed release's start and the rollback to the previous one, the containers deployed
    // before the first upgrade keep running, adopted again by each driver.
    for (const app of ['alpha', 'beta']) {
      const allocations = await runningAllocations(platform, app);
      t.deepEqual(allocations.map(allocationLine), allocationsAtStart[app]);
      t.deepEqual(
        allocations.map((a) => containerState(`svc-${a.id}`)),
        containersAtStart[app],
        `${app}'s containers were not restarted`,
      );
    }
    const events = await api(platform, 'GET', '/api/events?limit=50');
    t.true((events.body.events as any[]).some((e) => e.type === 'platform.upgrade.rolled_back'));
    // The inbox shows the failed upgrade until a later one succeeds.
    const inbox = await api(platform, 'GET', '/api/operator/inbox');
    const failed = inbox.body.operations.failed.items as any[];
    t.true(
      failed.some((o) => o.id === id && o.kind === 'platform.upgrade'),
      JSON.stringify(failed),
    );
  },
);

test.serial(
  'A release that migrated control.db and then failed its postflight is rolled back, and the previous release runs on the newer schema: a rollback does not undo schema changes',
  async (t) => {
    t.timeout(240_000);
    const tree = await builtTree();
    const migrating = treeVariant(t, tree, '0.1.5-migrates', MIGRATES_THEN_FAILS);
    const previous = currentRelease(platform)!;
    const migrationsBefore = newestControlMigration(platform);
    const loop = requestLoop([...appsAtStart['alpha']!, ...appsAtStart['beta']!]);
    const id = await queueLane(platform, 'upgrade', { source: migrating });
    const view = await waitForLane(platform, id);
    const counts = await loop.stop();
    t.is(
      view.upgrade.phase,
      'rolled_back',
      `${view.upgrade.message}; api log: ${tail(path.join(platform.platformDir, 'api.log'), 1500)}`,
    );
    t.is(currentRelease(platform), previous);
    const version = await api(platform, 'GET', '/api/version');
    t.is(version.body.release, previous);
    // The schema stays (spec "Versioning" 3): the previous release serves on it and says so.
    t.is(newestControlMigration(platform), migrationsBefore + 1);
    t.regex(
      tail(path.join(platform.platformDir, 'api.log'), 20_000),
      /control\.db has migrations of a newer release: running on its schema/,
    );
    const steps = view.steps as any[];
    t.deepEqual(
      steps.map((s) => `${s.step} ${s.status}`),
      [
        'stage succeeded',
        'verify succeeded',
        'candidate succeeded',
        'drain succeeded',
        'promote succeeded',
        'restart succeeded',
        'postflight failed',
        'rollback succeeded',
      ],
    );
    t.regex(
      steps.find((s) => s.step === 'restart').message,
      new RegExp(`backed up control\\.db \\([\\d.]+ MiB, migration ${migrationsBefore}\\)`),
    );
    t.regex(steps.find((s) => s.step === 'rollback').message, /the databases keep their schema/);
    // The copy taken before the new release first started stays for recovery by hand.
    t.true(fs.existsSync(path.join(platform.platformDir, 'backups', id, 'backup.json')));
    const events = await api(platform, 'GET', '/api/events?limit=50');
    const mine = (events.body.events as any[]).filter((e) => e.metadata?.operationId === id).map((e) => e.type);
    t.deepEqual(mine.sort(), ['platform.upgrade.failed', 'platform.upgrade.rolled_back', 'platform.upgrade.started']);
    t.is(counts.failed, 0, counts.errors.slice(0, 5).join('; '));
  },
);

test.serial('A release the signature policy rejects is recorded as rejected and never promoted', async (t) => {
  t.timeout(240_000);
  const tree = await builtTree();
  const unsigned = treeVariant(t, tree, '0.1.4-unsigned');
  const current = currentRelease(platform);
  const before = platform.api()!;
  const id = await queueLane(platform, 'upgrade', { source: unsigned });
  const view = await waitForLane(platform, id);
  t.is(view.operation.status, 'failed');
  t.deepEqual(
    view.steps.map((s: any) => `${s.step} ${s.status}`),
    ['stage succeeded', 'verify failed'],
  );
  t.regex(
    view.steps[1].message,
    /^the signature policy rejected 0\.1\.4-unsigned-nocommit-[0-9a-f]{12}: the verify command exited 1: no signature for [0-9a-f]{64}$/,
  );
  t.is(currentRelease(platform), current);
  t.is(platform.api()!.pid, before.pid);
  const releases = await api(platform, 'GET', '/api/platform/releases');
  const build = (releases.body.builds as any[]).find((b) => b.version === '0.1.4-unsigned');
  t.like(build, { verification: 'rejected', promotedAt: null, current: false });
});

test.serial(
  'Releases beyond SVC_RELEASE_KEEP are removed from disk as upgrades end, never the current one, and stay listed as history',
  async (t) => {
    // By now this file has staged the first release, the upgrade and four refused or rolled-back releases.
    const view = await api(platform, 'GET', '/api/platform/releases');
    t.is(view.status, 200);
    const builds = view.body.builds as any[];
    const onDisk = fs
      .readdirSync(path.join(platform.platformDir, 'releases'))
      .filter((name) => !name.startsWith('.'))
      .sort();
    t.deepEqual(
      onDisk,
      builds
        .filter((b) => b.prunedAt === null)
        .map((b) => b.id)
        .sort(),
      'the records say which folders are on disk',
    );
    t.true(onDisk.length <= 2, onDisk.join(', '));
    t.true(onDisk.includes(currentRelease(platform)!));
    t.true(
      builds.filter((b) => b.prunedAt !== null).length >= 3,
      JSON.stringify(builds.map((b) => [b.label, b.prunedAt])),
    );
    const cli = await runSvc(['platform', 'releases', '--api', platform.url]);
    t.is(cli.code, 0, cli.stderr);
    t.regex(cli.stdout, /ON DISK/);
    t.regex(cli.stdout, /removed \d{4}-/);
  },
);

/** An allocation as `GET /api/apps/:app` shows it. */
interface AllocationView {
  readonly id: string;
  readonly status: string;
  readonly pid: number | null;
  readonly restarts: number;
  readonly lastEvent: string | null;
}

/** The app's running allocations, as the platform's API reports them. */
async function runningAllocations(platform: LanePlatform, app: string): Promise<AllocationView[]> {
  const view = await api(platform, 'GET', `/api/apps/${app}`);
  if (view.status !== 200) throw new Error(`GET /api/apps/${app}: ${view.status} ${JSON.stringify(view.body)}`);
  return (view.body.processes as { allocations: AllocationView[] }[])
    .flatMap((p) => p.allocations)
    .filter((a) => a.status === 'running');
}

/** What must not change while an allocation keeps running: its id, its task's pid (the podman client) and its restarts. */
function allocationLine(a: AllocationView): string {
  return `${a.id} ${a.status} pid ${a.pid} restarts ${a.restarts}`;
}

function containerInspect(name: string, format: string): string {
  return execFileSync('podman', ['inspect', '--format', format, name], { encoding: 'utf8' }).trim();
}

function commandLine(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  } catch {
    return '';
  }
}
