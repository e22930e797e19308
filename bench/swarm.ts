/**
 * bench/swarm: the sample hello-web on a real single-node Docker Swarm (the swarm driver, ADR 0229)
 * beside the local driver running it as a podman container, in one run. Two control planes in this
 * process, each on its own temp data folder and apps repository (the fixture of bench/containers),
 * and a dockerd of its own in a temp folder (test/helpers/swarm.ts). Prints, each swarm figure beside
 * the local container figure of the same run (deploys and wakes alternated):
 *  1. deploy of hello-web, queue to success, `--runs` code-only deploys: p50, min, max.
 *  2. zero-downtime: 4 keep-alive clients through the wake gateway (Host hello.example.test) while
 *     `--zd-deploys` code-only deploys run; failed requests (non-2xx, reset, no answer in 5 s).
 *     Goal: 0 failed.
 *  3. cold wake from zero (`hello-cold` at `scaling.min: 0`): the waking request's response time
 *     minus the app's own boot time, p50 over `--wakes` wakes.
 *
 * Run: node --import tsx bench/swarm.ts [--runs N] [--wakes N] [--zd-deploys N]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startControlPlane } from '../wiring/control-plane.js';
import { silentLogger } from '../platform/logger.js';
import { closePlaneAndStopApps } from '../test/helpers/stop-apps.js';
import { removeRegistryImages } from '../test/helpers/containers.js';
import { failures, startLoad } from '../test/helpers/http-load.js';
import { startSwarm } from '../test/helpers/swarm.js';
import { managedRegistryLayout } from '../platform/containers/managed-registry.js';
import { waitForApp } from '../test/pipeline/pipeline-fixture.js';
import { removeAppUsersCreatedHere } from './lib/app-users.js';
import { codeChange, deploy, sideConfig, type Side } from './lib/container-bench-fixture.js';
import { describeWakes, wakeInTurn, type WakeRow } from './lib/container-wakes.js';
import { arg, percentile } from './lib/bench-args.js';
import { waitUntil } from './lib/wait-until.js';

const runs = arg('runs', 5);
const wakes = arg('wakes', 8);
const zdDeploys = arg('zd-deploys', 2);
const loadAtStart = os.loadavg();
const repoRoot = path.resolve(import.meta.dirname, '..');
const sample = path.join(repoRoot, 'fixtures/apps/hello-web');
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-swarm-'));
fs.chmodSync(root, 0o711);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type Name = 'container' | 'swarm';
const NAMES: readonly Name[] = ['container', 'swarm'];
const swarm = await startSwarm(path.join(root, 'engine'));
const sides: Record<Name, Side> = {
  container: { runtime: 'container', config: sideConfig(root, sample, 'container') },
  swarm: {
    runtime: 'container',
    config: sideConfig(root, sample, 'container', 'swarm', {
      SVC_SCHEDULER_DRIVER: 'swarm',
      SVC_SWARM_HOST: swarm.host,
    }),
  },
};
const deployTimes: Record<Name, number[]> = { container: [], swarm: [] };
const zd: Record<Name, { requests: number; failed: Record<string, number> }> = {
  container: { requests: 0, failed: {} },
  swarm: { requests: 0, failed: {} },
};
const wakeRows: Record<Name, WakeRow[]> = { container: [], swarm: [] };
const stats = (xs: readonly number[]) =>
  xs.length === 0
    ? 'n/a'
    : `p50 ${percentile(xs, 50).toFixed(0)} ms, min ${Math.min(...xs).toFixed(0)} ms, max ${Math.max(...xs).toFixed(0)} ms`;

try {
  for (const name of NAMES) {
    const side = sides[name];
    side.plane = await startControlPlane(side.config, silentLogger());
    await waitForApp(side.plane, 'hello-web');
    await waitForApp(side.plane, 'hello-cold');
    await deploy(side, 'hello-web');
    await deploy(side, 'hello-cold');
  }
  for (let i = 1; i <= runs; i += 1)
    for (const name of i % 2 === 1 ? NAMES : [...NAMES].reverse()) {
      codeChange(sides[name], `run ${i}`);
      deployTimes[name].push((await deploy(sides[name], 'hello-web')).ms);
    }
  for (const name of NAMES)
    console.log(`1. deploy of hello-web, queue to success, ${name} (${runs} runs): ${stats(deployTimes[name])}`);

  for (const name of NAMES) {
    const side = sides[name];
    const load = startLoad({
      url: side.plane!.url,
      host: 'hello.example.test',
      keepAliveClients: 4,
      newConnectionClients: 0,
    });
    for (let i = 1; i <= zdDeploys; i += 1) {
      codeChange(side, `under load ${i}`);
      await deploy(side, 'hello-web');
    }
    await sleep(1000);
    const samples = await load.stop();
    zd[name] = { requests: samples.length, failed: failures(samples) };
    console.log(
      `2. zero-downtime, ${name}: ${zdDeploys} deploys under 4 keep-alive clients: ${samples.length} requests, failed ${JSON.stringify(zd[name].failed)}`,
    );
  }

  await wakeInTurn(sides, wakes, wakeRows, waitUntil);
  for (const name of NAMES) console.log(`3. cold wake, ${name}${describeWakes(wakeRows[name])}`);

  const overhead = (rows: readonly WakeRow[]) =>
    percentile(
      rows.map((r) => r.total - r.boot),
      50,
    ).toFixed(0);
  console.log('\n| figure | swarm | local container (same run) | goal |');
  console.log('|---|---|---|---|');
  console.log(
    `| deploy of hello-web, queue to success, p50 | ${percentile(deployTimes.swarm, 50).toFixed(0)} ms | ${percentile(deployTimes.container, 50).toFixed(0)} ms | |`,
  );
  console.log(
    `| zero-downtime deploys under 4 keep-alive clients | ${Object.values(zd.swarm.failed).reduce((s, v) => s + v, 0)} failed of ${zd.swarm.requests} | ${Object.values(zd.container.failed).reduce((s, v) => s + v, 0)} failed of ${zd.container.requests} | 0 failed |`,
  );
  console.log(
    `| cold wake overhead from zero, p50 | ${overhead(wakeRows.swarm)} ms | ${overhead(wakeRows.container)} ms | |`,
  );
  console.log(
    `\nload average at start ${loadAtStart.map((l) => l.toFixed(2)).join(' ')}, at end ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
} finally {
  for (const name of NAMES) {
    const side = sides[name];
    if (!side.plane) continue;
    const registry = JSON.parse(fs.readFileSync(managedRegistryLayout(side.config.dataDir).state, 'utf8')) as {
      port: number;
    };
    await closePlaneAndStopApps(side.plane, side.config);
    removeRegistryImages(`127.0.0.1:${registry.port}`);
  }
  await swarm.stop();
  await removeAppUsersCreatedHere();
  fs.rmSync(root, { recursive: true, force: true });
}
