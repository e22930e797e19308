// tier: full
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { NotFoundError, ValidationError } from '../../../domain/errors.js';
import { writeRegistriesConf } from '../../../platform/containers/containers-config.js';
import {
  ensureImageSigningKey,
  imageSignatureLayout,
  pushSignedImage,
  verifyImageSignature,
  writeImageSignatureConfig,
  type ImageSignatureConfig,
  type ImageSigningKey,
} from '../../../platform/containers/image-signature.js';
import { ManagedRegistry } from '../../../platform/containers/managed-registry.js';
import { Podman } from '../../../platform/containers/podman.js';
import { silentLogger } from '../../../platform/logger.js';
import { tempDir } from '../../helpers/temp-dir.js';

const BASE_IMAGE = 'docker.io/library/ruby:3.1-slim-bookworm';

interface SigningPlatform {
  readonly dataDir: string;
  readonly registry: ManagedRegistry;
  readonly podman: Podman;
  readonly key: ImageSigningKey;
  readonly config: ImageSignatureConfig;
}

/** A data folder with a running managed registry, the platform's key and its signature config. */
async function signingPlatform(t: ExecutionContext): Promise<SigningPlatform> {
  const dataDir = tempDir(t, 'svc-image-signature-');
  const registry = await ManagedRegistry.open({ dataDir, logger: silentLogger() });
  t.teardown(async () => {
    // close() awaits the exit of a child it unref'd: alone in the worker, nothing else would keep
    // the event loop up until that exit comes.
    const keepAlive = setInterval(() => undefined, 1_000);
    try {
      await registry.close();
    } finally {
      clearInterval(keepAlive);
    }
  });
  const registriesConf = writeRegistriesConf(dataDir, registry.host);
  const key = await ensureImageSigningKey(dataDir);
  const config = await writeImageSignatureConfig({
    dataDir,
    registryHost: registry.host,
    registriesConf,
    signingKey: key,
  });
  return { dataDir, registry, podman: new Podman({ registriesConf }), key, config };
}

/** Builds a one-label image from the base image, tagged `<registry>/<repository>:<commit>`; removed at the end. */
async function buildImage(
  t: ExecutionContext,
  platform: SigningPlatform,
  repository: string,
  commit: string,
): Promise<string> {
  const context = tempDir(t, 'svc-image-context-');
  fs.writeFileSync(
    path.join(context, 'Containerfile'),
    `FROM ${BASE_IMAGE}\nLABEL org.opencontainers.image.revision=${commit}\n`,
  );
  const tag = `${platform.registry.host}/${repository}:${commit}`;
  t.teardown(async () => {
    await platform.podman.run(['rmi', '--force', tag]);
  });
  await platform.podman.check('build of the test image', ['build', '--pull=never', '--quiet', '--tag', tag, context]);
  return tag;
}

function newCommit(): string {
  return randomBytes(20).toString('hex');
}

/** True when no gpg-agent serves a folder under `dir`, or none does within a second (one told to stop may be exiting). */
async function noAgentRuns(dir: string): Promise<boolean> {
  for (let attempt = 0; attempt < 20; attempt += 1) {
    if (spawnSync('pgrep', ['-f', `gpg-agent --homedir ${dir}/`]).status !== 0) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}

test('a signed push verifies against the platform key and the commit its label names', async (t) => {
  const platform = await signingPlatform(t);
  const commit = newCommit();
  const tag = await buildImage(t, platform, 'sigtest', commit);

  const pushed = await pushSignedImage({
    config: platform.config,
    signingKey: platform.key,
    source: tag,
    destination: tag,
  });

  t.regex(pushed.image, new RegExp(`^${platform.registry.host}/sigtest@sha256:[0-9a-f]{64}$`));
  const signature = path.join(platform.config.signatures, `sigtest@${pushed.digest.replace(':', '=')}`, 'signature-1');
  t.true(fs.existsSync(signature), 'the signature lies in the platform folder');
  t.true(await noAgentRuns(platform.dataDir), 'no gpg-agent is left running after the push');
  await t.notThrowsAsync(verifyImageSignature({ config: platform.config, image: pushed.image, commit }));

  const other = newCommit();
  await t.throwsAsync(verifyImageSignature({ config: platform.config, image: pushed.image, commit: other }), {
    instanceOf: ValidationError,
    message: `image ${pushed.image} was built from commit ${commit}, not from the resolved commit ${other}`,
  });
});

test('an image pushed without a signature is refused', async (t) => {
  const platform = await signingPlatform(t);
  const commit = newCommit();
  const tag = await buildImage(t, platform, 'sigtest', commit);
  const digestFile = path.join(platform.dataDir, 'unsigned-digest');
  await platform.podman.check('unsigned push', ['push', '--quiet', '--digestfile', digestFile, tag]);
  const image = `${platform.registry.host}/sigtest@${fs.readFileSync(digestFile, 'utf8').trim()}`;

  const error = await t.throwsAsync(verifyImageSignature({ config: platform.config, image, commit }), {
    instanceOf: ValidationError,
  });
  t.is(error?.code, 'image_signature_invalid');
  t.is(
    error?.message,
    `image ${image} is not signed by a key the platform trusts: A signature was required, but no signature exists; expected a signature by ${platform.key.fingerprint}`,
  );
});

test('an image signed with another key is refused until that key is trusted', async (t) => {
  const platform = await signingPlatform(t);
  const otherKey = await ensureImageSigningKey(tempDir(t, 'svc-other-key-'));
  const commit = newCommit();
  const tag = await buildImage(t, platform, 'elsewhere', commit);
  const pushed = await pushSignedImage({
    config: platform.config,
    signingKey: otherKey,
    source: tag,
    destination: tag,
  });

  const error = await t.throwsAsync(verifyImageSignature({ config: platform.config, image: pushed.image, commit }), {
    instanceOf: ValidationError,
  });
  t.is(error?.code, 'image_signature_invalid');
  t.is(
    error?.message,
    `image ${pushed.image} is not signed by a key the platform trusts: it is signed by key ${otherKey.fingerprint}, which is not trusted; expected a signature by ${platform.key.fingerprint}`,
  );

  const trusting = await writeImageSignatureConfig({
    dataDir: platform.dataDir,
    registryHost: platform.registry.host,
    registriesConf: platform.config.registriesConf,
    signingKey: platform.key,
    extraTrustedKeyPaths: [otherKey.publicKeyPath],
  });
  t.is(trusting.outcome, 'updated');
  t.deepEqual(trusting.trustedFingerprints, [platform.key.fingerprint, otherKey.fingerprint]);
  await t.notThrowsAsync(verifyImageSignature({ config: trusting, image: pushed.image, commit }));
});

test('an image missing from the managed registry is reported as not found', async (t) => {
  const platform = await signingPlatform(t);
  const image = `${platform.registry.host}/absent@sha256:${'0'.repeat(64)}`;
  await t.throwsAsync(verifyImageSignature({ config: platform.config, image, commit: newCommit() }), {
    instanceOf: NotFoundError,
    message: `image ${image} is not in the managed registry`,
  });
});

test('the signing key is made once, in a folder only its owner reads, with no agent left running', async (t) => {
  const dataDir = tempDir(t);
  const first = await ensureImageSigningKey(dataDir);
  const second = await ensureImageSigningKey(dataDir);

  t.is(first.outcome, 'created');
  t.is(second.outcome, 'unchanged');
  t.is(second.fingerprint, first.fingerprint);
  t.regex(first.fingerprint, /^[0-9A-F]{40}$/);
  t.regex(fs.readFileSync(first.publicKeyPath, 'utf8'), /^-----BEGIN PGP PUBLIC KEY BLOCK-----/);
  const layout = imageSignatureLayout(dataDir);
  t.is(fs.statSync(layout.signing).mode & 0o777, 0o700);
  t.is(fs.statSync(layout.gnupgHome).mode & 0o777, 0o700);
  t.is(fs.statSync(first.publicKeyPath).mode & 0o777, 0o600);
  t.is(fs.statSync(layout.fingerprintFile).mode & 0o777, 0o600);
  t.true(await noAgentRuns(dataDir));
  t.deepEqual(
    fs.readdirSync(layout.base).filter((name) => name.startsWith('.signing-')),
    [],
    'no staging folder is left',
  );
});

test('the verification policy rejects everything but signed images of the managed registry', async (t) => {
  const dataDir = tempDir(t);
  const key = await ensureImageSigningKey(dataDir);
  const options = { dataDir, registryHost: '127.0.0.1:5999', registriesConf: '/nonexistent', signingKey: key };
  const config = await writeImageSignatureConfig(options);

  t.is(config.outcome, 'created');
  t.deepEqual(JSON.parse(fs.readFileSync(config.policy, 'utf8')), {
    default: [{ type: 'reject' }],
    transports: {
      docker: {
        '127.0.0.1:5999': [
          {
            type: 'signedBy',
            keyType: 'GPGKeys',
            keyPath: key.publicKeyPath,
            signedIdentity: { type: 'matchRepoDigestOrExact' },
          },
        ],
      },
    },
  });
  t.regex(
    fs.readFileSync(path.join(config.registriesDir, 'svc-managed-registry.yaml'), 'utf8'),
    new RegExp(`"127.0.0.1:5999":\\n    lookaside: "file://${config.signatures}"`),
  );
  t.is((await writeImageSignatureConfig(options)).outcome, 'unchanged');

  await t.throwsAsync(
    verifyImageSignature({ config, image: `docker.io/library/ruby@sha256:${'1'.repeat(64)}`, commit: newCommit() }),
    { instanceOf: ValidationError, message: /is not in the managed registry 127\.0\.0\.1:5999/ },
  );
  await t.throwsAsync(
    writeImageSignatureConfig({ ...options, extraTrustedKeyPaths: [path.join(dataDir, 'containers', 'policy.json')] }),
    { instanceOf: ValidationError, message: /policy\.json holds no OpenPGP public key$/ },
  );
});
