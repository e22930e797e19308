// tier: quick
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { exportCommit, GitError, mirrorRepository, resolveCommit, runGit } from '../../../platform/git/index.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { commitFiles, createRepo, git } from '../release-builder/git-fixture.js';

test('mirrorRepository clones once and fetches new commits afterwards', async (t) => {
  const root = tempDir(t, 'svc-git-');
  const repo = path.join(root, 'repo');
  const first = createRepo(repo, { 'a.txt': 'one' });
  const mirror = path.join(root, 'mirror.git');
  await mirrorRepository(`file://${repo}`, mirror);
  t.is(await resolveCommit(mirror, 'main'), first);
  const second = commitFiles(repo, { 'a.txt': 'two' }, 'two');
  git(repo, 'tag', 'v2');
  await mirrorRepository(`file://${repo}`, mirror);
  t.is(await resolveCommit(mirror, 'main'), second);
  t.is(await resolveCommit(mirror, 'v2'), second);
  t.is(await resolveCommit(mirror, first.slice(0, 8)), first);
});

test('exportCommit writes the tree of a commit without git metadata', async (t) => {
  const root = tempDir(t, 'svc-git-');
  const repo = path.join(root, 'repo');
  const first = createRepo(repo, { 'a.txt': 'one', 'dir/b.txt': 'bee' });
  commitFiles(repo, { 'a.txt': 'two' }, 'two');
  const out = path.join(root, 'out');
  await exportCommit(path.join(repo, '.git'), first, out);
  t.is(fs.readFileSync(path.join(out, 'a.txt'), 'utf8'), 'one');
  t.is(fs.readFileSync(path.join(out, 'dir', 'b.txt'), 'utf8'), 'bee');
  t.false(fs.existsSync(path.join(out, '.git')));
});

test('runGit rejects with a GitError naming the command and its stderr', async (t) => {
  const root = tempDir(t, 'svc-git-');
  const error = await t.throwsAsync(runGit(['--git-dir', path.join(root, 'nope'), 'rev-parse', 'HEAD']), {
    instanceOf: GitError,
  });
  t.regex(error.message, /^git --git-dir .* rev-parse HEAD failed: /);
});

test('mirrorRepository refuses a URL that git would read as an option', async (t) => {
  await t.throwsAsync(mirrorRepository('--upload-pack=evil', '/tmp/never'), { message: /is not a repository URL/ });
});
