// tier: full
/**
 * The release policy through the platform lane, end to end (ADR 0142): a platform under
 * `SVC_RELEASE_SIGNATURE_POLICY=require-signed` with only a public key (Ed25519, made by openssl)
 * and a fetch hook that copies from a folder standing in for the release repository. It upgrades
 * by tag (`svc platform upgrade platform-<sha> --follow`) to the real artifact, signed; it refuses a
 * built checkout (no signature possible), a tag whose archive another key signed, and a tag whose
 * archive is another commit; a malformed tag is a 400.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import { runSvc } from '../helpers/cli.js';
import { repackedArtifact, sharedArtifact } from '../helpers/shared-artifact.js';
import {
  api,
  builtTree,
  currentRelease,
  startLanePlatform,
  tail,
  waitForLane,
  type LanePlatform,
} from './lane-harness.js';
import { opensslFingerprint, opensslKeyPair, opensslSign, type KeyPair } from './release-keys.js';

let platform: LanePlatform;
let tree: string;
let work: string;
let repository: string;
let key: KeyPair;
const teardowns: (() => Promise<void> | void)[] = [];
const commit = (): string => crypto.randomBytes(20).toString('hex');
const GOOD = commit();
const OTHER_KEY = commit();
const MISMATCH = commit();

test.after.always(async () => {
  for (const fn of teardowns.reverse()) await fn();
});

/** The fetch hook: checks what it was asked, records it, copies `<repository>/<tag>/*` into the fetch folder. */
const FETCH_HOOK = `#!/bin/sh
set -eu
echo "$SVC_RELEASE_TAG $SVC_RELEASE_COMMIT $SVC_RELEASE_TARGET" >> "$SVC_RELEASE_REPOSITORY/asked.log"
[ "$SVC_RELEASE_TAG" = "platform-$SVC_RELEASE_COMMIT" ] || { echo "tag and commit disagree" >&2; exit 3; }
[ -z "$(ls -A "$SVC_RELEASE_FETCH_DIR")" ] || { echo "the fetch folder is not empty" >&2; exit 4; }
cp "$SVC_RELEASE_REPOSITORY/$SVC_RELEASE_TAG/"* "$SVC_RELEASE_FETCH_DIR/"
`;

test.before(async (t) => {
  t.timeout(600_000);
  const [built, artifact] = await Promise.all([builtTree(), sharedArtifact()]);
  tree = built;
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-release-policy-'));
  teardowns.push(() => fs.rmSync(work, { recursive: true, force: true }));
  fs.chmodSync(work, 0o711);
  key = opensslKeyPair(work, 'release', 'ed25519');
  const other = opensslKeyPair(work, 'other', 'ed25519');
  repository = path.join(work, 'repository');
  const publish = async (tagCommit: string, manifestCommit: string, signer: KeyPair) => {
    const folder = path.join(repository, `platform-${tagCommit}`);
    fs.mkdirSync(folder, { recursive: true });
    const { archive } = await repackedArtifact(artifact, folder, new Date().toISOString(), { commit: manifestCommit });
    opensslSign(signer, archive);
  };
  await publish(GOOD, GOOD, key);
  await publish(OTHER_KEY, OTHER_KEY, other);
  await publish(MISMATCH, GOOD, key);
  const hook = path.join(work, 'fetch-hook.sh');
  fs.writeFileSync(hook, FETCH_HOOK, { mode: 0o755 });
  platform = await startLanePlatform({ teardown: (fn) => void teardowns.push(fn) }, tree, {
    env: {
      SVC_RELEASE_SIGNATURE_POLICY: 'require-signed',
      SVC_RELEASE_PUBLIC_KEY: key.publicKey,
      SVC_RELEASE_FETCH_HOOK: hook,
      SVC_RELEASE_REPOSITORY: repository,
    },
  });
});

/**
 * The steps of the operation's last attempt. An attempt the agent lost (its lease expired on this
 * shared machine, SVC_OPERATION_LEASE=3s) is resumed by the next one, as the lane is built to do;
 * its steps are logged, not hidden.
 */
function lastAttempt(view: any): any[] {
  const last = Math.max(...view.steps.map((s: any) => s.attempt as number));
  return view.steps.filter((s: any) => s.attempt === last);
}
const steps = (view: any, t?: { log(...values: unknown[]): void }): string[] => {
  const earlier = view.steps.filter((s: any) => !lastAttempt(view).includes(s));
  if (earlier.length > 0)
    t?.log(`earlier attempts: ${JSON.stringify(earlier.map((s: any) => [s.attempt, s.step, s.status, s.message]))}`);
  return lastAttempt(view).map((s: any) => `${s.step} ${s.status}`);
};
const logs = (): string =>
  `agent log: ${tail(path.join(platform.platformDir, 'agent.log'))}; api log: ${tail(path.join(platform.platformDir, 'api.log'))}`;

async function cli(...args: string[]): Promise<{ code: number | null; stdout: string; id: string }> {
  const result = await runSvc([...args, '--follow', '--api', platform.url], { timeoutMs: 250_000 });
  const id = /^platform\.(?:upgrade|preflight) (op_[0-9a-f]{20})$/m.exec(result.stdout)?.[1];
  if (id === undefined) throw new Error(`no operation in: ${result.stdout}${result.stderr}`);
  return { code: result.code, stdout: result.stdout, id };
}

test.serial('A release tag that is not platform-<full sha> is a 400 with the error envelope', async (t) => {
  const short = await api(platform, 'POST', '/api/platform/upgrade', { source: `platform-${GOOD.slice(0, 12)}` });
  t.is(short.status, 400);
  t.is(short.body.error.code, 'invalid_release_selector');
  t.regex(
    short.body.error.message,
    /^source: "platform-[0-9a-f]{12}" is not a release tag: a fetch selector is platform-<full commit sha>/,
  );
  t.is((await api(platform, 'POST', '/api/platform/preflight', { source: 'platform-main' })).status, 400);
});

test.serial(
  'Under require-signed with only a public key, a built checkout is rejected at verify because it cannot carry a signature',
  async (t) => {
    t.timeout(240_000);
    const run = await cli('platform', 'preflight', tree);
    t.is(run.code, 1, run.stdout);
    const view = await waitForLane(platform, run.id);
    t.deepEqual(steps(view, t), ['stage succeeded', 'verify failed'], logs());
    t.regex(
      lastAttempt(view)[1].message,
      new RegExp(
        `^the signature policy rejected .*: no signature by key ${opensslFingerprint(key.publicKey)}: .* is not a release archive, and only a release archive \\(\\.tar\\.gz with its \\.sig\\) carries one \\(SVC_RELEASE_SIGNATURE_POLICY=require-signed promotes only`,
      ),
    );
  },
);

test.serial('A tag whose archive another key signed is fetched, rejected at verify and never promoted', async (t) => {
  t.timeout(240_000);
  const run = await cli('platform', 'upgrade', `platform-${OTHER_KEY}`);
  t.is(run.code, 1, run.stdout);
  const view = await waitForLane(platform, run.id);
  t.deepEqual(steps(view, t), ['stage succeeded', 'verify failed'], logs());
  t.regex(
    lastAttempt(view)[1].message,
    new RegExp(`signature by key ${opensslFingerprint(key.publicKey)}: does not verify over svc-`),
  );
  const builds = (await api(platform, 'GET', '/api/platform/releases')).body.builds as any[];
  const rejected = builds.find((b) => b.commit === OTHER_KEY);
  t.like(rejected, { tag: `platform-${OTHER_KEY}`, verification: 'rejected', promotedAt: null, current: false });
  // The upgrade installed the running build as the first release; current stays there.
  t.not(currentRelease(platform), rejected.id);
  t.is(builds.find((b) => b.id === currentRelease(platform))?.commit, null);
});

test.serial(
  'A tag whose fetched archive is another commit is refused at stage: identity never derives from the tag or the file name',
  async (t) => {
    t.timeout(240_000);
    const run = await cli('platform', 'upgrade', `platform-${MISMATCH}`);
    t.is(run.code, 1, run.stdout);
    const view = await waitForLane(platform, run.id);
    t.deepEqual(steps(view, t), ['stage failed'], logs());
    t.regex(
      lastAttempt(view)[0].message,
      new RegExp(`is commit ${GOOD} by its svc-release\\.json, not ${MISMATCH}: refused`),
    );
  },
);

test.serial(
  'svc platform upgrade platform-<sha> --follow fetches the signed artifact by its tag, verifies its signature and promotes it',
  async (t) => {
    t.timeout(300_000);
    const run = await cli('platform', 'upgrade', `platform-${GOOD}`);
    t.is(run.code, 0, `${run.stdout}; ${logs()}`);
    const view = await waitForLane(platform, run.id);
    t.deepEqual(steps(view, t), [
      'stage succeeded',
      'verify succeeded',
      'candidate succeeded',
      'drain succeeded',
      'promote succeeded',
      'restart succeeded',
      'postflight succeeded',
    ]);
    t.regex(
      lastAttempt(view)[1].message,
      new RegExp(`^accepted: signature by key ${opensslFingerprint(key.publicKey)}: valid over svc-`),
    );
    const release = view.upgrade.toRelease as string;
    t.is(currentRelease(platform), release);
    t.is((await api(platform, 'GET', '/api/version')).body.release, release);
    const builds = (await api(platform, 'GET', '/api/platform/releases')).body.builds as any[];
    const build = builds.find((b) => b.id === release);
    t.like(build, { tag: `platform-${GOOD}`, commit: GOOD, verification: 'accepted', current: true });
    t.regex(
      build.source,
      new RegExp(`^fetch:platform-${GOOD} from ${repository} \\(svc-.*\\.tar\\.gz, sha256 [0-9a-f]{64}\\)$`),
    );
    const listed = await runSvc(['platform', 'releases', '--api', platform.url]);
    t.regex(listed.stdout, new RegExp(`\\* +${release} .* platform-${GOOD} `));
    const asked = fs.readFileSync(path.join(repository, 'asked.log'), 'utf8').trim().split('\n');
    t.deepEqual(asked.slice(-1), [`platform-${GOOD} ${GOOD} ${process.platform}-${process.arch}`]);
    t.deepEqual(
      fs.readdirSync(path.join(platform.platformDir, 'releases')).filter((n) => n.startsWith('.')),
      [],
      'no fetch or staging folder is left',
    );
  },
);
