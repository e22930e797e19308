// tier: full
import test, { type ExecutionContext } from 'ava';
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

// One platform for the file. Its tests SIGKILL the host agent as an upgrade enters a step, start a new
// agent, and kill that one again as the resumed upgrade enters a later step: every step of the lane is
// aimed at in two upgrades, one that succeeds and one that rolls back.
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

/** The steps of an upgrade attempt in the order it enters them. */
const ATTEMPT_ORDER = ['stage', 'verify', 'candidate', 'drain', 'promote', 'restart', 'postflight', 'rollback'];

/** Where a kill landed: the row as the agent was killed. */
type Kill = NonNullable<ReturnType<typeof readLaneRow>>;

/**
 * SIGKILLs the agent running upgrade `id` as it enters each of `steps` in turn, starting a new agent
 * after each kill, and asserts each kill was resumed by one more attempt. A step that passes between
 * two looks (drain, with no app operation running, takes a few ms) is killed in the next step it
 * enters. Stops aiming when the upgrade ends first. Returns the kills.
 */
async function killAsItEnters(t: ExecutionContext, id: string, steps: readonly string[]): Promise<Kill[]> {
  const kills: Kill[] = [];
  for (const step of steps) {
    // Another process's row: polled as tightly as the step allows. The attempt after the last kill must
    // reach the step (a claim clears the stage: the killed attempt's stage is not seen again).
    const seen = await waitUntil(
      () => {
        const row = readLaneRow(platform, id);
        if (!row) return undefined;
        if (['succeeded', 'failed'].includes(row.status)) return row;
        return row.status === 'running' &&
          row.attempts > kills.length &&
          ATTEMPT_ORDER.indexOf(row.stage ?? '') >= ATTEMPT_ORDER.indexOf(step)
          ? row
          : undefined;
      },
      120_000,
      `the upgrade to enter ${step}`,
      5,
    );
    if (seen.status !== 'running') {
      t.log(`the upgrade ended (${seen.status} ${seen.phase ?? '-'}) before it entered ${step}`);
      break;
    }
    t.is(seen.attempts, kills.length + 1, 'each kill is resumed by one more attempt');
    const agent = runningAgent(platform.platformDir);
    t.truthy(agent, 'an agent runs the upgrade');
    process.kill(agent!, 'SIGKILL');
    await waitUntil(() => !isProcessAlive(agent!, undefined), 10_000, 'the agent to die');
    kills.push(seen);
    t.log(
      `aimed at ${step}: killed the agent in stage ${seen.stage} (attempt ${seen.attempts}, phase ${seen.phase ?? '-'})`,
    );
    startAgent(platform, tree);
  }
  return kills;
}

// An operation has five attempts: four kills leave the fifth to finish.
test.serial(
  'SIGKILLs of the host agent as one upgrade enters drain, then promote, then restart, then postflight, a new agent after each: each kill is resumed by another attempt, the lane resumes or rolls back and current boots',
  async (t) => {
    t.timeout(240_000);
    const variant = treeVariant(t, tree, '0.2.0-crash');
    const loop = requestLoop(addresses);
    t.teardown(() => loop.stop());
    const id = await queueLane(platform, 'upgrade', { source: variant });
    const kills = await killAsItEnters(t, id, ['drain', 'promote', 'restart', 'postflight']);
    const end = await waitForLaneRow(platform, id);
    t.log(
      `ended ${end.status}, phase ${end.phase}, attempts ${end.attempts}${end.lastError ? `: ${end.lastError}` : ''}`,
    );
    t.true(
      end.status === 'succeeded' ? end.phase === 'succeeded' : ['rolled_back', 'failed'].includes(end.phase ?? ''),
      `${end.status} ${end.phase}`,
    );
    t.true(end.attempts >= kills.length + 1, 'each interrupted attempt was resumed by another one');
    // current boots: the API answers on the release current points at.
    const current = currentRelease(platform);
    const version = await waitForApiRelease(platform, current);
    t.is(version.release, current);
    const counts = await loop.stop();
    t.is(counts.failed, 0, counts.errors.slice(0, 5).join('; '));
  },
);

// Kills before promotion do not change what the upgrade does next (a resumed attempt starts over from
// stage), so the release that fails its postflight takes them before the kill in its rollback.
test.serial(
  'SIGKILLs of the host agent as an upgrade enters stage, then candidate, then the rollback of a release that migrated control.db, a new agent after each: the rollback finishes and the previous release boots on the newer schema',
  async (t) => {
    t.timeout(240_000);
    const variant = treeVariant(t, tree, '0.2.9-migrates', MIGRATES_THEN_FAILS);
    const migrations = newestControlMigration(platform);
    const loop = requestLoop(addresses);
    t.teardown(() => loop.stop());
    const id = await queueLane(platform, 'upgrade', { source: variant });
    const kills = await killAsItEnters(t, id, ['stage', 'candidate', 'rollback']);
    const last = kills.at(-1);
    t.is(last?.stage, 'rollback', `the upgrade ended before its rollback: ${last?.status} ${last?.lastError}`);
    const end = await waitForLaneRow(platform, id);
    // A failed rollback says why in the API's own log (the release it started exited).
    t.is(
      end.phase,
      'rolled_back',
      `${end.status} ${end.lastError}; api log: ${tail(path.join(platform.platformDir, 'api.log'), 3000)}; agent log: ${tail(path.join(platform.platformDir, 'agent.log'), 1500)}`,
    );
    t.true(end.attempts >= kills.length + 1, 'each interrupted attempt was resumed by another one');
    // The rollback target: the release current pointed at before.
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
