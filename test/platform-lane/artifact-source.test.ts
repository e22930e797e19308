// tier: full
/**
 * The release artifact as a release source: the real archive (built once per ava run) staged into
 * the release folders, a wrong `.sha256`, an archive of another target or without its manifest
 * refused with a clear message, an unpacked folder accepted; and how a release folder is started.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import {
  ArtifactSource,
  ReleaseFolders,
  isReleaseArtifact,
  releaseCommand,
} from '../../platform/platform-lane/index.js';
import { sharedArtifact } from '../helpers/shared-artifact.js';
import { tempDir } from '../helpers/temp-dir.js';
import { builtTree } from './lane-harness.js';

const signal = new AbortController().signal;

/** A small archive shaped like the artifact: `svc-0.1.0-<target>/` with a script `svc` and, unless left out, `svc-release.json`. */
function fakeArchive(dir: string, options: { target: string; manifest?: boolean; extraTop?: boolean }): string {
  const work = path.join(dir, 'fake');
  const folder = path.join(work, `svc-0.1.0-${options.target}`);
  fs.mkdirSync(folder, { recursive: true });
  fs.writeFileSync(path.join(folder, 'svc'), '#!/bin/sh\necho svc\n', { mode: 0o755 });
  if (options.manifest !== false) {
    fs.writeFileSync(
      path.join(folder, 'svc-release.json'),
      JSON.stringify({
        name: 'svc',
        version: '0.1.0',
        commit: null,
        target: options.target,
        node: process.version,
        builtAt: '2026-01-01T00:00:00.000Z',
      }),
    );
  }
  if (options.extraTop) fs.writeFileSync(path.join(work, 'README'), 'stray\n');
  const archive = path.join(dir, `svc-0.1.0-${options.target}.tar.gz`);
  execFileSync('tar', ['-C', work, '-czf', archive, ...fs.readdirSync(work)]);
  fs.rmSync(work, { recursive: true, force: true });
  return archive;
}

test('ArtifactSource stages the real release archive: the executable and its parts, identity from svc-release.json, the archive SHA-256 in the source', async (t) => {
  t.timeout(600_000);
  const built = await sharedArtifact();
  const dir = tempDir(t);
  t.true(isReleaseArtifact(built.archive));
  const folders = new ReleaseFolders(path.join(dir, 'platform'));
  const staged = await folders.stage(new ArtifactSource(built.archive), { signal });
  for (const part of [
    'svc',
    'svc-release.json',
    'lib/better_sqlite3.node',
    'lib/vec0.so',
    'share/web/console/index.html',
    'release.json',
  ])
    t.true(fs.existsSync(path.join(staged.dir, part)), part);
  t.is(fs.statSync(path.join(staged.dir, 'svc')).mode & 0o111, 0o111);
  t.deepEqual(
    fs.readdirSync(staged.dir).filter((name) => name.startsWith('.')),
    [],
    'no unpacking folder is left',
  );
  t.like(staged.manifest, {
    version: built.release.version,
    commit: built.release.commit,
    label: `v${built.release.version}-platform${built.release.commit ? `-g${built.release.commit.slice(0, 7)}` : ''}`,
    source: `artifact:${built.archive} (sha256 ${built.sha256})`,
  });
  t.regex(staged.manifest.id, new RegExp(`^${built.release.version.replace(/\./g, '\\.')}-`));
  t.deepEqual(releaseCommand(staged.dir), [path.join(staged.dir, 'svc')]);
  // The same archive again is the same release (nothing copied).
  t.false((await folders.stage(new ArtifactSource(built.archive), { signal })).created);
});

test('ArtifactSource refuses an archive whose .sha256 does not match, and stages nothing', async (t) => {
  t.timeout(600_000);
  const built = await sharedArtifact();
  const dir = tempDir(t);
  const archive = path.join(dir, path.basename(built.archive));
  fs.symlinkSync(built.archive, archive);
  fs.writeFileSync(`${archive}.sha256`, `${'0'.repeat(64)}  ${path.basename(archive)}\n`);
  const folders = new ReleaseFolders(path.join(dir, 'platform'));
  const error = await t.throwsAsync(folders.stage(new ArtifactSource(archive), { signal }));
  t.is(
    error?.message,
    `the release archive ${archive} does not match ${path.basename(archive)}.sha256: its SHA-256 is ${built.sha256}, the file says ${'0'.repeat(64)}`,
  );
  t.deepEqual(fs.readdirSync(folders.releasesDir), []);
});

test('ArtifactSource refuses an archive built for another target, one without svc-release.json and one with more than one top entry', async (t) => {
  const dir = tempDir(t);
  const other = process.arch === 'arm64' ? 'linux-x64' : 'linux-arm64';
  const into = () => fs.mkdtempSync(path.join(dir, 'into-'));
  const foreign = fakeArchive(dir, { target: other });
  t.is(
    (await t.throwsAsync(new ArtifactSource(foreign).stage(into(), signal)))?.message,
    `${foreign} is built for ${other}, and this host is linux-${process.arch}`,
  );
  const bare = fakeArchive(dir, { target: `linux-${process.arch}`, manifest: false });
  t.is(
    (await t.throwsAsync(new ArtifactSource(bare).stage(into(), signal)))?.message,
    `${bare} is not a release artifact: svc-release.json cannot be read (it is missing)`,
  );
  fs.rmSync(bare);
  const stray = fakeArchive(dir, { target: `linux-${process.arch}`, extraTop: true });
  t.regex(
    (await t.throwsAsync(new ArtifactSource(stray).stage(into(), signal)))?.message ?? '',
    /is not a release artifact: it must hold exactly one folder \(svc-<version>-<target>\/\), it holds /,
  );
  const missing = path.join(dir, 'nothing.tar.gz');
  t.is(
    (await t.throwsAsync(new ArtifactSource(missing).stage(into(), signal)))?.message,
    `the release archive ${missing} does not exist`,
  );
});

test('ArtifactSource accepts an unpacked artifact folder: it is copied, and the folder is told apart from a built checkout', async (t) => {
  t.timeout(600_000);
  const built = await sharedArtifact();
  const dir = tempDir(t);
  execFileSync('tar', ['-xzf', built.archive, '-C', dir]);
  const folder = path.join(dir, path.basename(built.archive, '.tar.gz'));
  t.true(isReleaseArtifact(folder));
  t.false(isReleaseArtifact(await builtTree()));
  const folders = new ReleaseFolders(path.join(dir, 'platform'));
  const staged = await folders.stage(new ArtifactSource(folder), { signal });
  t.true(staged.created);
  t.like(staged.manifest, {
    version: built.release.version,
    commit: built.release.commit,
    source: `artifact:${folder}`,
  });
  // The same tree as the archive's: the same release.
  t.false((await folders.stage(new ArtifactSource(built.archive), { signal })).created);
  t.true(fs.existsSync(path.join(folder, 'svc')), 'the folder is left as it was');
});

test('releaseCommand runs a built checkout with Node.js, the artifact by its executable, and refuses a folder with neither', async (t) => {
  const tree = await builtTree();
  t.deepEqual(releaseCommand(tree), [process.execPath, path.join(tree, 'bin', 'svc.js')]);
  const dir = tempDir(t);
  const artifact = path.join(dir, 'artifact');
  fs.mkdirSync(artifact);
  fs.writeFileSync(path.join(artifact, 'svc'), '#!/bin/sh\n', { mode: 0o755 });
  t.deepEqual(releaseCommand(artifact), [path.join(artifact, 'svc')]);
  const empty = path.join(dir, 'empty');
  fs.mkdirSync(empty);
  t.is(
    t.throws(() => releaseCommand(empty))?.message,
    `${empty} holds neither bin/svc.js (a built checkout) nor an executable svc (the release artifact): it cannot be started`,
  );
});

test('ReleaseFolders.current is undefined while current points at a folder that is no release of the lane (svc install puts releases/<version> there)', (t) => {
  const dir = tempDir(t);
  const folders = new ReleaseFolders(dir);
  fs.mkdirSync(path.join(folders.releasesDir, '0.1.0'), { recursive: true });
  fs.writeFileSync(path.join(folders.releasesDir, '0.1.0', 'svc-release.json'), '{}');
  fs.symlinkSync('releases/0.1.0', folders.currentLink);
  t.is(folders.current(), undefined);
  fs.writeFileSync(path.join(folders.releasesDir, '0.1.0', 'release.json'), JSON.stringify({ id: '0.1.0' }));
  t.deepEqual(folders.current(), { id: '0.1.0', dir: path.join(folders.releasesDir, '0.1.0') });
});
