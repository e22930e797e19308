// tier: full
/**
 * The platform label's distance, measured with real git against real tags (ADR 0196):
 * `v<maj>.<min>.<patch>-platform[-<distance>-g<sha>]`.
 */
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { platformLabel } from '../../../domain/platform/index.js';
import { releasePosition } from '../../../platform/git/index.js';
import { git } from '../../pipeline/pipeline-fixture.js';
import { tempDir } from '../../helpers/temp-dir.js';

function commit(repo: string, message: string): string {
  fs.writeFileSync(path.join(repo, 'log.txt'), `${message}\n`, { flag: 'a' });
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', message);
  return git(repo, 'rev-parse', 'HEAD');
}

test('the label counts the commits since the last release tag, as git describe does', (t) => {
  const repo = tempDir(t);
  git(repo, 'init', '-q', '-b', 'main');
  const first = commit(repo, 'first');
  const second = commit(repo, 'second');
  // No release tag yet: the package version, counted from the root commit.
  t.deepEqual(releasePosition(repo, '0.9.0', second), { version: '0.9.0', distance: 2, tagged: false });
  t.is(
    platformLabel('0.9.0', second, releasePosition(repo, '0.9.0', second)),
    `v0.9.0-platform-2-g${second.slice(0, 7)}`,
  );

  git(repo, 'tag', '-a', 'v1.4.0', '-m', 'release 1.4.0', first);
  const third = commit(repo, 'third');
  // An identity tag and a pre-release tag are not release tags.
  git(repo, 'tag', `platform-${third}`, third);
  git(repo, 'tag', 'v1.5.0-rc.1', third);
  const fourth = commit(repo, 'fourth');
  t.deepEqual(releasePosition(repo, '9.9.9', fourth), { version: '1.4.0', distance: 3, tagged: true });
  t.is(
    platformLabel('9.9.9', fourth, releasePosition(repo, '9.9.9', fourth)),
    `v1.4.0-platform-3-g${fourth.slice(0, 7)}`,
  );
  // On the tag itself: no suffix.
  t.is(platformLabel('9.9.9', first, releasePosition(repo, '9.9.9', first)), 'v1.4.0-platform');

  // A lightweight release tag counts too, and the nearest one wins.
  git(repo, 'tag', 'v1.5.0', third);
  t.deepEqual(releasePosition(repo, '9.9.9', fourth), { version: '1.5.0', distance: 1, tagged: true });
  t.deepEqual(releasePosition(repo, '9.9.9', 'HEAD'), { version: '1.5.0', distance: 1, tagged: true });
});

test('a folder that is not a git repository, or a commit it lacks, has no release position', (t) => {
  const dir = tempDir(t);
  t.is(releasePosition(dir, '1.0.0'), undefined);
  git(dir, 'init', '-q', '-b', 'main');
  commit(dir, 'only');
  t.is(releasePosition(dir, '1.0.0', 'f'.repeat(40)), undefined);
  t.is(platformLabel('1.0.0', null), 'v1.0.0-platform');
});
