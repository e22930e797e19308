/**
 * bench/containers: apps as podman containers on the local driver (ADR 0219) beside the same apps
 * as host processes, in one run. Two control planes in this process, each on its own temp data
 * folder and its own apps repository holding a copy of the sample `fixtures/apps/hello-web`: one
 * with SVC_CONTAINER_RUNTIME=native, one with SVC_CONTAINER_RUNTIME=podman. Prints (does not
 * assert), each container figure beside its native baseline measured in the same run (deploys and
 * wakes alternated one by one):
 *  1. deploy of hello-web, queue to success (the operation's createdAt to finishedAt), warm layer
 *     cache (one deploy before the timed ones), `--runs` deploys each after a code-only commit (one
 *     line of server.mjs changed): p50, p90, min, max, and the p50 of each pipeline step. Goal:
 *     container p50 < 3 s.
 *  2. image build, cold and warm: the fixture's Dockerfile gains a dependency layer (`RUN` with a
 *     per-run unique token, writing a stamp file, before `COPY server.mjs`) that no cache holds,
 *     and a deploy builds it (cold); then a code-only commit is deployed (warm). The build step's
 *     time of each, and whether the warm image reused the dependency layer (its stamp file is the
 *     cold image's). The native build step of the same commits is the baseline. Then two code-only
 *     builds straight through `ImageBuilder` split a warm build step into podman's build (with the
 *     steps it took from the cache) and the signed push, pull by digest and inspect after it.
 *  3. cold wake overhead: `hello-cold`, a copy of hello-web at `scaling.min: 0` behind the wake
 *     gateway (Host cold.example.test to the control plane's port), reports its own boot time
 *     (node's `performance.timeOrigin` to listening); the overhead is the waking request's response
 *     time minus that boot time, p50 over `--wakes` wakes (scaled to zero by the idle sweep before
 *     each). Goal: container overhead p50 < 300 ms. A third plane with SVC_CONTAINER_PREPARE=false
 *     wakes in turn with them: its container is created at the wake, not when it reached zero
 *     (ADR 0228).
 *  4. zero-downtime: a closed-loop load (test/helpers/http-load: 4 keep-alive and 4 new-connection
 *     clients) through the wake gateway (Host hello.example.test) while `--zd-deploys` code-only
 *     deploys of hello-web run; failed requests (non-2xx, reset, no answer in 5 s) are counted.
 *     Goal: 0 failed.
 * Then a table of the figures, their baselines and goals, with the load average at start and end.
 *
 * Run: node --import tsx bench/containers.ts [--runs N] [--wakes N] [--zd-deploys N]
 */
import { spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startControlPlane } from '../wiring/control-plane.js';
import { silentLogger } from '../platform/logger.js';
import { managedRegistryLayout } from '../platform/containers/managed-registry.js';
import { ImageBuilder } from '../platform/containers/image-builder.js';
import {
  ensureImageSigningKey,
  pushSignedImage,
  writeImageSignatureConfig,
} from '../platform/containers/image-signature.js';
import { Podman } from '../platform/containers/podman.js';
import { closePlaneAndStopApps } from '../test/helpers/stop-apps.js';
import { NODE_BASE, readImageFile, removeRegistryImages } from '../test/helpers/containers.js';
import { failures, latencyPercentile, startLoad, within, type LoadSample } from '../test/helpers/http-load.js';
import { waitForApp } from '../test/pipeline/pipeline-fixture.js';
import { removeAppUsersCreatedHere } from './lib/app-users.js';
import {
  buildMs,
  codeChange,
  deploy,
  releaseOf,
  sideConfig,
  stepMs,
  type Runtime,
  type Side,
  type Step,
} from './lib/container-bench-fixture.js';
import { describeWakes, wakeInTurn, type WakeRow } from './lib/container-wakes.js';
import { arg, percentile } from './lib/bench-args.js';
import { waitUntil } from './lib/wait-until.js';

const runs = arg('runs', 7);
const wakes = arg('wakes', 10);
const zdDeploys = arg('zd-deploys', 3);

const loadAtStart = os.loadavg();
const repoRoot = path.resolve(import.meta.dirname, '..');
const sample = path.join(repoRoot, 'fixtures/apps/hello-web');
if (spawnSync('podman', ['image', 'exists', NODE_BASE]).status !== 0)
  throw new Error(`${NODE_BASE} is not in podman's storage: run scripts/base-images.sh first`);

const RUNTIMES: readonly Runtime[] = ['native', 'container'];

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-containers-'));
// Apps run as their own users below it (ADR 0047): they must be able to enter it.
fs.chmodSync(root, 0o711);
const problems: string[] = [];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const stats = (xs: readonly number[]) =>
  xs.length === 0
    ? 'n/a'
    : `p50 ${percentile(xs, 50).toFixed(0)} ms, p90 ${percentile(xs, 90).toFixed(0)} ms, min ${Math.min(...xs).toFixed(0)} ms, max ${Math.max(...xs).toFixed(0)} ms`;
const p50 = (xs: readonly number[]) => (xs.length === 0 ? NaN : percentile(xs, 50));
const fmt = (ms: number) => (Number.isFinite(ms) ? `${ms.toFixed(0)} ms` : 'n/a');

const sides: Record<Runtime, Side> = {
  native: { runtime: 'native', config: sideConfig(root, sample, 'native') },
  container: { runtime: 'container', config: sideConfig(root, sample, 'container') },
};

// Results, per runtime.
const deployTimes: Record<Runtime, number[]> = { native: [], container: [] };
const deploySteps: Record<Runtime, Map<string, number[]>> = { native: new Map(), container: new Map() };
const builds: Record<Runtime, { cold: number; warm: number; reused?: boolean }> = {
  native: { cold: NaN, warm: NaN },
  container: { cold: NaN, warm: NaN },
};
/** The plane whose containers are created at the wake (SVC_CONTAINER_PREPARE=false): phase 3 only. */
const unprepared: Side = {
  runtime: 'container',
  config: sideConfig(root, sample, 'container', 'unprepared', { SVC_CONTAINER_PREPARE: 'false' }),
};
type WakeSide = Runtime | 'unprepared';
const WAKE_SIDES: readonly WakeSide[] = ['native', 'container', 'unprepared'];
const wakeRows: Record<WakeSide, WakeRow[]> = {
  native: [],
  container: [],
  unprepared: [],
};
const zd: Record<Runtime, { samples: LoadSample[]; during: LoadSample[]; steadyP99: number; deploys: number[] }> = {
  native: { samples: [], during: [], steadyP99: NaN, deploys: [] },
  container: { samples: [], during: [], steadyP99: NaN, deploys: [] },
};
let registryHost: string | undefined;
const buildSplits: { total: number; build: number; push: number; cached: number; steps: number }[] = [];

/** Phase 1: code-only deploys, alternated native and container. */
async function deploys(): Promise<void> {
  for (let i = 1; i <= runs; i += 1) {
    for (const runtime of i % 2 === 1 ? RUNTIMES : [...RUNTIMES].reverse()) {
      const side = sides[runtime];
      codeChange(side, `run ${i}`);
      const done = await deploy(side, 'hello-web');
      deployTimes[runtime].push(done.ms);
      for (const s of done.steps) {
        const list = deploySteps[runtime].get(s.step) ?? [];
        list.push(stepMs(s));
        deploySteps[runtime].set(s.step, list);
      }
    }
  }
  for (const runtime of RUNTIMES) {
    console.log(`1. deploy queue-to-success, ${runtime} (${runs} code-only deploys): ${stats(deployTimes[runtime])}`);
    console.log(
      `   step p50: ${[...deploySteps[runtime]].map(([step, ms]) => `${step} ${p50(ms).toFixed(0)}`).join(', ')} (ms)`,
    );
  }
}

/** The dependency layer's stamp of a release: in the image (container) or the release folder (native). */
function stamp(side: Side): string {
  const { dir, manifest } = releaseOf(side, 'hello-web');
  if (side.runtime === 'container') {
    if (!manifest.image) throw new Error('the container release names no image');
    return readImageFile(manifest.image, '/app/deps-stamp');
  }
  const found = (fs.readdirSync(dir, { recursive: true }) as string[]).find((f) => path.basename(f) === 'deps-stamp');
  if (!found) throw new Error(`native release ${dir} holds no deps-stamp`);
  return fs.readFileSync(path.join(dir, found), 'utf8').trim();
}

/** Phase 2: a dependency layer no cache holds (cold build), then a code-only change (warm build). */
async function imageBuilds(): Promise<void> {
  const token = randomUUID();
  for (const runtime of RUNTIMES) {
    const side = sides[runtime];
    const file = path.join(side.config.appsDir, 'hello-web', 'Dockerfile');
    const text = fs.readFileSync(file, 'utf8');
    const anchor = 'COPY server.mjs ./';
    if (!text.includes(anchor)) throw new Error(`the Dockerfile of hello-web no longer holds ${anchor}`);
    // Relative paths: WORKDIR /app is the image's /app, and the release folder natively.
    fs.writeFileSync(
      file,
      text.replace(anchor, `RUN echo "dependencies ${token}" > deps-token && date +%s%N > deps-stamp\n${anchor}`),
    );
    codeChange(side, 'dependency layer');
    const cold = await deploy(side, 'hello-web');
    const coldStamp = stamp(side);
    codeChange(side, 'after the dependency layer');
    const warm = await deploy(side, 'hello-web');
    const warmStamp = stamp(side);
    builds[runtime] = { cold: buildMs(cold), warm: buildMs(warm), reused: coldStamp === warmStamp };
    console.log(
      `2. image build, ${runtime}: cold (new dependency layer) build step ${fmt(builds[runtime].cold)} (deploy ${fmt(cold.ms)}); warm (code-only) build step ${fmt(builds[runtime].warm)} (deploy ${fmt(warm.ms)}); dependency layer reused: ${coldStamp === warmStamp ? 'yes' : 'no'} (stamps ${coldStamp} / ${warmStamp})`,
    );
  }
}

/**
 * Where a warm build step's time goes: the container plane's Dockerfile built again through
 * `ImageBuilder` (the pipeline's own builder, with the plane's registry, registries.conf and signing
 * key) under a throw-away commit after a code-only change, timing podman's build (to its last
 * output line) apart from the signed push, the pull by digest and the inspect after it.
 */
async function warmBuildSplit(): Promise<void> {
  const dataDir = sides.container.config.dataDir;
  const registriesConf = path.join(dataDir, 'containers', 'registries.conf');
  const key = await ensureImageSigningKey(dataDir);
  const config = await writeImageSignatureConfig({
    dataDir,
    registryHost: registryHost!,
    registriesConf,
    signingKey: key,
    extraTrustedKeyPaths: sides.container.config.imageTrustedKeys,
  });
  const builder = new ImageBuilder({
    podman: new Podman({ runtime: sides.container.config.containerOciRuntime, registriesConf }),
    registryHost: registryHost!,
    signing: { config, key },
  });
  const context = path.join(root, 'split-context');
  fs.cpSync(path.join(sides.container.config.appsDir, 'hello-web'), context, { recursive: true });
  for (let i = 1; i <= 2; i += 1) {
    // A code-only change, as in a deploy: COPY server.mjs and what follows it run again.
    const server = path.join(context, 'server.mjs');
    fs.writeFileSync(server, `// split build ${i}\n${fs.readFileSync(server, 'utf8')}`);
    let lastLine = 0;
    // Each STEP line, and whether podman took it from the cache (`--> Using cache <id>` follows it).
    const steps: { text: string; cached: boolean }[] = [];
    const started = performance.now();
    const built = await builder.build({
      app: 'hello-web',
      commit: randomBytes(20).toString('hex'),
      contextDir: context,
      dockerfile: path.join(context, 'Dockerfile'),
      buildArgs: {},
      onLine: (line) => {
        lastLine = performance.now();
        if (/^STEP \d+\/\d+: /.test(line)) steps.push({ text: line.replace(/^STEP \d+\/\d+: /, ''), cached: false });
        else if (/Using cache/.test(line) && steps.length > 0) steps[steps.length - 1]!.cached = true;
      },
    });
    const total = performance.now() - started;
    // The push alone: the same image signed and pushed again under another tag (every layer of it
    // then in the registry, as the base layers are at a code-only deploy's push).
    const pushStarted = performance.now();
    await pushSignedImage({
      config,
      signingKey: key,
      source: built.tag,
      destination: `${registryHost!}/hello-web:${randomBytes(20).toString('hex')}`,
    });
    const push = performance.now() - pushStarted;
    const cached = steps.filter((s) => s.cached).length;
    buildSplits.push({ total, build: lastLine - started, push, cached, steps: steps.length });
    console.log(
      `2. warm build through ImageBuilder ${i}: ${fmt(total)} = podman build ${fmt(lastLine - started)} (${cached} of ${steps.length} steps from the cache; run: ${steps
        .filter((s) => !s.cached && !s.text.startsWith('FROM'))
        .map((s) => s.text.slice(0, 60))
        .join(
          ' | ',
        )}) + signed push, pull by digest and inspect ${fmt(total - (lastLine - started))}; a signed re-push of the image alone: ${fmt(push)}`,
    );
  }
}

/** Phase 3: cold wakes through the gateway, alternated native, container and unprepared container. */
async function coldWakes(): Promise<void> {
  const sidesByName = { native: sides.native, container: sides.container, unprepared };
  await wakeInTurn(sidesByName, wakes, wakeRows, waitUntil);
  for (const name of WAKE_SIDES) console.log(`3. cold wake, ${name}${describeWakes(wakeRows[name])}`);
}

/** Phase 4: code-only deploys under a closed-loop load through the gateway; native first, then container. */
async function zeroDowntime(): Promise<void> {
  for (const runtime of RUNTIMES) {
    const side = sides[runtime];
    const load = startLoad({ url: side.plane!.url, host: 'hello.example.test' });
    const steadyFrom = performance.now();
    await sleep(2000);
    const steadyTo = performance.now();
    const windows: { from: number; to: number; steps: readonly Step[] }[] = [];
    let error: Error | undefined;
    try {
      for (let i = 1; i <= zdDeploys; i += 1) {
        const from = performance.now();
        codeChange(side, `under load ${i}`);
        const done = await deploy(side, 'hello-web');
        zd[runtime].deploys.push(done.ms);
        // The old allocation's drain right after the deploy counts for it.
        await sleep(1000);
        windows.push({ from, to: performance.now(), steps: done.steps });
      }
    } catch (e) {
      error = e instanceof Error ? e : new Error(JSON.stringify(e));
    }
    const samples = await load.stop();
    const during = windows.flatMap((w) => within(samples, w.from, w.to));
    zd[runtime] = {
      ...zd[runtime],
      samples,
      during,
      steadyP99: latencyPercentile(within(samples, steadyFrom, steadyTo), 99),
    };
    const failed = samples.filter((s) => !s.ok);
    console.log(
      `4. zero-downtime, ${runtime}: ${zdDeploys} deploys (queue-to-success ${zd[runtime].deploys.map((ms) => ms.toFixed(0)).join(', ')} ms) under load: ${during.length} requests during the deploys, ${failed.length} of ${samples.length} failed in all ${JSON.stringify(failures(samples))}; p99 steady ${zd[runtime].steadyP99.toFixed(1)} ms, during the deploys ${latencyPercentile(during, 99).toFixed(1)} ms`,
    );
    for (const s of failed.slice(0, 10)) {
      const w = windows.findIndex((x) => s.startMs >= x.from && s.startMs < x.to);
      console.log(
        `   failed: ${s.outcome} after ${(s.endMs - s.startMs).toFixed(0)} ms, ${w >= 0 ? `${(s.startMs - windows[w]!.from).toFixed(0)} ms into deploy ${w + 1}` : 'outside the deploys'}`,
      );
    }
    if (failed.length > 0)
      for (const [i, w] of windows.entries())
        console.log(
          `   deploy ${i + 1} steps: ${w.steps.map((s) => `${s.step} ${s.startedAt.slice(11, 23)}-${(s.endedAt ?? '').slice(11, 23)}`).join(', ')}`,
        );
    if (error) throw error;
  }
}

async function phase(name: string, fn: () => Promise<void>): Promise<void> {
  try {
    await fn();
  } catch (error) {
    const text = `${name}: ${error instanceof Error ? error.message : String(error)}`;
    problems.push(text);
    console.log(`FAILED ${text}`);
  }
}

try {
  // One plane after the other, each with its apps discovered and deployed once (the container side's
  // first deploy fills the layer cache for hello-web: the timed deploys run with a warm cache).
  for (const runtime of RUNTIMES) {
    const side = sides[runtime];
    side.plane = await startControlPlane(side.config, silentLogger());
    await waitForApp(side.plane, 'hello-web');
    await waitForApp(side.plane, 'hello-cold');
  }
  for (const runtime of RUNTIMES) {
    const side = sides[runtime];
    const first = await deploy(side, 'hello-web');
    const builder = releaseOf(side, 'hello-web').manifest.builder;
    const expected = runtime === 'container' ? 'podman' : 'native';
    if (builder !== expected) throw new Error(`${runtime}: hello-web was built by ${builder}, not ${expected}`);
    console.log(`first deploy (not counted), ${runtime}: ${fmt(first.ms)}, build step ${fmt(buildMs(first))}`);
    await deploy(side, 'hello-cold');
  }
  unprepared.plane = await startControlPlane(unprepared.config, silentLogger());
  await waitForApp(unprepared.plane, 'hello-cold');
  await deploy(unprepared, 'hello-cold');
  registryHost = releaseOf(sides.container, 'hello-web').manifest.image!.split('/')[0];

  await phase('1. deploys', deploys);
  await phase('2. image builds', imageBuilds);
  await phase('2. warm build split', warmBuildSplit);
  await phase('3. cold wakes', coldWakes);
  await phase('4. zero-downtime', zeroDowntime);

  // The table.
  const loadAtEnd = os.loadavg();
  const wakeOverhead = (runtime: WakeSide) => p50(wakeRows[runtime].map((r) => r.total - r.boot));
  const zdFailed = (runtime: Runtime) => zd[runtime].samples.filter((s) => !s.ok).length;
  const mark = (ok: boolean | undefined) => (ok === undefined ? '' : ok ? ' (met)' : ' (NOT met)');
  const rows: [string, string, string, string][] = [
    [
      `deploy queue-to-success p50 (${deployTimes.container.length} / ${deployTimes.native.length} runs)`,
      fmt(p50(deployTimes.container)),
      fmt(p50(deployTimes.native)),
      `< 3000 ms${mark(deployTimes.container.length > 0 ? p50(deployTimes.container) < 3000 : undefined)}`,
    ],
    [
      'deploy queue-to-success p90',
      fmt(percentile(deployTimes.container, 90)),
      fmt(percentile(deployTimes.native, 90)),
      '',
    ],
    [
      'deploy queue-to-success min / max',
      deployTimes.container.length
        ? `${fmt(Math.min(...deployTimes.container))} / ${fmt(Math.max(...deployTimes.container))}`
        : 'n/a',
      deployTimes.native.length
        ? `${fmt(Math.min(...deployTimes.native))} / ${fmt(Math.max(...deployTimes.native))}`
        : 'n/a',
      '',
    ],
    ['build step, cold (new dependency layer)', fmt(builds.container.cold), fmt(builds.native.cold), ''],
    ['build step, warm (code-only change)', fmt(builds.container.warm), fmt(builds.native.warm), ''],
    [
      'warm build: podman build / push+pull+inspect',
      buildSplits.length
        ? `${fmt(p50(buildSplits.map((b) => b.build)))} / ${fmt(p50(buildSplits.map((b) => b.total - b.build)))}`
        : 'n/a',
      '',
      '',
    ],
    [
      'warm build: signed push alone (re-push)',
      buildSplits.length ? fmt(p50(buildSplits.map((b) => b.push))) : 'n/a',
      '',
      '',
    ],
    [
      'dependency layer reused on warm build',
      builds.container.reused === undefined ? 'n/a' : builds.container.reused ? 'yes' : 'no',
      builds.native.reused === undefined ? 'n/a' : builds.native.reused ? 'yes' : 'no (RUN re-runs)',
      `yes${mark(builds.container.reused)}`,
    ],
    [
      `cold wake overhead p50 (${wakeRows.container.length} / ${wakeRows.native.length} wakes)`,
      fmt(wakeOverhead('container')),
      fmt(wakeOverhead('native')),
      `< 300 ms${mark(wakeRows.container.length > 0 ? wakeOverhead('container') < 300 : undefined)}`,
    ],
    [
      `cold wake overhead p50, container created at the wake (${wakeRows.unprepared.length} wakes)`,
      fmt(wakeOverhead('unprepared')),
      '',
      '',
    ],
    [
      'cold wake response p50 (with boot)',
      fmt(p50(wakeRows.container.map((r) => r.total))),
      fmt(p50(wakeRows.native.map((r) => r.total))),
      '',
    ],
    [
      `zero-downtime failed requests (${zdDeploys} deploys)`,
      zd.container.samples.length ? `${zdFailed('container')} of ${zd.container.samples.length}` : 'n/a',
      zd.native.samples.length ? `${zdFailed('native')} of ${zd.native.samples.length}` : 'n/a',
      `0${mark(zd.container.samples.length > 0 ? zdFailed('container') === 0 : undefined)}`,
    ],
  ];
  const widths = [0, 1, 2, 3].map((c) =>
    Math.max(...[['figure', 'container', 'native (baseline)', 'goal'], ...rows].map((r) => r[c]!.length)),
  );
  const line = (r: readonly string[]) => r.map((cell, c) => cell.padEnd(widths[c]!)).join('  ');
  console.log('');
  console.log(line(['figure', 'container', 'native (baseline)', 'goal']));
  for (const r of rows) console.log(line(r));
  const avg = (l: number[]) => l.map((x) => x.toFixed(2)).join(' ');
  console.log(
    `load average (1, 5, 15 min): start ${avg(loadAtStart)}, end ${avg(loadAtEnd)} (${os.cpus().length} cores)`,
  );
  if (problems.length > 0) console.log(`failures:\n  ${problems.join('\n  ')}`);
} finally {
  // Planes first (no controller re-submits a job meanwhile), then their app processes and containers.
  for (const side of [...RUNTIMES.map((runtime) => sides[runtime]), unprepared])
    if (side.plane) await closePlaneAndStopApps(side.plane, side.config).catch((e: unknown) => console.error(e));
  // The images the container plane's builds left in podman's storage.
  const state = managedRegistryLayout(sides.container.config.dataDir).state;
  if (!registryHost && fs.existsSync(state))
    registryHost = `127.0.0.1:${(JSON.parse(fs.readFileSync(state, 'utf8')) as { port: number }).port}`;
  if (registryHost) removeRegistryImages(registryHost);
  const unpreparedState = managedRegistryLayout(unprepared.config.dataDir).state;
  if (fs.existsSync(unpreparedState))
    removeRegistryImages(
      `127.0.0.1:${(JSON.parse(fs.readFileSync(unpreparedState, 'utf8')) as { port: number }).port}`,
    );
  // The app users this run created go with it (ADR 0191).
  await removeAppUsersCreatedHere();
  fs.rmSync(root, { recursive: true, force: true });
}
