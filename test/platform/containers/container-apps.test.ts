// tier: full
/**
 * Apps in their own images on the local driver (ADR 0219), against the real podman, runc, the
 * managed registry and the platform's own checker: one plane deploys a Node app built FROM the
 * offline base image, and each test reads one promise of the runtime off it.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import anyTest, { type TestFn } from 'ava';
import type { ControlPlane } from '../../../wiring/control-plane.js';
import type { SvcConfig } from '../../../platform/config.js';
import { getApp } from '../../../store/control/apps.js';
import type { Allocation } from '../../../domain/scheduler/index.js';
import { readReleaseManifest } from '../../../platform/release-builder/index.js';
import { request } from '../../helpers/servers.js';
import {
  CONTAINER_DEPLOY_MS,
  containerConfig,
  containersOf,
  readImageFile,
  removeRegistryImages,
} from '../../helpers/containers.js';
import { hookScope } from '../../helpers/hook-scope.js';
import { deployAndWait, git, initAppsRepo, startPlane, waitForApp } from '../../pipeline/pipeline-fixture.js';

const test = anyTest as TestFn<{ plane: ControlPlane; config: SvcConfig; registry: string }>;

const SERVER = `import fs from 'node:fs';
import http from 'node:http';
const version = fs.readFileSync('/app/version.txt', 'utf8').trim();
const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://x');
  const json = (status, body) => { res.writeHead(status, { 'content-type': 'application/json' }); res.end(JSON.stringify(body)); };
  if (url.pathname === '/healthz') return json(200, { ok: true });
  if (url.pathname === '/whoami') return json(200, { uid: process.getuid(), gid: process.getgid(), hostname: process.env.HOSTNAME ?? null });
  if (url.pathname === '/env') return json(200, { value: process.env[url.searchParams.get('name')] ?? null });
  if (url.pathname === '/read') {
    try { return json(200, { text: fs.readFileSync(url.searchParams.get('path'), 'utf8') }); }
    catch (error) { return json(404, { code: error.code }); }
  }
  if (url.pathname === '/write') {
    try { fs.writeFileSync(url.searchParams.get('path'), url.searchParams.get('text') ?? ''); return json(200, { ok: true }); }
    catch (error) { return json(500, { code: error.code }); }
  }
  if (url.pathname === '/allocate') {
    globalThis.hold = Buffer.alloc(Number(url.searchParams.get('mb')) * 1024 * 1024, 1);
    return json(200, { ok: true });
  }
  json(200, { version, pid: process.pid });
});
server.listen(Number(process.env.PORT), () => console.log(JSON.stringify({ msg: 'listening', port: process.env.PORT })));
process.on('SIGTERM', () => { console.log(JSON.stringify({ msg: 'draining', signal: 'SIGTERM' })); server.close(() => process.exit(0)); });
`;

// The dependency layer records when it ran: a rebuild that reuses it keeps the same stamp.
// Two stages: the first makes a file only its own RUN could, the second copies it over.
const DOCKERFILE = `FROM node:20-bookworm-slim AS tools
RUN node -e "require('fs').writeFileSync('/tool.txt', 'made in stage one by node ' + process.version)"

FROM node:20-bookworm-slim
WORKDIR /app
ARG FLAVOUR=plain
COPY deps.txt ./
RUN date +%s%N > /app/deps-stamp && echo "$FLAVOUR" > /app/flavour
COPY --from=tools /tool.txt /app/tool.txt
ARG SVC_COMMIT
RUN echo "$SVC_COMMIT" > /app/built-commit
COPY server.mjs version.txt ./
CMD ["node", "server.mjs"]
`;

const SPEC = `name: boxed
deploy: true
processes:
  web:
    port: 8080
    health:
      path: /healthz
      interval: 200ms
      timeout: 1s
    drain:
      signal: SIGTERM
      timeout: 5s
    resources:
      cpu: 150
      memory: 96
env:
  GREETING: hello from the spec
secrets:
  - API_KEY
volumes:
  - name: data
    mount: /data
`;

function commitBoxed(appsDir: string, version: string): string {
  const dir = path.join(appsDir, 'boxed');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'infraspec.yaml'), SPEC);
  fs.writeFileSync(path.join(dir, 'Dockerfile'), DOCKERFILE);
  fs.writeFileSync(path.join(dir, 'deps.txt'), 'left-pad@1\n');
  fs.writeFileSync(path.join(dir, 'server.mjs'), SERVER);
  fs.writeFileSync(path.join(dir, 'version.txt'), `${version}\n`);
  git(appsDir, 'add', '-A');
  git(appsDir, 'commit', '-q', '-m', `boxed ${version}`);
  return git(appsDir, 'rev-parse', 'HEAD');
}

async function allocation(plane: ControlPlane) {
  const scheduler = await plane.reconcilers.targets.get('local');
  const running = (await scheduler.listAllocations({ app: 'boxed' })).filter(
    (a) => a.status === 'running' && a.desiredStatus === 'run',
  );
  if (running.length !== 1) throw new Error(`expected one running allocation, found ${running.length}`);
  const port = running[0]!.ports.find((p) => p.label === 'http')?.value ?? running[0]!.ports[0]!.value;
  return { alloc: running[0]!, url: `http://127.0.0.1:${port}` };
}

/** Resolves with boxed's allocations once `done` holds for them (read at once, then at each change). */
async function allocationsWhere(
  plane: ControlPlane,
  done: (all: readonly Allocation[]) => boolean,
): Promise<readonly Allocation[]> {
  const scheduler = await plane.reconcilers.targets.get('local');
  return new Promise((resolve) => {
    let settled = false;
    const check = async () => {
      if (settled) return;
      const all = await scheduler.listAllocations({ app: 'boxed' });
      if (done(all) && !settled) {
        settled = true;
        unsubscribe();
        resolve(all);
      }
    };
    const unsubscribe = scheduler.watch(() => void check());
    void check();
  });
}

/** The allocation of boxed that first meets `done`. */
async function allocationWhere(plane: ControlPlane, done: (a: Allocation) => boolean): Promise<Allocation> {
  return (await allocationsWhere(plane, (all) => all.some(done))).find(done)!;
}

async function get(url: string): Promise<any> {
  return (await fetch(url)).json();
}

const scope = hookScope();
test.after.always(() => scope.close());

test.before(async (t) => {
  const config = containerConfig(scope.context);
  initAppsRepo(config);
  commitBoxed(config.appsDir, 'v1');
  const secrets = path.join(config.dataDir, 'secrets', 'boxed');
  fs.mkdirSync(secrets, { recursive: true, mode: 0o700 });
  fs.writeFileSync(path.join(secrets, 'API_KEY'), 'sk-container-test');
  const plane = await startPlane(scope.context, config);
  await waitForApp(plane, 'boxed');
  const deployed = await deployAndWait(plane, 'boxed', {}, 'deploy', CONTAINER_DEPLOY_MS);
  if (deployed.operation.status !== 'succeeded') throw new Error(JSON.stringify(deployed.steps));
  const manifest = readReleaseManifest(getApp(plane.db, 'boxed')!.release!.dir)!;
  const registry = manifest.image!.split('/')[0]!;
  t.context = { plane, config, registry };
  scope.context.teardown(() => removeRegistryImages(registry));
});

test.serial(
  'a Dockerfile release is built with podman, pushed to the managed registry and runs by digest',
  async (t) => {
    const { plane, registry } = t.context;
    const app = getApp(plane.db, 'boxed')!;
    const manifest = readReleaseManifest(app.release!.dir)!;
    t.is(manifest.builder, 'podman');
    t.regex(manifest.image!, new RegExp(`^${registry.replace('.', '\\.')}/boxed@sha256:[0-9a-f]{64}$`));
    t.is(manifest.revision, app.release!.commit);
    // The registry serves the tag <app>:<sha>, and the image carries the revision label.
    const tags = await get(`http://${registry}/v2/boxed/tags/list`);
    t.true(tags.tags.includes(app.release!.commit));
    const label = execFileSync(
      'podman',
      ['image', 'inspect', '--format', '{{index .Config.Labels "org.opencontainers.image.revision"}}', manifest.image!],
      { encoding: 'utf8' },
    ).trim();
    t.is(label, app.release!.commit);
    const { alloc, url } = await allocation(plane);
    t.is((await get(url)).version, 'v1');
    const inspected = JSON.parse(
      execFileSync('podman', ['inspect', '--type', 'container', `svc-${alloc.id}`], { encoding: 'utf8' }),
    )[0];
    t.is(inspected.ImageName, manifest.image);
  },
);

test.serial(
  'the container runs as the app’s own uid, never host root, under its memory limit and CPU weight',
  async (t) => {
    const { plane } = t.context;
    const { alloc, url } = await allocation(plane);
    const who = await get(`${url}/whoami`);
    t.not(who.uid, 0);
    t.is(who.uid, Number(execFileSync('id', ['-u', 'svc-app-boxed'], { encoding: 'utf8' }).trim()));
    const id = execFileSync('podman', ['inspect', '--format', '{{.Id}}', `svc-${alloc.id}`], {
      encoding: 'utf8',
    }).trim();
    // The container's own cgroup, below its allocation's parent (cgroupfs) or podman's default.
    const candidates = [
      `/sys/fs/cgroup/memory/svc-allocs/${alloc.id}/libpod-${id}/memory.limit_in_bytes`,
      `/sys/fs/cgroup/memory/libpod_parent/libpod-${id}/memory.limit_in_bytes`,
      `/sys/fs/cgroup/svc-allocs/${alloc.id}/libpod-${id}/memory.max`,
      `/sys/fs/cgroup/libpod_parent/libpod-${id}/memory.max`,
    ];
    const limitFile = candidates.find((f) => fs.existsSync(f));
    t.truthy(limitFile, 'the container has a memory cgroup');
    t.is(Number(fs.readFileSync(limitFile!, 'utf8').trim()), 96 * 1024 * 1024);
    const shares = execFileSync('podman', ['inspect', '--format', '{{.HostConfig.CpuShares}}', `svc-${alloc.id}`], {
      encoding: 'utf8',
    }).trim();
    t.is(Number(shares), 150);
    // The driver samples the container's cgroup, not the podman client's tree.
    const sampled = (await allocationWhere(plane, (a) => a.id === alloc.id && (a.memory?.currentRssBytes ?? 0) > 0))
      .memory.currentRssBytes;
    t.true(sampled > 1024 * 1024 && sampled < 96 * 1024 * 1024, String(sampled));
  },
);

test.serial('env, secrets and volumes reach the container; the platform’s data folder does not', async (t) => {
  const { plane, config } = t.context;
  const { url } = await allocation(plane);
  t.is((await get(`${url}/env?name=GREETING`)).value, 'hello from the spec');
  const secretsDir = (await get(`${url}/env?name=SVC_SECRETS_DIR`)).value as string;
  t.is((await get(`${url}/read?path=${encodeURIComponent(`${secretsDir}/API_KEY`)}`)).text, 'sk-container-test');
  t.is((await get(`${url}/env?name=SVC_VOLUME_DATA`)).value, '/data');
  t.deepEqual(await get(`${url}/write?path=/data/kept.txt&text=persisted`), { ok: true });
  const onHost = path.join(config.dataDir, 'app-data', 'boxed', 'volumes', 'data', 'kept.txt');
  t.is(fs.readFileSync(onHost, 'utf8'), 'persisted');
  // The image's filesystem, not the host's: the host's control.db is not there.
  t.is((await get(`${url}/read?path=${encodeURIComponent(path.join(config.dataDir, 'control.db'))}`)).code, 'ENOENT');
  t.is((await get(`${url}/read?path=/etc/debian_version`)).text.trim().split('.')[0], '12');
  // The first stage's RUN ran in its image and its output was copied into the final one.
  t.regex((await get(`${url}/read?path=/app/tool.txt`)).text, /^made in stage one by node v20\./);
  // The platform's build arg reached the image's RUN step: it names the deployed commit.
  t.is((await get(`${url}/read?path=/app/built-commit`)).text.trim(), getApp(plane.db, 'boxed')!.release!.commit);
  // The secret's value is in no argv: the client passes variables by name.
  const cmdlines = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' });
  t.false(cmdlines.includes('sk-container-test'));
});

test.serial('the container’s output reaches the log store', async (t) => {
  const { plane } = t.context;
  const { alloc } = await allocation(plane);
  let lines: string[] = [];
  for (let i = 0; i < 100 && !lines.some((l) => l.includes('"listening"')); i += 1) {
    const body = (await request(`${plane.url}/api/v1/apps/boxed/logs?limit=50`)).body;
    lines = (body.lines ?? body.entries ?? body.items ?? []).map(
      (l: { line?: string; message?: string }) => l.line ?? l.message ?? '',
    );
    if (!lines.some((l) => l.includes('"listening"'))) await new Promise((r) => setTimeout(r, 100));
  }
  t.true(
    lines.some((l) => l.includes('"listening"')),
    `logs of ${alloc.id}: ${lines.join('\n')}`,
  );
  t.false(
    lines.some((l) => /Copying blob|Writing manifest/.test(l)),
    'no pull progress in the app’s output',
  );
});

test.serial(
  'a code-only change rebuilds no dependency layer; the new release replaces the old container',
  async (t) => {
    const { plane, config } = t.context;
    const before = (await allocation(plane)).alloc;
    const stamp = (image: string) => readImageFile(image, '/app/deps-stamp');
    const firstImage = readReleaseManifest(getApp(plane.db, 'boxed')!.release!.dir)!.image!;
    commitBoxed(config.appsDir, 'v2');
    const deployed = await deployAndWait(plane, 'boxed', {}, 'deploy', CONTAINER_DEPLOY_MS);
    t.is(deployed.operation.status, 'succeeded');
    const secondImage = readReleaseManifest(getApp(plane.db, 'boxed')!.release!.dir)!.image!;
    t.not(secondImage, firstImage);
    t.is(stamp(secondImage), stamp(firstImage));
    const { alloc, url } = await allocation(plane);
    t.not(alloc.id, before.id);
    t.is((await get(url)).version, 'v2');
    // The replaced allocation drained with its signal and its container is gone.
    // The replaced allocation drained with its signal (its own output says so), then left; its container is gone.
    await allocationsWhere(plane, (all) => !all.some((a) => a.id === before.id));
    const lines = (await request(`${plane.url}/api/v1/apps/boxed/logs?limit=200`)).body.lines as { line: string }[];
    t.true(
      lines.some((l) => /"draining","signal":"SIGTERM"/.test(l.line)),
      JSON.stringify(lines.map((l) => l.line)),
    );
    const containers = containersOf('boxed');
    t.true(containers.includes(`svc-${alloc.id}`));
    t.false(containers.includes(`svc-${before.id}`));
  },
);

test.serial('a container killed by the kernel for its memory limit is reported OOM killed and restarted', async (t) => {
  const { plane } = t.context;
  const { alloc, url } = await allocation(plane);
  await fetch(`${url}/allocate?mb=200`).catch(() => undefined);
  const seen = await allocationWhere(
    plane,
    (a) => a.id === alloc.id && a.task.events.some((e) => e.type === 'OOM Killed'),
  );
  t.true(seen.task.oomKilled);
  t.true(seen.task.events.some((e) => e.type === 'Restarting'));
  // It comes back under the same limit and serves again.
  const again = await allocationWhere(
    plane,
    (a) => a.id === alloc.id && a.status === 'running' && a.task.restarts > alloc.task.restarts,
  );
  t.is(again.status, 'running');
});
