// tier: full
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import {
  api,
  builtTree,
  currentRelease,
  queueLane,
  readLaneRow,
  startLanePlatform,
  treeVariant,
  waitForLane,
  waitForOperation,
  waitUntil,
  type LanePlatform,
} from './lane-harness.js';

// One platform for the file: `slow`'s build test waits for a gate (below), so its deploy is in flight when the upgrade reaches the drain gate.
let platform: LanePlatform;
let tree: string;
const teardowns: (() => Promise<void> | void)[] = [];
/**
 * The slow app's test step waits for this file (the step runs as the platform's user): each test
 * closes the gate before its deploy and opens it when the deploy may end, so the deploy is in flight
 * at the drain however long the upgrade takes on a loaded machine (a fixed `sleep 20` was not).
 */
const gateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-drain-gate-'));
const gate = path.join(gateDir, 'open');
const openGate = () => fs.writeFileSync(gate, '');
const closeGate = () => fs.rmSync(gate, { force: true });
openGate();
teardowns.push(() => fs.rmSync(gateDir, { recursive: true, force: true }));

test.after.always(async () => {
  for (const fn of teardowns.reverse()) await fn();
});

test.before(async () => {
  tree = await builtTree();
  platform = await startLanePlatform({ teardown: (fn) => void teardowns.push(fn) }, tree, {
    apps: ['slow', 'quick'],
    appTest: { slow: `until [ -e '${gate}' ]; do sleep 0.05; done` },
  });
});

/** Closes the gate, queues a deploy of `app` and waits until its operation runs its test step. */
async function deployInFlight(app: string): Promise<string> {
  closeGate();
  const queued = await api(platform, 'POST', `/api/apps/${app}/deploy`, {});
  if (queued.status !== 202) throw new Error(`deploy ${app}: ${queued.status}`);
  const id = queued.body.operation.id as string;
  await waitUntil(
    async () => {
      const op = await api(platform, 'GET', `/api/v1/operations/${id}`);
      return op.body.status === 'running' && op.body.stage === 'test';
    },
    60_000,
    `${app}'s deploy to run its test step`,
  );
  return id;
}

const pidOf = (owner: string) => Number(owner.split(':')[1]);

test.serial(
  'Drain mode fail refuses to upgrade while an app operation is in flight: nothing is promoted and the operation finishes',
  async (t) => {
    t.timeout(240_000);
    const before = platform.api()!;
    const current = currentRelease(platform);
    const deploy = await deployInFlight('slow');
    const lane = await waitForLane(
      platform,
      await queueLane(platform, 'upgrade', { source: treeVariant(t, tree, '0.3.0-fail'), drainMode: 'fail' }),
    );
    t.is(lane.operation.status, 'failed');
    t.is(lane.upgrade.phase, 'failed');
    t.is(lane.upgrade.drainMode, 'fail');
    t.regex(
      lane.operation.lastError,
      /not promoted: 1 running and 0 queued app operation\(s\): SVC_DRAIN_MODE=fail refuses to upgrade/,
    );
    t.deepEqual(lane.steps.map((s: any) => `${s.step} ${s.status}`).slice(-1), ['drain failed']);
    // The running build was installed as the first release (the rollback target); the candidate was not promoted.
    t.is(currentRelease(platform), current ?? lane.upgrade.fromRelease);
    t.not(currentRelease(platform), lane.upgrade.toRelease);
    t.is(platform.api()!.pid, before.pid);
    openGate();
    const op = await waitForOperation(platform, deploy);
    t.is(op.status, 'succeeded');
    t.is(op.attempts, 1);
  },
);

test.serial(
  'Drain mode wait holds new app operations, waits for the one in flight, then upgrades; the held one runs once on the new API',
  async (t) => {
    t.timeout(240_000);
    const before = platform.api()!;
    const deploy = await deployInFlight('slow');
    const laneId = await queueLane(platform, 'upgrade', {
      source: treeVariant(t, tree, '0.3.1-wait'),
      drainMode: 'wait',
    });
    await waitUntil(
      () => readLaneRow(platform, laneId)?.stage === 'drain',
      60_000,
      'the upgrade to reach its drain gate',
      20,
    );
    // Queued while the gate holds: it must wait and then run on the new API, exactly once.
    const held = await api(platform, 'POST', '/api/apps/quick/deploy', {});
    t.is(held.status, 202);
    openGate();
    const lane = await waitForLane(platform, laneId);
    t.is(lane.operation.status, 'succeeded', JSON.stringify(lane.steps));
    t.regex(
      lane.steps.find((s: any) => s.step === 'drain').message,
      /^wait: 1 running app operation\(s\) finished in \d+ ms; 1 queued wait for the new API$/,
    );
    const after = platform.api()!;
    t.not(after.pid, before.pid);
    const slow = await waitForOperation(platform, deploy);
    t.is(slow.status, 'succeeded');
    t.is(slow.attempts, 1);
    const quick = await waitForOperation(platform, held.body.operation.id);
    const steps = (await api(platform, 'GET', `/api/v1/deployments/${held.body.deploymentId}/steps`)).body;
    t.is(quick.status, 'succeeded', JSON.stringify({ quick, steps }));
    t.is(quick.attempts, 1);
    const attempts = (await api(platform, 'GET', `/api/v1/operations/${quick.id}`)).body.attemptHistory as {
      owner: string;
    }[];
    t.deepEqual(
      attempts.map((a) => pidOf(a.owner)),
      [after.pid],
    );
    const slowAttempts = (await api(platform, 'GET', `/api/v1/operations/${deploy}`)).body.attemptHistory as {
      owner: string;
    }[];
    t.deepEqual(
      slowAttempts.map((a) => pidOf(a.owner)),
      [before.pid],
    );
  },
);

test.serial(
  'Drain mode force upgrades with an app operation in flight: the restart interrupts it and the new API runs it again, none lost',
  async (t) => {
    t.timeout(240_000);
    const before = platform.api()!;
    const deploy = await deployInFlight('slow');
    const lane = await waitForLane(
      platform,
      await queueLane(platform, 'upgrade', { source: treeVariant(t, tree, '0.3.2-force'), drainMode: 'force' }),
    );
    t.is(lane.operation.status, 'succeeded', JSON.stringify(lane.steps));
    t.regex(
      lane.steps.find((s: any) => s.step === 'drain').message,
      /^force: gate skipped with 1 running and 0 queued app operation\(s\)/,
    );
    const after = platform.api()!;
    t.not(after.pid, before.pid);
    // The restart interrupted the deploy at its test step: the new API runs it again, through the gate.
    openGate();
    const op = await waitForOperation(platform, deploy, 120_000);
    t.is(op.status, 'succeeded', JSON.stringify(op));
    const attempts = (await api(platform, 'GET', `/api/v1/operations/${deploy}`)).body.attemptHistory as {
      owner: string;
      outcome: string;
    }[];
    t.deepEqual(
      attempts.map((a) => [pidOf(a.owner), a.outcome]),
      [
        [before.pid, 'interrupted-requeued'],
        [after.pid, 'succeeded'],
      ],
    );
  },
);
