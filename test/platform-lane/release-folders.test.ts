// tier: quick
import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import {
  BuiltCheckoutSource,
  ReleaseFolders,
  runVerifyHook,
  treeFingerprint,
} from '../../platform/platform-lane/index.js';
import { releaseId, readPlatformLanePayload, resumePlan } from '../../domain/platform/index.js';
import { tempDir } from '../helpers/temp-dir.js';

/** A minimal built tree: what BuiltCheckoutSource copies, and a node_modules folder to share. */
function fakeTree(root: string, version: string, main = 'export const main = () => undefined;\n'): string {
  fs.mkdirSync(path.join(root, 'dist', 'cli'), { recursive: true });
  fs.writeFileSync(path.join(root, 'dist', 'cli', 'main.js'), main);
  fs.mkdirSync(path.join(root, 'bin'));
  fs.writeFileSync(path.join(root, 'bin', 'svc.js'), '#!/usr/bin/env node\n');
  fs.mkdirSync(path.join(root, 'schemas'));
  fs.writeFileSync(path.join(root, 'schemas', 'a.json'), '{}');
  fs.writeFileSync(path.join(root, 'package.json'), JSON.stringify({ name: 'svc', version }));
  fs.mkdirSync(path.join(root, 'node_modules', 'dep'), { recursive: true });
  fs.writeFileSync(path.join(root, 'source-only.ts'), 'not copied');
  return root;
}

const signal = new AbortController().signal;

test('ReleaseFolders stages a built tree under releases/<id> with node_modules linked, and the id carries version, commit and fingerprint', async (t) => {
  const root = tempDir(t);
  const tree = fakeTree(path.join(root, 'tree'), '1.2.3');
  const folders = new ReleaseFolders(path.join(root, 'platform'));
  const staged = await folders.stage(new BuiltCheckoutSource(tree), { signal });
  t.true(staged.created);
  t.regex(staged.manifest.sha256, /^[0-9a-f]{64}$/);
  t.is(staged.manifest.id, releaseId('1.2.3', null, staged.manifest.sha256));
  t.is(staged.manifest.label, 'v1.2.3-platform');
  t.is(staged.dir, path.join(root, 'platform', 'releases', staged.manifest.id));
  t.deepEqual(fs.readdirSync(staged.dir).sort(), [
    'bin',
    'dist',
    'node_modules',
    'package.json',
    'release.json',
    'schemas',
  ]);
  t.is(fs.readlinkSync(path.join(staged.dir, 'node_modules')), fs.realpathSync(path.join(tree, 'node_modules')));
  t.deepEqual(JSON.parse(fs.readFileSync(path.join(staged.dir, 'release.json'), 'utf8')), staged.manifest);
  t.deepEqual(fs.readdirSync(folders.releasesDir), [staged.manifest.id], 'no staging folder is left');
});

test('ReleaseFolders keeps the label apart from the identity: the same tree under another label is the same release', async (t) => {
  const root = tempDir(t);
  const tree = fakeTree(path.join(root, 'tree'), '1.2.3');
  const folders = new ReleaseFolders(path.join(root, 'platform'));
  const first = await folders.stage(new BuiltCheckoutSource(tree), { signal });
  const again = await folders.stage(new BuiltCheckoutSource(tree), { signal, label: 'friday-build' });
  t.false(again.created);
  t.is(again.manifest.id, first.manifest.id);
  t.is(again.manifest.sha256, first.manifest.sha256);
  t.is(again.manifest.label, 'friday-build');
  fs.writeFileSync(path.join(tree, 'dist', 'cli', 'main.js'), 'export const main = () => 1;\n');
  const changed = await folders.stage(new BuiltCheckoutSource(tree), { signal });
  t.not(changed.manifest.sha256, first.manifest.sha256, 'one changed file changes the fingerprint');
});

test('treeFingerprint covers paths and contents, ignores release.json and hashes a symbolic link by name only', async (t) => {
  const root = tempDir(t);
  fs.mkdirSync(path.join(root, 'a'));
  fs.writeFileSync(path.join(root, 'a', 'x'), '1');
  const base = await treeFingerprint(root);
  fs.writeFileSync(path.join(root, 'release.json'), '{"label":"anything"}');
  t.is(await treeFingerprint(root), base);
  fs.symlinkSync('/somewhere', path.join(root, 'node_modules'));
  const linked = await treeFingerprint(root);
  t.not(linked, base);
  fs.rmSync(path.join(root, 'node_modules'));
  fs.symlinkSync('/elsewhere', path.join(root, 'node_modules'));
  t.is(await treeFingerprint(root), linked);
  fs.renameSync(path.join(root, 'a', 'x'), path.join(root, 'a', 'y'));
  t.not(await treeFingerprint(root), linked);
});

test('ReleaseFolders.swap replaces the current link atomically and refuses a release that is not on disk', async (t) => {
  const root = tempDir(t);
  const folders = new ReleaseFolders(path.join(root, 'platform'));
  const one = await folders.stage(new BuiltCheckoutSource(fakeTree(path.join(root, 'one'), '1.0.0')), { signal });
  const two = await folders.stage(new BuiltCheckoutSource(fakeTree(path.join(root, 'two'), '2.0.0')), { signal });
  t.is(folders.current(), undefined);
  folders.swap(one.manifest.id);
  t.deepEqual(folders.current(), { id: one.manifest.id, dir: one.dir });
  folders.swap(two.manifest.id);
  t.is(
    fs.readlinkSync(folders.currentLink),
    path.join('releases', two.manifest.id),
    'a relative link: the folder may move',
  );
  t.is(
    fs.readFileSync(path.join(folders.currentLink, 'package.json'), 'utf8'),
    JSON.stringify({ name: 'svc', version: '2.0.0' }),
  );
  t.deepEqual(fs.readdirSync(folders.root).sort(), ['current', 'releases'], 'no temporary link is left');
  t.throws(() => folders.swap('0.0.0-nocommit-000000000000'), { message: /is not on disk/ });
  t.is(folders.current()?.id, two.manifest.id);
});

test('BuiltCheckoutSource refuses a folder that is not built', async (t) => {
  const root = tempDir(t);
  const tree = fakeTree(path.join(root, 'tree'), '1.0.0');
  fs.rmSync(path.join(tree, 'dist'), { recursive: true });
  const folders = new ReleaseFolders(path.join(root, 'platform'));
  await t.throwsAsync(folders.stage(new BuiltCheckoutSource(tree), { signal }), {
    message: /is not a built checkout: dist\/cli\/main\.js is missing/,
  });
  t.deepEqual(fs.readdirSync(folders.releasesDir), [], 'the staging folder is removed');
});

test('runVerifyHook accepts a release when the command exits 0 and rejects it with the output otherwise; the command sees the identity', async (t) => {
  const root = tempDir(t);
  const folders = new ReleaseFolders(path.join(root, 'platform'));
  const staged = await folders.stage(new BuiltCheckoutSource(fakeTree(path.join(root, 'tree'), '1.0.0')), { signal });
  const accepted = await runVerifyHook(
    'test "$SVC_RELEASE_SHA256" = "$(cat expected)" && echo "signature ok for $SVC_RELEASE_ID"',
    staged.dir,
    staged.manifest,
    { signal },
  ).catch((e: unknown) => e);
  t.deepEqual(accepted, {
    accepted: false,
    message: 'the verify command exited 1: cat: expected: No such file or directory',
  });
  fs.writeFileSync(path.join(staged.dir, 'expected'), staged.manifest.sha256);
  t.deepEqual(
    await runVerifyHook(
      'test "$SVC_RELEASE_SHA256" = "$(cat expected)" && echo "signature ok for $SVC_RELEASE_ID"',
      staged.dir,
      staged.manifest,
      { signal },
    ),
    {
      accepted: true,
      message: `signature ok for ${staged.manifest.id}`,
    },
  );
  t.deepEqual(await runVerifyHook('echo bad signature >&2; exit 3', staged.dir, staged.manifest, { signal }), {
    accepted: false,
    message: 'the verify command exited 3: bad signature',
  });
});

test('readPlatformLanePayload keeps well-typed fields only and resumePlan maps each phase to what a resumed attempt does', (t) => {
  t.deepEqual(readPlatformLanePayload({ source: '/x', label: 'l', drainMode: 'wait' }), {
    source: '/x',
    label: 'l',
    drainMode: 'wait',
  });
  t.deepEqual(readPlatformLanePayload({ source: 3, label: '', drainMode: 'later' }), {});
  t.deepEqual(
    [undefined, 'preparing', 'promoted', 'rolling_back', 'succeeded', 'failed', 'rolled_back'].map((p) =>
      resumePlan(p as never),
    ),
    ['start', 'start', 'restart-and-check', 'rollback', 'done', 'done', 'done'],
  );
});
