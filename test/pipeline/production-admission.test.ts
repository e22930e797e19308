// tier: full
/**
 * Production admission (SVC_PROFILE=production) on a real apps repository with commits signed by
 * a real SSH key (ssh-keygen, git's SSH signing): each rule's refusal is named, and a compliant
 * preflight is admitted.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { listSteps } from '../../store/control/deployments.js';
import { tempDir } from '../helpers/temp-dir.js';
import { git, initAppsRepo, pipelineConfig, startPlane, waitForApp } from './pipeline-fixture.js';

const PINNED = `registry.example.test/shop@sha256:${'ab'.repeat(32)}`;

function spec(name: string, extra = ''): string {
  return `name: ${name}\nbuild:\n  image: ${PINNED}\nprocesses:\n  web:\n    port: 8080\n    resources:\n      memory: 64\n${extra}`;
}

test('the production profile names the broken rule of each refused preflight and admits a compliant one', async (t) => {
  const keys = tempDir(t);
  const key = path.join(keys, 'signer');
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'signer', '-f', key]);
  const stranger = path.join(keys, 'stranger');
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'stranger', '-f', stranger]);
  const allowed = path.join(keys, 'allowed_signers');
  fs.writeFileSync(allowed, `t@example.test namespaces="git" ${fs.readFileSync(`${key}.pub`, 'utf8')}`);

  const config = pipelineConfig(t, {
    SVC_PROFILE: 'production',
    SVC_RELEASE_SIGNATURE_POLICY: 'none',
    SVC_REQUIRE_EXPLICIT_AUTH: 'true',
    SVC_API_TOKEN: 'tok',
    SVC_SOURCE_ALLOWED_SIGNERS: allowed,
  });
  initAppsRepo(config);
  const write = (app: string, text: string, files: Record<string, string> = {}) => {
    fs.mkdirSync(path.join(config.appsDir, app, 'secrets'), { recursive: true });
    fs.writeFileSync(path.join(config.appsDir, app, 'infraspec.yaml'), text);
    for (const [file, body] of Object.entries(files)) fs.writeFileSync(path.join(config.appsDir, app, file), body);
  };
  const commit = (message: string, signer?: string) => {
    git(config.appsDir, 'add', '-A');
    git(
      config.appsDir,
      ...(signer ? ['-c', 'gpg.format=ssh', '-c', `user.signingkey=${signer}`] : []),
      'commit',
      '-q',
      '--allow-empty',
      ...(signer ? ['-S'] : []),
      '-m',
      message,
    );
    return git(config.appsDir, 'rev-parse', 'HEAD');
  };
  write('good', spec('good'));
  write('leaky', spec('leaky', 'env:\n  API_TOKEN: abc123\n'));
  write('unpinned', 'name: unpinned\nprocesses:\n  web:\n    port: 8080\n');
  write('missing', spec('missing', 'secrets:\n  - DB_PASSWORD\n'));
  write('huge', spec('huge').replace('memory: 64', 'memory: 4000000000'));
  const signed = commit('apps, signed', key);
  const plane = await startPlane(t, config);
  await Promise.all(['good', 'leaky', 'unpinned', 'missing', 'huge'].map((app) => waitForApp(plane, app)));

  const preflight = async (app: string, ref?: string) => {
    const queued = plane.deploys.deploys.preflight(app, ref ? { ref } : {});
    const operation = await plane.deploys.worker.waitFor(queued.operation.id, 30_000);
    const clone = listSteps(plane.db, queued.deploymentId).find((s) => s.step === 'clone');
    return { operation, clone };
  };

  const [good, leaky, unpinned, missing, huge] = await Promise.all([
    preflight('good'),

    preflight('leaky'),
    preflight('unpinned'),
    preflight('missing'),
    preflight('huge'),
  ]);
  t.is(good.clone?.status, 'succeeded', good.clone?.message ?? '');
  t.regex(
    good.clone?.message ?? '',
    new RegExp(`production admission: ${signed.slice(0, 12)} on main, signature valid, secrets strict`),
  );
  t.is(leaky.operation.status, 'failed');
  t.regex(leaky.clone?.message ?? '', /production admission refused \(strict-secrets\): env\.API_TOKEN commits/);
  t.false((leaky.clone?.message ?? '').includes('abc123'), 'the value is not repeated');
  t.regex(unpinned.clone?.message ?? '', /production admission refused \(digest-pinned\): build\.image must be/);
  t.regex(
    huge.clone?.message ?? '',
    /production admission refused \(live-substrate\): the app's processes request 4000000000 MB of memory at their minimum scale; the host has \d+ MB free/,
  );
  t.regex(good.clone?.message ?? '', /driver answers with room \(64 of \d+ MB free\)/);
  t.regex(
    missing.clone?.message ?? '',
    /refused \(strict-secrets\): secrets: DB_PASSWORD is declared but has no value/,
  );

  // A plaintext secret committed in the repository (signed, on main) is refused too.
  write('missing', spec('missing', 'secrets:\n  - DB_PASSWORD\n'), { 'secrets/DB_PASSWORD': 'hunter2\n' });
  commit('plaintext secret', key);
  const plaintext = await preflight('missing');
  t.regex(plaintext.clone?.message ?? '', /refused \(strict-secrets\): secret\.plaintext-committed/);
  t.false((plaintext.clone?.message ?? '').includes('hunter2'));
  fs.rmSync(path.join(config.appsDir, 'missing', 'secrets', 'DB_PASSWORD'));

  const unsigned = commit('unsigned');
  const byUnsigned = await preflight('good');
  t.regex(
    byUnsigned.clone?.message ?? '',
    new RegExp(
      `production admission refused \\(source\\.signature\\): commit ${unsigned.slice(0, 12)} has no signature`,
    ),
  );
  commit('signed by a key that is not allowed', stranger);
  t.regex((await preflight('good')).clone?.message ?? '', /refused \(source\.signature\)/);

  git(config.appsDir, 'checkout', '-q', '-b', 'topic');
  const topic = commit('on a topic branch, signed', key);
  git(config.appsDir, 'checkout', '-q', 'main');
  const offBranch = await preflight('good', 'topic');
  t.regex(
    offBranch.clone?.message ?? '',
    new RegExp(
      `production admission refused \\(source\\.branch\\): commit ${topic.slice(0, 12)} is not on the tracked branch main`,
    ),
  );
});
