// tier: quick
import test from 'ava';
import { bucketUses, decideBucketAccess, type S3RequestShape } from '../../../domain/object-storage/bucket-access.js';
import type { CanonicalBucket } from '../../../domain/spec/index.js';

const req = (
  method: string,
  path: string,
  query: Record<string, string> = {},
  copySource?: string,
): S3RequestShape => ({
  method,
  path,
  query,
  ...(copySource === undefined ? {} : { copySource }),
});

test('bucketUses names what each S3 operation needs', (t) => {
  const need = (r: S3RequestShape) =>
    bucketUses(r)
      ?.map((u) => `${u.bucket}:${u.need}`)
      .join(' ');
  const table: [S3RequestShape, string | undefined][] = [
    [req('GET', '/'), undefined],
    [req('GET', '/b', { 'list-type': '2' }), 'b:read'],
    [req('HEAD', '/b'), 'b:read'],
    [req('GET', '/b', { policy: '' }), 'b:read'],
    [req('GET', '/b/k'), 'b:read'],
    [req('HEAD', '/b/k'), 'b:read'],
    [req('PUT', '/b/k'), 'b:write'],
    [req('DELETE', '/b/k'), 'b:write'],
    [req('POST', '/b/k', { uploads: '' }), 'b:write'],
    [req('PUT', '/b/k', { partNumber: '1', uploadId: 'u' }), 'b:write'],
    [req('POST', '/b', { delete: '' }), 'b:write'],
    [req('PUT', '/b/k', { acl: '' }), 'b:manage'],
    [req('PUT', '/b'), 'b:manage'],
    [req('DELETE', '/b'), 'b:manage'],
    [req('PUT', '/b', { policy: '' }), 'b:manage'],
    [req('DELETE', '/b', { cors: '' }), 'b:manage'],
    [req('PUT', '/b/k', {}, '/src/path%20x'), 'b:write src:read'],
  ];
  for (const [r, expected] of table) t.is(need(r), expected, `${r.method} ${r.path} ${JSON.stringify(r.query)}`);
});

test('decideBucketAccess grants by declared access and prefix, and refuses dot segments', (t) => {
  const buckets: CanonicalBucket[] = [
    { name: 'ro', access: 'readOnly', public: false, env: 'RO' },
    { name: 'rw', access: 'readWrite', public: false, env: 'RW', prefix: 'app/' },
    { name: 'own', access: 'owner', public: false, env: 'OWN' },
  ];
  const allowed = (r: S3RequestShape) => decideBucketAccess(buckets, r).allowed;
  t.true(allowed(req('GET', '/ro/x')));
  t.false(allowed(req('PUT', '/ro/x')));
  t.true(allowed(req('PUT', '/rw/app/x')));
  t.false(allowed(req('PUT', '/rw/other/x')));
  t.true(allowed(req('GET', '/rw', { prefix: 'app/sub' })));
  t.false(allowed(req('GET', '/rw', { 'list-type': '2' })));
  t.false(allowed(req('DELETE', '/rw')));
  t.true(allowed(req('DELETE', '/own')));
  t.false(allowed(req('GET', '/elsewhere/x')));
  t.false(allowed(req('PUT', '/own/x', {}, 'elsewhere/y')));
  t.true(allowed(req('PUT', '/own/x', {}, 'ro/y')));
  t.false(allowed(req('GET', '/own/../elsewhere/x')));
  t.false(allowed(req('PUT', '/own/x', {}, 'own/%2E%2E/elsewhere/y')));
  t.like(decideBucketAccess(buckets, req('PUT', '/ro/x')), {
    allowed: false,
    message: 'bucket ro is declared readOnly, which does not allow writing',
  });
});
