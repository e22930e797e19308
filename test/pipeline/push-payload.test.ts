// tier: quick
import test from 'ava';
import {
  normalizeRepository,
  pushFacts,
  repositoryMatches,
  verifySignature,
} from '../../controllers/webhooks/index.js';
import { createHmac } from 'node:crypto';

test('repository identities compare without scheme, user, .git suffix and case', (t) => {
  t.is(normalizeRepository('https://github.com/Codertocat/Hello-World.git'), 'github.com/codertocat/hello-world');
  t.is(normalizeRepository('git@github.com:Codertocat/Hello-World.git'), 'github.com/codertocat/hello-world');
  t.is(normalizeRepository('ssh://git@github.com/Codertocat/Hello-World'), 'github.com/codertocat/hello-world');
  t.true(
    repositoryMatches('git@github.com:codertocat/hello-world.git', ['https://github.com/Codertocat/Hello-World.git']),
  );
  t.true(repositoryMatches('/srv/git/Codertocat/Hello-World', ['Codertocat/Hello-World']));
  t.false(repositoryMatches('/srv/git/Codertocat/Hello-World-2', ['Codertocat/Hello-World']));
  t.false(
    repositoryMatches('https://gitlab.com/codertocat/hello-world', ['https://github.com/Codertocat/Hello-World.git']),
  );
});

test('push facts read the branch, the head commit and deletions of the GitHub and generic forms', (t) => {
  const sha = 'a'.repeat(40);
  t.like(
    pushFacts({ ref: 'refs/heads/main', after: sha, repository: { full_name: 'o/r', clone_url: 'https://x/o/r.git' } }),
    { branch: 'main', commit: sha, deleted: false, repository: 'o/r' },
  );
  t.like(pushFacts({ ref: 'refs/heads/main', after: '0'.repeat(40), repository: 'o/r' }), {
    commit: null,
    deleted: true,
  });
  t.like(pushFacts({ ref: 'refs/tags/v1', after: sha, repository: 'o/r' }), { branch: null });
  t.like(pushFacts(null), { branch: null, commit: null, repositories: [] });
});

test('signatures verify in constant time against the raw body only', (t) => {
  const body = '{"a":1}';
  const good = `sha256=${createHmac('sha256', 's3cret').update(body).digest('hex')}`;
  t.true(verifySignature('s3cret', body, good));
  t.false(verifySignature('s3cret', '{"a": 1}', good));
  t.false(verifySignature('other', body, good));
  t.false(verifySignature('s3cret', body, undefined));
  t.false(verifySignature('s3cret', body, 'sha1=abc'));
  t.false(verifySignature('s3cret', body, 'sha256=zz'));
});
