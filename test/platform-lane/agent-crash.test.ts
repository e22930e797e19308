// tier: full
import test from 'ava';
import path from 'node:path';
import { runningAgent } from '../../platform/platform-lane/index.js';
import { isProcessAlive } from '../../platform/local-scheduler/tasks/process-table.js';
import {
  MIGRATES_THEN_FAILS,
  appAddresses,
  builtTree,
  currentRelease,
  deployAndWait,
  newestControlMigration,
  queueLane,
  readLaneRow,
  requestLoop,
  startAgent,
  startLanePlatform,
  tail,
  treeVariant,
  waitForApiRelease,
  waitForLaneRow,
  waitUntil,
  type LanePlatform,
} from './lane-harness.js';

// One platform for the file; each test SIGKILLs the host agent when the upgrade enters one step.
let platform: LanePlatform;
let tree: string;
let addresses: string[] = [];
const teardowns: (() => Promise<void> | void)[] = [];

test.after.always(async () => {
  for (const fn of teardowns.reverse()) await fn();
});

test.before(async () => {
  tree = await builtTree();
  platform = await startLanePlatform({ teardown: (fn) => void teardowns.push(fn) }, tree, { apps: ['alpha'] });
  const op = await deployAndWait(platform, 'alpha');
  if (op.status !== 'succeeded') throw new Error(`deploy alpha ${op.status}: ${op.lastError}`);
  addresses = await appAddresses(platform, 'alpha');
});

for (const [index, step] of ['stage', 'candidate', 'drain', 'promote', 'restart', 'postflight'].entries()) {
  test.serial(
    `A SIGKILL of the host agent when an upgrade enters ${step}, then a new agent: the lane resumes or rolls back and current boots`,
    async (t) => {
      t.timeout(240_000);
      const variant = treeVariant(t, tree, `0.2.${index}-crash`);
      const loop = requestLoop(addresses);
      t.teardown(() => loop.stop());
      const id = await queueLane(platform, 'upgrade', { source: variant });
      // Another process's row: polled as tightly as the step allows.
      const seen = await waitUntil(
        () => {
          const row = readLaneRow(platform, id);
          return row && (row.stage === step || ['succeeded', 'failed'].includes(row.status)) ? row : undefined;
        },
        120_000,
        `the upgrade to enter ${step}`,
        5,
      );
      const agent = runningAgent(platform.platformDir);
      t.truthy(agent, 'an agent runs the upgrade');
      process.kill(agent!, 'SIGKILL');
      await waitUntil(() => !isProcessAlive(agent!, undefined), 10_000, 'the agent to die');
      t.log(`killed the agent in stage ${seen.stage ?? '-'} (status ${seen.status}, phase ${seen.phase ?? '-'})`);
      startAgent(platform, tree);
      const end = await waitForLaneRow(platform, id);
      t.log(
        `ended ${end.status}, phase ${end.phase}, attempts ${end.attempts}${end.lastError ? `: ${end.lastError}` : ''}`,
      );
      t.true(
        end.status === 'succeeded' ? end.phase === 'succeeded' : ['rolled_back', 'failed'].includes(end.phase ?? ''),
        `${end.status} ${end.phase}`,
      );
      if (seen.stage === step) t.true(end.attempts >= 2, 'the interrupted attempt was resumed by a second one');
      // current boots: the API answers on the release current points at.
      const current = currentRelease(platform);
      const version = await waitForApiRelease(platform, current);
      t.is(version.release, current);
      const counts = await loop.stop();
      t.is(counts.failed, 0, counts.errors.slice(0, 5).join('; '));
    },
  );
}

test.serial(
  'A SIGKILL of the host agent when the rollback of a release that migrated control.db begins, then a new agent: the rollback finishes and the previous release boots on the newer schema',
  async (t) => {
    t.timeout(240_000);
    const variant = treeVariant(t, tree, '0.2.9-migrates', MIGRATES_THEN_FAILS);
    const migrations = newestControlMigration(platform);
    const loop = requestLoop(addresses);
    t.teardown(() => loop.stop());
    const id = await queueLane(platform, 'upgrade', { source: variant });
    const seen = await waitUntil(
      () => {
        const row = readLaneRow(platform, id);
        return row && (row.stage === 'rollback' || ['succeeded', 'failed'].includes(row.status)) ? row : undefined;
      },
      120_000,
      'the upgrade to enter rollback',
      5,
    );
    t.is(seen.stage, 'rollback', `the upgrade ended before its rollback: ${seen.status} ${seen.lastError}`);
    const agent = runningAgent(platform.platformDir)!;
    process.kill(agent, 'SIGKILL');
    await waitUntil(() => !isProcessAlive(agent, undefined), 10_000, 'the agent to die');
    startAgent(platform, tree);
    const end = await waitForLaneRow(platform, id);
    // A failed rollback says why in the API's own log (the release it started exited).
    t.is(
      end.phase,
      'rolled_back',
      `${end.status} ${end.lastError}; api log: ${tail(path.join(platform.platformDir, 'api.log'), 3000)}; agent log: ${tail(path.join(platform.platformDir, 'agent.log'), 1500)}`,
    );
    t.true(end.attempts >= 2);
    // The rollback target: the release current pointed at before (the running build, staged first when this test runs alone).
    const previous = readLaneRow(platform, id)!.fromRelease ?? currentRelease(platform);
    t.truthy(previous);
    t.is(currentRelease(platform), previous);
    const version = await waitForApiRelease(platform, previous);
    t.is(version.release, previous);
    t.is(newestControlMigration(platform), migrations + 1, 'a rollback does not undo schema changes');
    const counts = await loop.stop();
    t.is(counts.failed, 0, counts.errors.slice(0, 5).join('; '));
  },
);
