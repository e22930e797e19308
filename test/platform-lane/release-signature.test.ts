// tier: quick
/**
 * Detached signatures of release artifacts and fetching by tag (ADR 0142), each with real parts:
 * keys and signatures made by `openssl`, archives unpacked by `tar` into the release folders, and a
 * fetch hook script that copies from a folder standing in for the release repository.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import {
  ArtifactSource,
  FetchedReleaseSource,
  ReleaseFolders,
  hostTarget,
  loadReleasePublicKey,
  runVerifyHook,
} from '../../platform/platform-lane/index.js';
import { tempDir } from '../helpers/temp-dir.js';
import { fakeArtifact, opensslFingerprint, opensslKeyPair, opensslSign } from './release-keys.js';

const signal = new AbortController().signal;
const SHA = '0123456789abcdef0123456789abcdef01234567';

for (const [algorithm, base64] of [
  ['ed25519', false],
  ['rsa', true],
  ['ec', false],
] as const) {
  test(`ArtifactSource accepts an archive signed by the configured ${algorithm} key (${base64 ? 'base64' : 'raw'} .sig) and names the key by fingerprint`, async (t) => {
    const dir = tempDir(t);
    const key = opensslKeyPair(dir, 'release', algorithm);
    const archive = fakeArtifact(dir, { commit: SHA });
    opensslSign(key, archive, { base64 });
    const staged = await new ReleaseFolders(path.join(dir, 'platform')).stage(
      new ArtifactSource(archive, { publicKey: loadReleasePublicKey(key.publicKey) }),
      { signal },
    );
    t.is(staged.signature?.state, 'valid', staged.signature?.message);
    t.is(
      staged.signature?.message,
      `signature by key ${opensslFingerprint(key.publicKey)}: valid over ${path.basename(archive)}`,
    );
    t.false(
      staged.signature!.message.includes(fs.readFileSync(key.publicKey, 'utf8').split('\n')[1]!),
      'the key itself is never in the message',
    );
    t.is(staged.manifest.commit, SHA);
  });
}

test('ArtifactSource finds a signature by another key, or over other bytes, invalid', async (t) => {
  const dir = tempDir(t);
  const ours = opensslKeyPair(dir, 'ours', 'ed25519');
  const theirs = opensslKeyPair(dir, 'theirs', 'ed25519');
  const publicKey = loadReleasePublicKey(ours.publicKey);
  const folders = new ReleaseFolders(path.join(dir, 'platform'));

  const byOther = fakeArtifact(fs.mkdtempSync(path.join(dir, 'a-')), { commit: SHA });
  opensslSign(theirs, byOther);
  const other = await folders.stage(new ArtifactSource(byOther, { publicKey }), { signal });
  t.is(other.signature?.state, 'invalid');
  t.regex(
    other.signature!.message,
    /^signature by key sha256:[0-9a-f]{64}: does not verify over svc-0\.1\.0-.*\.tar\.gz/,
  );

  const elsewhere = fs.mkdtempSync(path.join(dir, 'b-'));
  const signed = fakeArtifact(elsewhere, { commit: SHA, name: 'signed.tar.gz' });
  const swapped = fakeArtifact(elsewhere, { commit: SHA, version: '0.1.1' });
  opensslSign(ours, signed, { out: `${swapped}.sig` });
  t.is(
    (await folders.stage(new ArtifactSource(swapped, { publicKey }), { signal })).signature?.state,
    'invalid',
    'a valid signature of other bytes',
  );

  fs.writeFileSync(`${swapped}.sig`, 'bm90IGEgc2lnbmF0dXJl\n');
  t.is(
    (await folders.stage(new ArtifactSource(swapped, { publicKey }), { signal })).signature?.state,
    'invalid',
    'garbage',
  );
});

test('ArtifactSource reports an archive without .sig as missing and an unpacked folder as unable to carry a signature', async (t) => {
  const dir = tempDir(t);
  const key = opensslKeyPair(dir, 'release', 'ed25519');
  const publicKey = loadReleasePublicKey(key.publicKey);
  const archive = fakeArtifact(dir, { commit: SHA });
  const folders = new ReleaseFolders(path.join(dir, 'platform'));
  const unsigned = await folders.stage(new ArtifactSource(archive, { publicKey }), { signal });
  t.deepEqual(unsigned.signature, {
    state: 'missing',
    message: `${path.basename(archive)} is unsigned: no ${path.basename(archive)}.sig beside it`,
  });
  const folder = folders.dir(unsigned.manifest.id);
  const copied = await new ReleaseFolders(path.join(dir, 'platform2')).stage(
    new ArtifactSource(folder, { publicKey }),
    { signal },
  );
  t.is(copied.signature?.state, 'unsupported');
  t.is((await folders.stage(new ArtifactSource(archive), { signal })).signature, undefined, 'no key, no check');
});

/** A fetch hook: checks what it was asked, records it, and copies `<repository>/<tag>/*` into the fetch folder. */
const FETCH_HOOK = `set -eu
printf 'tag=%s commit=%s target=%s repository=%s dir=%s\\n' "$SVC_RELEASE_TAG" "$SVC_RELEASE_COMMIT" "$SVC_RELEASE_TARGET" "$SVC_RELEASE_REPOSITORY" "$SVC_RELEASE_FETCH_DIR" >> "$SVC_RELEASE_REPOSITORY/asked.log"
[ "$SVC_RELEASE_TAG" = "platform-$SVC_RELEASE_COMMIT" ] || { echo "tag and commit disagree" >&2; exit 3; }
[ -z "$(ls -A "$SVC_RELEASE_FETCH_DIR")" ] || { echo "the fetch folder is not empty" >&2; exit 4; }
[ "$(pwd)" = "$SVC_RELEASE_FETCH_DIR" ] || { echo "not run in the fetch folder" >&2; exit 5; }
[ -d "$SVC_RELEASE_REPOSITORY/$SVC_RELEASE_TAG" ] || { echo "no release $SVC_RELEASE_TAG in $SVC_RELEASE_REPOSITORY" >&2; exit 6; }
cp "$SVC_RELEASE_REPOSITORY/$SVC_RELEASE_TAG/"* "$SVC_RELEASE_FETCH_DIR/"`;

function repositoryWith(dir: string, tag: string, files: (into: string) => void): string {
  const repository = path.join(dir, 'repository');
  fs.mkdirSync(path.join(repository, tag), { recursive: true });
  files(path.join(repository, tag));
  return repository;
}

test('FetchedReleaseSource runs the fetch hook with the tag, commit, target and repository, then stages and checks the one archive it left', async (t) => {
  const dir = tempDir(t);
  const key = opensslKeyPair(dir, 'release', 'ed25519');
  const repository = repositoryWith(dir, `platform-${SHA}`, (into) => {
    const archive = fakeArtifact(into, { commit: SHA });
    opensslSign(key, archive, { base64: true });
    fs.writeFileSync(
      `${archive}.sha256`,
      `${createHash('sha256').update(fs.readFileSync(archive)).digest('hex')}  ${path.basename(archive)}\n`,
    );
  });
  const folders = new ReleaseFolders(path.join(dir, 'platform'));
  const source = new FetchedReleaseSource(`platform-${SHA}`, {
    hook: FETCH_HOOK,
    repository,
    publicKey: loadReleasePublicKey(key.publicKey),
  });
  const staged = await folders.stage(source, { signal });
  t.is(staged.manifest.commit, SHA);
  t.is(staged.signature?.state, 'valid', staged.signature?.message);
  t.regex(
    staged.manifest.source,
    new RegExp(
      `^fetch:platform-${SHA} from ${repository} \\(svc-0\\.1\\.0-${hostTarget()}\\.tar\\.gz, sha256 [0-9a-f]{64}\\)$`,
    ),
  );
  const asked = fs.readFileSync(path.join(repository, 'asked.log'), 'utf8');
  t.regex(
    asked,
    new RegExp(
      `^tag=platform-${SHA} commit=${SHA} target=${hostTarget()} repository=${repository} dir=${folders.releasesDir}/\\.staging-[0-9a-f]+/\\.fetch-\\w+\\n$`,
    ),
  );
  t.deepEqual(
    fs.readdirSync(staged.dir).filter((name) => name.startsWith('.')),
    [],
    'the fetch folder is gone',
  );
});

test('FetchedReleaseSource refuses an archive of another commit than the tag names, and stages nothing', async (t) => {
  const dir = tempDir(t);
  const other = 'f'.repeat(40);
  const repository = repositoryWith(dir, `platform-${SHA}`, (into) => void fakeArtifact(into, { commit: other }));
  const folders = new ReleaseFolders(path.join(dir, 'platform'));
  const error = await t.throwsAsync(
    folders.stage(new FetchedReleaseSource(`platform-${SHA}`, { hook: FETCH_HOOK, repository }), { signal }),
  );
  t.regex(
    error.message,
    new RegExp(
      `^the fetched svc-0\\.1\\.0-.*\\.tar\\.gz is commit ${other} by its svc-release\\.json, not ${SHA}: refused`,
    ),
  );
  t.deepEqual(fs.readdirSync(folders.releasesDir), [], 'nothing staged');
});

test('FetchedReleaseSource refuses a hook that fails, leaves no archive, two archives or other files', async (t) => {
  const dir = tempDir(t);
  const stage = (repository: string, hook = FETCH_HOOK) =>
    new ReleaseFolders(path.join(dir, 'platform')).stage(
      new FetchedReleaseSource(`platform-${SHA}`, { hook, repository }),
      { signal },
    );
  const missing = await t.throwsAsync(stage(path.join(dir, 'nowhere-repository')));
  t.regex(
    missing.message,
    /^the fetch hook \(SVC_RELEASE_FETCH_HOOK\) exited 2 fetching platform-0123456789abcdef0123456789abcdef01234567: .*nowhere-repository\/asked\.log/,
  );
  const none = await t.throwsAsync(stage(dir, 'true'));
  t.is(
    none.message,
    'the fetch hook must leave exactly one release archive (.tar.gz) in SVC_RELEASE_FETCH_DIR, it left none (the folder is empty)',
  );
  const two = repositoryWith(fs.mkdtempSync(path.join(dir, 'two-')), `platform-${SHA}`, (into) => {
    fakeArtifact(into, { commit: SHA });
    fakeArtifact(into, { commit: SHA, name: 'second.tgz' });
  });
  t.regex((await t.throwsAsync(stage(two))).message, /it left second\.tgz, svc-0\.1\.0-.*\.tar\.gz$/);
  const stray = repositoryWith(fs.mkdtempSync(path.join(dir, 'stray-')), `platform-${SHA}`, (into) => {
    fakeArtifact(into, { commit: SHA });
    fs.writeFileSync(path.join(into, 'notes.txt'), 'hi');
  });
  t.regex(
    (await t.throwsAsync(stage(stray))).message,
    /^the fetch hook left files other than svc-0\.1\.0-.*\.tar\.gz and its \.sha256 and \.sig: notes\.txt$/,
  );
});

test('runVerifyHook gives the hook the release tag platform-<full commit sha> beside its identity', async (t) => {
  const dir = tempDir(t);
  const staged = await new ReleaseFolders(path.join(dir, 'platform')).stage(
    new ArtifactSource(fakeArtifact(dir, { commit: SHA })),
    { signal },
  );
  const outcome = await runVerifyHook(
    'echo "$SVC_RELEASE_TAG $SVC_RELEASE_COMMIT $SVC_RELEASE_ID"',
    staged.dir,
    staged.manifest,
    { signal },
  );
  t.deepEqual(outcome, { accepted: true, message: `platform-${SHA} ${SHA} ${staged.manifest.id}` });
});
