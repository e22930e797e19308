// tier: quick
import fs from 'node:fs';
import path from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { waitForHealthyInstances } from '../../../domain/registry/index.js';
import { milliseconds } from '../../../domain/scheduler/index.js';
import { BuildError, ReleaseBuilder, releaseLaunch } from '../../../platform/release-builder/index.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { SERVER_JS, serviceGroup, serviceJob, stopEverything } from '../local-scheduler/fixtures.js';
import { LocalRegistry } from '../../../platform/local-registry/index.js';
import { LocalScheduler } from '../../../platform/local-scheduler/index.js';
import { commitFiles, createRepo } from './git-fixture.js';

const DOCKERFILE = `# syntax=docker/dockerfile:1
FROM node:20-slim AS runtime
ARG GREETING=hello
ARG COUNTER
ENV APP_MODE=production \\
    LOG_LEVEL="debug level"
WORKDIR /srv/app
COPY . .
# RUN steps execute in the release, with ENV and ARG applied
RUN echo "$GREETING from $APP_MODE" > built.txt && \\
    pwd > where.txt && \\
    if [ -n "$COUNTER" ]; then echo run >> "$COUNTER"; fi
WORKDIR server
RUN ["/bin/sh", "-c", "pwd > here.txt"]
EXPOSE 8080
USER node
CMD ["${process.execPath}", "server.mjs"]
`;

function setup(t: ExecutionContext) {
  const root = tempDir(t, 'svc-release-');
  const repo = path.join(root, 'repo');
  const sha = createRepo(repo, { Dockerfile: DOCKERFILE, 'server/server.mjs': SERVER_JS, 'README.md': 'demo\n' });
  const builder = new ReleaseBuilder({ dataDir: path.join(root, 'data'), engine: 'native' });
  return { root, repo, sha, builder, counter: path.join(root, 'runs.txt') };
}

test('a release is the repository at the commit with the Dockerfile honoured natively', async (t) => {
  const { root, repo, sha, builder, counter } = setup(t);
  const release = await builder.build({
    app: 'demo',
    repoUrl: `file://${repo}`,
    ref: 'main',
    buildArgs: { COUNTER: counter },
  });
  t.false(release.reused);
  t.is(release.dir, path.join(root, 'data', 'releases', 'demo', sha));
  const m = release.manifest;
  t.is(m.app, 'demo');
  t.is(m.commit, sha);
  t.is(m.builder, 'native');
  t.is(m.image, null);
  t.is(m.workdir, 'app/server');
  t.deepEqual(m.env, { APP_MODE: 'production', LOG_LEVEL: 'debug level' });
  t.deepEqual(m.command, [process.execPath, 'server.mjs']);
  t.deepEqual(m.exposedPorts, ['8080']);
  t.is(m.user, 'node');
  t.true(m.notes.some((n) => /USER node recorded/.test(n)));
  t.true(m.notes.some((n) => /FROM node:20-slim AS runtime ignored/.test(n)));
  const appDir = path.join(release.dir, 'app');
  t.is(fs.readFileSync(path.join(appDir, 'README.md'), 'utf8'), 'demo\n');
  t.false(fs.existsSync(path.join(appDir, '.git')));
  t.is(fs.readFileSync(path.join(appDir, 'built.txt'), 'utf8'), 'hello from production\n');
  // RUN steps ran in the build folder's app dir (renamed into place afterwards) and in the mapped WORKDIR.
  t.regex(fs.readFileSync(path.join(appDir, 'where.txt'), 'utf8'), /\/releases\/demo\/\.tmp-[^/]+\/app\n$/);
  t.regex(fs.readFileSync(path.join(appDir, 'server', 'here.txt'), 'utf8'), /\/app\/server\n$/);
  t.is(fs.statSync(path.join(appDir, 'README.md')).mode & 0o022, 0);
  t.is(fs.statSync(release.dir).mode & 0o022, 0);
  t.deepEqual(
    JSON.parse(fs.readFileSync(path.join(release.dir, 'release.json'), 'utf8')),
    JSON.parse(JSON.stringify(m)),
  );
  t.deepEqual(fs.readdirSync(path.dirname(release.dir)), [sha], 'no temporary build folder is left');
});

test('building an existing release reuses it without running the Dockerfile again', async (t) => {
  const { repo, sha, builder, counter } = setup(t);
  const first = await builder.build({ app: 'demo', repoUrl: repo, ref: sha, buildArgs: { COUNTER: counter } });
  const second = await builder.build({
    app: 'demo',
    repoUrl: repo,
    ref: sha.slice(0, 10),
    buildArgs: { COUNTER: counter },
  });
  t.true(second.reused);
  t.is(second.manifest.createdAt, first.manifest.createdAt);
  t.is(fs.readFileSync(counter, 'utf8'), 'run\n');
  const sha2 = commitFiles(repo, { 'README.md': 'changed\n' }, 'second');
  const third = await builder.build({ app: 'demo', repoUrl: repo, ref: 'main', buildArgs: { COUNTER: counter } });
  t.is(third.manifest.commit, sha2);
  t.false(third.reused);
  t.deepEqual(
    builder
      .list('demo')
      .map((r) => r.manifest.commit)
      .sort(),
    [sha, sha2].sort(),
  );
});

test('a failing RUN fails the build with its output and leaves no release', async (t) => {
  const { repo, builder, root } = setup(t);
  const sha = commitFiles(
    repo,
    { Dockerfile: 'FROM scratch\nWORKDIR /app\nRUN echo boom-output && echo to-stderr >&2 && exit 7\nCMD ["true"]\n' },
    'broken',
  );
  const error = await t.throwsAsync(builder.build({ app: 'demo', repoUrl: repo, ref: 'main' }), {
    instanceOf: BuildError,
  });
  t.regex(error.message, /RUN echo boom-output .* \(Dockerfile line 3\) exited with code 7/);
  t.regex(error.message, /boom-output\nto-stderr/);
  t.is(error.details.exitCode, 7);
  t.false(fs.existsSync(path.join(root, 'data', 'releases', 'demo', sha)));
  t.deepEqual(fs.readdirSync(path.join(root, 'data', 'releases', 'demo')), []);
});

test('an unknown ref and a missing Dockerfile are refused with messages naming them', async (t) => {
  const { repo, builder } = setup(t);
  await t.throwsAsync(builder.build({ app: 'demo', repoUrl: repo, ref: 'no-such-branch' }), {
    message: /ref: "no-such-branch" does not name a commit/,
  });
  await t.throwsAsync(builder.build({ app: 'demo', repoUrl: repo, ref: 'main', dockerfile: 'deploy/Dockerfile' }), {
    message: /build.dockerfile: deploy\/Dockerfile does not exist/,
  });
});

test('an external build image is recorded as is and the local driver refuses to launch it', async (t) => {
  const { repo, sha, builder } = setup(t);
  const release = await builder.build({
    app: 'demo',
    repoUrl: repo,
    ref: sha,
    image: 'ghcr.io/acme/demo@sha256:' + 'a'.repeat(64),
  });
  t.is(release.manifest.builder, 'external-image');
  t.is(release.manifest.image, 'ghcr.io/acme/demo@sha256:' + 'a'.repeat(64));
  t.throws(() => releaseLaunch(release.dir, release.manifest), { message: /runs no containers/ });
});

test('the release builder without an image builder builds natively, whatever engine the host has', async (t) => {
  const root = tempDir(t, 'svc-release-');
  const repo = path.join(root, 'repo');
  createRepo(repo, { Dockerfile: 'FROM node:20\nCMD ["node", "x.js"]\n' });
  const release = await new ReleaseBuilder({ dataDir: path.join(root, 'data') }).build({
    app: 'demo',
    repoUrl: repo,
    ref: 'main',
  });
  t.is(release.manifest.builder, 'native');
  t.is(release.manifest.image, null);
});

test('a native release started by the local driver runs in its WORKDIR with its ENV and passes its health check', async (t) => {
  const { root, repo, builder } = setup(t);
  const release = await builder.build({ app: 'demo', repoUrl: repo, ref: 'main' });
  const launch = releaseLaunch(release.dir, release.manifest);
  // The driver on the builder's data folder: it opens the app's releases to the app's user (ADR 0047).
  const registry = new LocalRegistry();
  const driver = await LocalScheduler.open({
    dataDir: path.join(root, 'data'),
    registry,
    monitorInterval: milliseconds(40),
  });
  t.teardown(() => stopEverything(driver));
  const group = serviceGroup({ command: launch.command, workdir: launch.workdir, env: { ...launch.env } });
  await driver.submitJob({ ...serviceJob('demo-web', group), meta: { commit: release.manifest.commit } });
  const [instance] = await waitForHealthyInstances(registry, 'demo-web', { timeoutMs: 10_000 });
  const env = (await (await fetch(`http://127.0.0.1:${instance!.port}/env`)).json()) as Record<string, string>;
  t.is(env.APP_MODE, 'production');
  t.is(env.LOG_LEVEL, 'debug level');
  t.is(await (await fetch(`http://127.0.0.1:${instance!.port}/cwd`)).text(), launch.workdir);
});

test('a build with a subdir uses that folder of the repository as the build context and release tree', async (t) => {
  const root = tempDir(t, 'svc-release-');
  const repo = path.join(root, 'apps');
  const sha = createRepo(repo, {
    'shop/Dockerfile':
      'FROM node:20-slim\nWORKDIR /app\nCOPY . .\nRUN echo built > built.txt\nCMD ["node", "server.mjs"]\n',
    'shop/server.mjs': SERVER_JS,
    'other/secret.txt': 'not mine\n',
  });
  const builder = new ReleaseBuilder({ dataDir: path.join(root, 'data'), engine: 'native' });
  const release = await builder.build({ app: 'shop', repoUrl: repo, ref: 'main', subdir: 'shop' });
  t.is(release.manifest.commit, sha);
  const appDir = path.join(release.dir, 'app');
  t.deepEqual(fs.readdirSync(appDir).sort(), ['Dockerfile', 'built.txt', 'server.mjs']);
  t.false(fs.existsSync(path.join(release.dir, 'source')));
  await t.throwsAsync(builder.build({ app: 'gone', repoUrl: repo, ref: 'main', subdir: 'gone' }), {
    message: /build context: gone does not exist in the repository at commit/,
  });
  await t.throwsAsync(builder.build({ app: 'shop', repoUrl: repo, ref: 'main', subdir: '../etc' }), {
    message: /must be a folder inside the repository/,
  });
});
