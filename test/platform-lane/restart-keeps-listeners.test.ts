// tier: full
import test from 'ava';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { failures, latencyPercentile, startLoad } from '../helpers/http-load.js';
import { runningAgent } from '../../platform/platform-lane/index.js';
import { REPO_ROOT } from '../helpers/repo.js';
import {
  builtTree,
  deployAndWait,
  queueLane,
  startLanePlatform,
  tail,
  treeVariant,
  waitForLane,
  waitUntil,
} from './lane-harness.js';

const REPO = REPO_ROOT;

test('A platform upgrade restarts the API through the host agent while the gateway keeps serving an app under load: no request fails', async (t) => {
  // Building the tree (tsc of the whole checkout when run from the sources) takes minutes on a loaded
  // 2-core host and measures the machine, not the restart: the platform's own bound starts after it.
  t.timeout(600_000);
  const tree = await builtTree();
  t.timeout(300_000);
  const platform = await startLanePlatform(t, tree);
  // The sample app as a new user has it, routed by the wake gateway on the API's port.
  fs.cpSync(path.join(REPO, 'fixtures/apps/hello-web'), path.join(platform.appsDir, 'hello-web'), { recursive: true });
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.test', 'add', '-A'], { cwd: platform.appsDir });
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.test', 'commit', '-qm', 'hello-web'], {
    cwd: platform.appsDir,
  });
  const deployed = await waitUntil(
    async () => {
      const op = await deployAndWait(platform, 'hello-web').catch(() => undefined);
      return op?.status === 'succeeded' ? op : undefined;
    },
    60_000,
    `hello-web to deploy; api log: ${tail(path.join(platform.root, 'first-api.log'))}`,
    500,
  );
  t.is(deployed.status, 'succeeded');

  const before = platform.api()!;
  const load = startLoad({ url: platform.url, host: 'hello.example.test' });
  // Steady traffic first: the first API serves it.
  await waitUntil(() => load.samples.filter((s) => s.ok).length >= 50, 20_000, 'load to flow');
  const next = treeVariant(t, tree, '0.1.2-handoff');
  const id = await queueLane(platform, 'upgrade', { source: next });
  // The agent that runs the upgrade (the first API launched it and gave it the listeners).
  const upgrader = await waitUntil(() => runningAgent(platform.platformDir), 30_000, 'the host agent');
  const view = await waitForLane(platform, id);
  // Traffic after the restart is served by the new API, through the same socket.
  const served = load.samples.length;
  await waitUntil(() => load.samples.length >= served + 50, 20_000, 'load to flow after the restart');
  const samples = await load.stop();

  t.is(view.operation.status, 'succeeded', JSON.stringify(view.steps));
  const after = platform.api()!;
  t.not(after.pid, before.pid, 'the API process was replaced');
  t.is(after.url, before.url);
  t.deepEqual(failures(samples), {}, `of ${samples.length} requests`);
  // The load ran before, across and after the restart.
  t.true(samples.length > 100);
  t.log(
    `${samples.length} requests, none failed; p99 ${latencyPercentile(samples, 99).toFixed(0)} ms, max ${latencyPercentile(samples, 100).toFixed(0)} ms`,
  );
  // The agent of the old release hands over to one of the new release, and the listeners with it.
  // Not the upgrader: it hands over only once it sees the lane idle, which may come after the load stopped.
  const successor = await waitUntil(
    () => {
      const pid = runningAgent(platform.platformDir);
      return pid !== upgrader ? pid : undefined;
    },
    60_000,
    'the successor agent',
  );
  const holding = await waitUntil(
    () => {
      const lines = tail(path.join(platform.platformDir, 'agent.log'), 200_000)
        .split('\n')
        .filter((l) => l.includes('holding the API listeners across restarts'));
      return lines.some((l) => l.includes(`"pid":${successor}`)) ? lines : undefined;
    },
    30_000,
    'the successor agent to hold the listeners',
  );
  t.true(holding.length >= 2, holding.join('\n'));
});
