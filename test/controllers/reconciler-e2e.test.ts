// tier: full
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { startControlPlane, type ControlPlane } from '../../wiring/control-plane.js';
import { ReleaseBuilder } from '../../platform/release-builder/index.js';
import { silentLogger } from '../../platform/logger.js';
import { isProcessAlive } from '../../platform/local-scheduler/index.js';
import { setAppRelease } from '../../store/control/apps.js';
import { request } from '../helpers/servers.js';
import { testConfig } from '../helpers/test-config.js';
import { tempDir } from '../helpers/temp-dir.js';
import { waitForReconciled } from '../helpers/wait-for.js';
import { runSvc } from '../helpers/cli.js';
import { closePlaneAndStopApps } from '../helpers/stop-apps.js';

const SERVER = `import http from 'node:http';
const server = http.createServer((req, res) => {
  if (req.url === '/healthz') { res.writeHead(200); res.end('ok'); return; }
  res.writeHead(200, { 'content-type': 'text/plain' }); res.end('hello ' + process.pid);
});
server.listen(Number(process.env.PORT), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
`;

const HOG = `const chunks = []; setInterval(() => { chunks.push(Buffer.alloc(16 * 1024 * 1024, 1)); }, 50);`;

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.test', ...args], {
    cwd,
    encoding: 'utf8',
  }).trim();
}

function spec(codeRepo: string, min: number): string {
  return `# yaml-language-server: $schema=../../schemas/infraspec.schema.json
name: hello
deploy: true
repo:
  url: ${codeRepo}
processes:
  web:
    port: 8080
    health:
      path: /healthz
      interval: 100ms
      timeout: 1s
    scaling:
      min: ${min}
    resources:
      memory: 256
  hog:
    command: node hog.mjs
    resources:
      memory: 64
`;
}

function writeSpec(appsDir: string, text: string, message: string): void {
  fs.mkdirSync(path.join(appsDir, 'hello'), { recursive: true });
  fs.writeFileSync(path.join(appsDir, 'hello', 'infraspec.yaml'), text);
  git(appsDir, 'add', '-A');
  git(appsDir, 'commit', '-q', '-m', message);
}

async function appView(plane: ControlPlane): Promise<any> {
  const response = await request(`${plane.url}/api/apps/hello`);
  return response.status === 200 ? response.body : undefined;
}

const controllers = (plane: ControlPlane) => [plane.reconcilers.specController, plane.reconcilers.appController];
const condition = (app: any, type: string) => app?.conditions.find((c: { type: string }) => c.type === type)?.status;
const webAllocations = (app: any) =>
  app?.processes.find((p: { process: string }) => p.process === 'web')?.allocations ?? [];

test('the reconciler runs a committed app, scales it on a commit, restarts it, survives an API restart and stops it on delete', async (t) => {
  const root = tempDir(t);
  const code = path.join(root, 'code');
  fs.mkdirSync(code);
  fs.writeFileSync(path.join(code, 'server.mjs'), SERVER);
  fs.writeFileSync(path.join(code, 'hog.mjs'), HOG);
  fs.writeFileSync(
    path.join(code, 'Dockerfile'),
    'FROM node:20-alpine\nWORKDIR /app\nENV GREETING=hello\nCOPY . .\nCMD ["node", "server.mjs"]\n',
  );
  git(code, 'init', '-q', '-b', 'main');
  git(code, 'add', '-A');
  git(code, 'commit', '-q', '-m', 'app');

  const config = testConfig(t);
  fs.mkdirSync(config.appsDir, { recursive: true });
  git(config.appsDir, 'init', '-q', '-b', 'main');
  writeSpec(config.appsDir, spec(code, 1), 'add hello');

  let plane = await startControlPlane(config, silentLogger());
  // App processes outlive the API by design: stop them so a failed test leaves none behind.
  t.teardown(() => closePlaneAndStopApps(plane, config));
  const discovered = await waitForReconciled(
    controllers(plane),
    async () => {
      const app = await appView(plane);
      return condition(app, 'Valid') === 'True' && condition(app, 'Deployed') === 'False' ? app : undefined;
    },
    { what: 'the app to be discovered without a release' },
  );
  t.is(discovered.conditions.find((c: { type: string }) => c.type === 'Deployed').reason, 'NoRelease');

  // A release made by the release builder (the deploy pipeline does this later).
  const release = await new ReleaseBuilder({ dataDir: config.dataDir, logger: silentLogger() }).build({
    app: 'hello',
    repoUrl: code,
    ref: 'main',
  });
  setAppRelease(plane.db, 'hello', { commit: release.manifest.commit, dir: release.dir });
  plane.reconcilers.appController.enqueue('hello');
  const healthy = await waitForReconciled(
    controllers(plane),
    async () => {
      const app = await appView(plane);
      return condition(app, 'Healthy') === 'True' ? app : undefined;
    },
    { what: 'Healthy', timeoutMs: 30_000 },
  );
  const [first] = webAllocations(healthy);
  t.is(first.status, 'running');
  t.is(first.health, 'passing');
  const body = await (await fetch(`http://127.0.0.1:${first.ports.http}/`)).text();
  t.is(body, `hello ${first.pid}`);
  t.is(healthy.observedGeneration, healthy.generation);

  // The manifest, right-sizing and the CLI read the same runtime state.
  const manifest = await request(`${plane.url}/api/v1/services/manifest`);
  const web = manifest.body.services.find((s: { service: string }) => s.service === 'hello-web');
  t.is(web.reachability, 'private');
  t.deepEqual(
    web.instances.map((i: { port: number; status: string }) => [i.port, i.status]),
    [[first.ports.http, 'passing']],
  );
  t.is(manifest.body.services.find((s: { service: string }) => s.service === 'hello-hog').reachability, 'internal');
  // RSS is sampled by the driver's monitor tick, which raises no event: poll, bounded.
  let webSizing: any;
  for (
    const deadline = Date.now() + 5000;
    Date.now() < deadline;
    await new Promise((resolve) => setTimeout(resolve, 50))
  ) {
    const sizing = await request(`${plane.url}/api/resources/suggestions`);
    webSizing = sizing.body.suggestions.find((s: { process: string }) => s.process === 'web');
    if (webSizing?.peakMemoryMb > 0) break;
  }
  t.is(webSizing.memoryLimitMb, 256);
  t.true(webSizing.peakMemoryMb > 0);
  t.true(['at_risk', 'right_sized', 'overprovisioned'].includes(webSizing.status));
  const listing = await runSvc(['apps', '--api', plane.url]);
  t.is(listing.code, 0, listing.stderr);
  t.regex(listing.stdout, /^APP\s+DEPLOY\s+VALID\s+DEPLOYED\s+HEALTHY\s+READY/m);
  t.regex(listing.stdout, /^hello\s+yes\s+True\s+True\s+True\s/m);
  const status = await runSvc(['status', 'hello', '--api', plane.url]);
  t.is(status.code, 0, status.stderr);
  t.regex(status.stdout, /^Healthy\s+True\s+AllocationsHealthy/m);
  t.regex(
    status.stdout,
    new RegExp(`^web\\s+service\\s+local\\s+1/1\\s+\\S+\\s+running\\s+${first.pid}\\s+0\\s+passing`, 'm'),
  );
  const unknown = await runSvc(['status', 'nope', '--api', plane.url]);
  t.is(unknown.code, 4);
  t.regex(unknown.stderr, /app "nope" is not discovered/);

  // A committed change to scaling.min reaches the scheduler within a second, without a rebuild.
  const scheduler = await plane.reconcilers.targets.get();
  const schedulerUpdated = new Promise<number>((resolve) => {
    const unsubscribe = scheduler.watch((change) => {
      if (
        change.allocation.app === 'hello' &&
        change.allocation.taskGroup === 'web' &&
        change.allocation.id !== first.id
      ) {
        unsubscribe();
        resolve(Date.now());
      }
    });
  });
  const before = Date.now();
  writeSpec(config.appsDir, spec(code, 2), 'scale web to 2');
  const scaledAfterMs = (await schedulerUpdated) - before;
  const scaled = await waitForReconciled(
    controllers(plane),
    async () => {
      const app = await appView(plane);
      return webAllocations(app).filter((a: { status: string }) => a.status !== 'complete').length === 2
        ? app
        : undefined;
    },
    { what: 'two web allocations', timeoutMs: 5_000 },
  );
  t.true(scaledAfterMs < 1000, `the scheduler started the second allocation ${scaledAfterMs} ms after the commit`);
  t.true(
    webAllocations(scaled).some((a: { id: string; pid: number }) => a.id === first.id && a.pid === first.pid),
    'the first allocation kept running',
  );

  // Killing the process gets it restarted and counted.
  process.kill(first.pid, 'SIGKILL');
  const restarted = await waitForReconciled(
    controllers(plane),
    async () => {
      const alloc = webAllocations(await appView(plane)).find((a: { id: string }) => a.id === first.id);
      return alloc && alloc.restarts >= 1 && alloc.status === 'running' && alloc.pid !== null && alloc.pid !== first.pid
        ? alloc
        : undefined;
    },
    { what: 'a restart', timeoutMs: 15_000 },
  );
  t.is(restarted.restarts, 1);

  // The hog process exceeds its 64 MB limit and is reported OOM-killed.
  const oom = await waitForReconciled(
    controllers(plane),
    async () => {
      const hog = (await appView(plane))?.processes.find((p: { process: string }) => p.process === 'hog');
      return hog?.allocations.find((a: { oomKilled: boolean }) => a.oomKilled);
    },
    { what: 'an OOM kill', timeoutMs: 20_000 },
  );
  t.true(oom.oomKilled);

  // Restarting the API leaves the app process running with the same pid.
  const survivor = await waitForReconciled(
    controllers(plane),
    async () =>
      webAllocations(await appView(plane)).find(
        (a: { id: string; status: string; pid: number | null }) =>
          a.id === first.id && a.status === 'running' && a.pid !== null,
      ),
    { what: 'the restarted web allocation' },
  );
  await plane.close();
  process.kill(survivor.pid, 0);
  plane = await startControlPlane(config, silentLogger());
  const adopted = await waitForReconciled(
    controllers(plane),
    async () => {
      const app = await appView(plane);
      const alloc = webAllocations(app).find((a: { id: string }) => a.id === first.id);
      return condition(app, 'Healthy') === 'True' && alloc?.status === 'running' ? alloc : undefined;
    },
    { what: 'Healthy after the API restart', timeoutMs: 30_000 },
  );
  t.is(adopted.pid, survivor.pid);

  // Deleting the spec stops the jobs and forgets the app.
  const pids = webAllocations(await appView(plane)).map((a: { pid: number }) => a.pid);
  fs.rmSync(path.join(config.appsDir, 'hello'), { recursive: true });
  git(config.appsDir, 'add', '-A');
  git(config.appsDir, 'commit', '-q', '-m', 'remove hello');
  await waitForReconciled(
    controllers(plane),
    async () => (await request(`${plane.url}/api/apps/hello`)).status === 404,
    { what: 'the app to be removed', timeoutMs: 15_000 },
  );
  // Exited: gone, or a zombie its parent has not reaped yet. The tasks are the spawner helper's
  // children (ADR 0199): once the first plane closed, they belong to init, which reaps on its own time.
  for (const pid of pids) t.false(isProcessAlive(pid, undefined), `pid ${pid} stopped`);
});

test('an invalid edit keeps the last valid spec and reports Valid False', async (t) => {
  const config = testConfig(t);
  fs.mkdirSync(path.join(config.appsDir, 'web'), { recursive: true });
  fs.writeFileSync(
    path.join(config.appsDir, 'web', 'infraspec.yaml'),
    'name: web\nprocesses:\n  web:\n    port: 8080\n',
  );
  const plane = await startControlPlane(config, silentLogger());
  t.teardown(() => plane.close());
  const valid = await waitForReconciled(
    controllers(plane),
    async () => {
      const r = await request(`${plane.url}/api/apps/web`);
      return r.status === 200 && condition(r.body, 'Valid') === 'True' ? r.body : undefined;
    },
    { what: 'Valid' },
  );
  fs.writeFileSync(
    path.join(config.appsDir, 'web', 'infraspec.yaml'),
    'name: web\nprocesses:\n  web:\n    port: "x"\n',
  );
  const invalid = await waitForReconciled(
    controllers(plane),
    async () => {
      const r = await request(`${plane.url}/api/apps/web`);
      return condition(r.body, 'Valid') === 'False' ? r.body : undefined;
    },
    { what: 'Valid False' },
  );
  t.is(invalid.generation, valid.generation, 'the last valid spec stays in effect');
  t.true(invalid.findings.some((f: { path: string }) => f.path === 'processes.web.port'));
  t.is((await request(`${plane.url}/api/apps/nope`)).body.error.code, 'app_not_found');
});
