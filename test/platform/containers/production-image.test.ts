// tier: full
/**
 * The production profile on the default install with containers (ADR 0223): a `build.image` pinned
 * by digest in the managed registry deploys and reaches healthy only when it is signed by a key the
 * platform trusts and its revision label names the resolved commit. Real podman, skopeo, gpg,
 * registry and SSH-signed commits.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { listSteps } from '../../../store/control/deployments.js';
import { ImageBuilder } from '../../../platform/containers/image-builder.js';
import { Podman } from '../../../platform/containers/podman.js';
import { ensureImageSigningKey, writeImageSignatureConfig } from '../../../platform/containers/image-signature.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { containerConfig, removeRegistryImages } from '../../helpers/containers.js';
import { git, initAppsRepo, startPlane, waitForApp } from '../../pipeline/pipeline-fixture.js';

const SERVER = `import http from 'node:http';
http.createServer((req, res) => { res.writeHead(200); res.end(req.url === '/healthz' ? 'ok' : 'signed ' + process.env.APP_COMMIT); })
  .listen(Number(process.env.PORT));
process.on('SIGTERM', () => process.exit(0));
`;

test('a signed image built from the resolved commit deploys in production; a wrong commit and an unsigned image are refused', async (t) => {
  const keys = tempDir(t);
  const key = path.join(keys, 'signer');
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'signer', '-f', key]);
  const allowed = path.join(keys, 'allowed_signers');
  fs.writeFileSync(allowed, `t@example.test namespaces="git" ${fs.readFileSync(`${key}.pub`, 'utf8')}`);
  const config = containerConfig(t, {
    SVC_PROFILE: 'production',
    SVC_RELEASE_SIGNATURE_POLICY: 'none',
    SVC_REQUIRE_EXPLICIT_AUTH: 'true',
    SVC_API_TOKEN: 'tok',
    SVC_SOURCE_ALLOWED_SIGNERS: allowed,
  });
  const signed = ['-c', 'gpg.format=ssh', '-c', `user.signingkey=${key}`];
  // The app's code: its own repository, whose signed commit the deploy resolves.
  const code = path.join(tempDir(t), 'code');
  fs.mkdirSync(code);
  fs.writeFileSync(path.join(code, 'server.mjs'), SERVER);
  fs.writeFileSync(
    path.join(code, 'Dockerfile'),
    'FROM node:20-bookworm-slim\nWORKDIR /app\nCOPY server.mjs ./\nCMD ["node", "server.mjs"]\n',
  );
  git(code, 'init', '-q', '-b', 'main');
  git(code, 'add', '-A');
  git(code, ...signed, 'commit', '-q', '-S', '-m', 'shop');
  const commit = git(code, 'rev-parse', 'HEAD');

  initAppsRepo(config);
  fs.mkdirSync(path.join(config.appsDir, 'seed'));
  fs.writeFileSync(path.join(config.appsDir, 'seed', 'README'), 'apps\n');
  git(config.appsDir, 'add', '-A');
  git(config.appsDir, ...signed, 'commit', '-q', '-S', '-m', 'seed');
  const plane = await startPlane(t, config);

  // The image, built and signed the way the platform does, with the platform's key.
  const signingKey = await ensureImageSigningKey(config.dataDir);
  const registryHost = fs
    .readFileSync(path.join(config.dataDir, 'containers', 'registries.conf'), 'utf8')
    .match(/location = "(127\.0\.0\.1:\d+)"\n/)![1]!;
  t.teardown(() => removeRegistryImages(registryHost));
  const registriesConf = path.join(config.dataDir, 'containers', 'registries.conf');
  const podman = new Podman({ registriesConf });
  const signing = {
    key: signingKey,
    config: await writeImageSignatureConfig({ dataDir: config.dataDir, registryHost, registriesConf, signingKey }),
  };
  const build = (images: ImageBuilder, revision: string) =>
    images.build({
      app: 'shop',
      commit: revision,
      contextDir: code,
      dockerfile: path.join(code, 'Dockerfile'),
      buildArgs: {},
    });
  const good = await build(new ImageBuilder({ podman, registryHost, signing }), commit);
  const wrong = await build(new ImageBuilder({ podman, registryHost, signing }), 'f'.repeat(40));
  const unsigned = await build(new ImageBuilder({ podman, registryHost }), 'e'.repeat(40));

  const deployImage = async (app: string, image: string) => {
    fs.mkdirSync(path.join(config.appsDir, app, 'secrets'), { recursive: true });
    fs.writeFileSync(
      path.join(config.appsDir, app, 'infraspec.yaml'),
      [
        `name: ${app}`,
        'deploy: true',
        'repo:',
        `  url: ${code}`,
        'build:',
        `  image: ${image}`,
        'processes:',
        '  web:',
        '    port: 8080',
        '    health:',
        '      path: /healthz',
        '      interval: 200ms',
        '      timeout: 1s',
        '    resources:',
        '      memory: 64',
        'env:',
        `  APP_COMMIT: "${commit.slice(0, 12)}"`,
        '',
      ].join('\n'),
    );
    fs.writeFileSync(path.join(config.appsDir, app, 'secrets', '.keep'), '');
    git(config.appsDir, 'add', '-A');
    git(config.appsDir, ...signed, 'commit', '-q', '-S', '-m', app);
    await waitForApp(plane, app);
    const queued = plane.deploys.deploys.deploy(app);
    const operation = await plane.deploys.worker.waitFor(queued.operation.id, 60_000);
    const build = listSteps(plane.db, queued.deploymentId).find((s) => s.step === 'build');
    return { operation, build };
  };

  const ok = await deployImage('shop', good.image);
  t.is(ok.operation.status, 'succeeded', ok.build?.message ?? '');
  t.regex(ok.build?.message ?? '', new RegExp(`signature verified, built from ${commit.slice(0, 12)}`));
  const scheduler = await plane.reconcilers.targets.get('local');
  const [alloc] = (await scheduler.listAllocations({ app: 'shop' })).filter((a) => a.status === 'running');
  t.is(await (await fetch(`http://127.0.0.1:${alloc!.ports[0]!.value}/`)).text(), `signed ${commit.slice(0, 12)}`);

  const mismatch = await deployImage('shop-wrong', wrong.image);
  t.is(mismatch.operation.status, 'failed');
  t.regex(mismatch.build?.message ?? '', new RegExp(`built from commit f{40}, not from the resolved commit ${commit}`));
  const forged = await deployImage('shop-unsigned', unsigned.image);
  t.is(forged.operation.status, 'failed');
  t.regex(forged.build?.message ?? '', /is not signed by a key the platform trusts/);
  t.is((await scheduler.listAllocations({ app: 'shop-unsigned' })).length, 0);
});
