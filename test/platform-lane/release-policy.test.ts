// tier: quick
/**
 * The release policy's rules (ADR 0142): the tag `platform-<full sha>` and the fetch selector, the
 * signature policy's verdict over the verify hook and the signature check, the settings as
 * loaded at start, and the API side refusing a bad selector or a tag nothing can fetch.
 */
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { ConfigError, ConflictError, ValidationError } from '../../domain/errors.js';
import {
  isFetchSelector,
  policyVerdict,
  releaseTag,
  selectorCommit,
  type SignatureCheck,
} from '../../domain/platform/index.js';
import { PlatformLaneService } from '../../controllers/platform/index.js';
import { loadConfig, redactConfig } from '../../platform/config.js';
import { openControlStore } from '../../store/open-stores.js';
import { tempDir } from '../helpers/temp-dir.js';
import { opensslFingerprint, opensslKeyPair } from './release-keys.js';

const SHA = 'ab'.repeat(20);

test('releaseTag is platform-<full commit sha>, and null when the commit is unknown', (t) => {
  t.is(releaseTag(SHA), `platform-${SHA}`);
  t.is(releaseTag(null), null);
});

test('selectorCommit accepts only platform- and the full 40 lower-case hex digits', (t) => {
  t.deepEqual(selectorCommit(`platform-${SHA}`), { commit: SHA });
  for (const bad of [
    'platform-abc1234',
    `platform-${SHA.toUpperCase()}`,
    `platform-${SHA}0`,
    'platform-v0.2.0-platform',
    'platform-',
  ]) {
    const result = selectorCommit(bad);
    t.true(
      'error' in result && /is not a release tag: a fetch selector is platform-<full commit sha>/.test(result.error),
      bad,
    );
  }
  t.true(isFetchSelector(`platform-${SHA}`));
  t.true(isFetchSelector('platform-main'));
  t.false(isFetchSelector('./platform-main'), 'a path is a folder, not a selector');
  t.false(isFetchSelector('/srv/platform-x.tar.gz'));
});

const valid: SignatureCheck = { state: 'valid', message: 'signature by key sha256:k: valid over a.tar.gz' };
const invalid: SignatureCheck = {
  state: 'invalid',
  message: 'signature by key sha256:k: does not verify over a.tar.gz',
};
const missing: SignatureCheck = { state: 'missing', message: 'a.tar.gz is unsigned' };
const unsupported: SignatureCheck = { state: 'unsupported', message: 'not a release archive' };
const hookOk = { accepted: true, message: 'signed' };
const hookNo = { accepted: false, message: 'the verify hook exited 1' };

test('policyVerdict under require-signed accepts only a release the hook or a valid signature verified', (t) => {
  const verdict = (checks: Parameters<typeof policyVerdict>[1]) => policyVerdict('require-signed', checks).verification;
  t.is(verdict({ hook: hookOk }), 'accepted');
  t.is(verdict({ signature: valid }), 'accepted');
  t.is(verdict({ hook: hookOk, signature: valid }), 'accepted');
  t.is(verdict({ hook: hookOk, signature: unsupported }), 'accepted', 'a built checkout verified by the hook');
  t.is(verdict({ hook: hookNo, signature: valid }), 'rejected', 'a failing hook rejects whatever the signature');
  t.is(verdict({ hook: hookOk, signature: invalid }), 'rejected', 'a bad signature rejects whatever the hook');
  t.is(verdict({ hook: hookOk, signature: missing }), 'rejected', 'with a key set, an artifact must be signed');
  t.is(verdict({ signature: missing }), 'rejected');
  const checkout = policyVerdict('require-signed', { signature: unsupported });
  t.is(checkout.verification, 'rejected');
  t.regex(
    checkout.message,
    /not a release archive .*require-signed promotes only a release the verify hook accepted or a release artifact with a valid signature/,
  );
  t.is(verdict({}), 'rejected');
});

test('policyVerdict under none still rejects a failed check but accepts an unsigned release', (t) => {
  t.deepEqual(policyVerdict('none', {}).verification, 'off');
  t.is(policyVerdict('none', { hook: hookNo }).verification, 'rejected');
  t.is(policyVerdict('none', { signature: invalid }).verification, 'rejected');
  t.is(policyVerdict('none', { signature: valid }).verification, 'accepted');
  t.is(policyVerdict('none', { hook: hookOk }).verification, 'accepted');
  const unsigned = policyVerdict('none', { signature: missing });
  t.is(unsigned.verification, 'accepted');
  t.regex(unsigned.message, /accepted unsigned \(SVC_RELEASE_SIGNATURE_POLICY=none\)$/);
  t.is(policyVerdict('none', { signature: unsupported }).verification, 'accepted');
});

test('loadConfig defaults the signature policy to require-signed in production and refuses it at start without a hook or key', (t) => {
  const production = { SVC_PROFILE: 'production', SVC_REQUIRE_EXPLICIT_AUTH: 'true', SVC_API_TOKEN: 'tok' };
  const error = t.throws(() => loadConfig(production), { instanceOf: ConfigError });
  t.is(
    error.message,
    'SVC_RELEASE_SIGNATURE_POLICY: require-signed (the default when SVC_PROFILE=production) needs a way to verify platform releases: set SVC_RELEASE_VERIFY_HOOK or SVC_RELEASE_PUBLIC_KEY (or both), or SVC_RELEASE_SIGNATURE_POLICY=none',
  );
  t.throws(() => loadConfig({ SVC_RELEASE_SIGNATURE_POLICY: 'require-signed' }), {
    instanceOf: ConfigError,
    message: /^SVC_RELEASE_SIGNATURE_POLICY: require-signed needs a way to verify/,
  });
  t.throws(() => loadConfig({ SVC_RELEASE_SIGNATURE_POLICY: 'signed' }), {
    instanceOf: ConfigError,
    message: 'SVC_RELEASE_SIGNATURE_POLICY: "signed" is not one of none, require-signed',
  });
  t.is(loadConfig({}).releaseSignaturePolicy, 'none');
  t.is(loadConfig({ ...production, SVC_RELEASE_VERIFY_HOOK: 'true' }).releaseSignaturePolicy, 'require-signed');
  t.is(loadConfig({ ...production, SVC_RELEASE_SIGNATURE_POLICY: 'none' }).releaseSignaturePolicy, 'none');
});

test('loadConfig reads the verify hook under its deprecated name SVC_RELEASE_VERIFY_COMMAND too, the new name first', (t) => {
  t.is(loadConfig({ SVC_RELEASE_VERIFY_COMMAND: 'old-check' }).releaseVerifyHook, 'old-check');
  t.is(
    loadConfig({ SVC_RELEASE_VERIFY_COMMAND: 'old-check', SVC_RELEASE_VERIFY_HOOK: 'new-check' }).releaseVerifyHook,
    'new-check',
  );
  t.is(
    loadConfig({ SVC_RELEASE_SIGNATURE_POLICY: 'require-signed', SVC_RELEASE_VERIFY_COMMAND: 'old-check' })
      .releaseSignaturePolicy,
    'require-signed',
  );
});

test('loadConfig reads SVC_RELEASE_PUBLIC_KEY as a PEM file or PEM text, names it by fingerprint and never prints it', (t) => {
  const dir = tempDir(t);
  const key = opensslKeyPair(dir, 'release', 'ed25519');
  const pem = fs.readFileSync(key.publicKey, 'utf8');
  const fingerprint = opensslFingerprint(key.publicKey);
  const fromFile = loadConfig({
    SVC_RELEASE_SIGNATURE_POLICY: 'require-signed',
    SVC_RELEASE_PUBLIC_KEY: key.publicKey,
  });
  t.is(fromFile.releasePublicKey?.fingerprint, fingerprint);
  t.is(loadConfig({ SVC_RELEASE_PUBLIC_KEY: pem }).releasePublicKey?.fingerprint, fingerprint);
  t.is(
    loadConfig({ SVC_RELEASE_PUBLIC_KEY: pem.trim().replace(/\n/g, '\\n') }).releasePublicKey?.fingerprint,
    fingerprint,
    'one line with \\n, as in an environment file',
  );
  const shown = JSON.stringify(redactConfig(fromFile));
  t.false(shown.includes(pem.split('\n')[1]!));
  t.is(redactConfig(fromFile).releasePublicKey, fingerprint, 'a public key is shown by its fingerprint');

  const secret = fs.readFileSync(key.privateKey, 'utf8');
  const privateError = t.throws(() => loadConfig({ SVC_RELEASE_PUBLIC_KEY: secret }), { instanceOf: ConfigError });
  t.regex(privateError.message, /^SVC_RELEASE_PUBLIC_KEY: (holds a private key|is not a PEM public key)/);
  t.false(privateError.message.includes(secret.split('\n')[1]!), 'the key is never in the message');
  t.throws(() => loadConfig({ SVC_RELEASE_PUBLIC_KEY: path.join(dir, 'missing.pem') }), {
    instanceOf: ConfigError,
    message: /^SVC_RELEASE_PUBLIC_KEY: the public key file .*missing\.pem cannot be read \(ENOENT\)/,
  });
  t.throws(
    () => loadConfig({ SVC_RELEASE_PUBLIC_KEY: '-----BEGIN PUBLIC KEY-----\nnot base64\n-----END PUBLIC KEY-----' }),
    { instanceOf: ConfigError, message: /^SVC_RELEASE_PUBLIC_KEY: is not a PEM public key/ },
  );
});

test('PlatformLaneService refuses a malformed release tag as a validation error and a tag nothing can fetch as a conflict naming SVC_RELEASE_FETCH_HOOK', (t) => {
  const store = openControlStore(tempDir(t));
  t.teardown(() => store.db.close());
  let started = 0;
  const off = new PlatformLaneService(store.db, () => ++started);
  const bad = t.throws(() => off.queue('platform.upgrade', { source: 'platform-abc1234' }), {
    instanceOf: ValidationError,
  });
  t.is(bad.code, 'invalid_release_selector');
  t.regex(bad.message, /^source: "platform-abc1234" is not a release tag/);
  const unfetchable = t.throws(() => off.queue('platform.preflight', { source: `platform-${SHA}` }), {
    instanceOf: ConflictError,
  });
  t.is(unfetchable.code, 'release_fetch_not_configured');
  t.regex(unfetchable.message, /SVC_RELEASE_FETCH_HOOK is not set/);
  t.is(started, 0, 'nothing was queued');
  const on = new PlatformLaneService(store.db, () => ++started, { fetchHookConfigured: true });
  t.throws(() => on.queue('platform.upgrade', { source: `platform-${SHA.slice(0, 12)}` }), {
    instanceOf: ValidationError,
  });
  const queued = on.queue('platform.preflight', { source: `platform-${SHA}` });
  t.like(queued.operation, { kind: 'platform.preflight', ref: `platform-${SHA}` });
  t.is(started, 1);
});
