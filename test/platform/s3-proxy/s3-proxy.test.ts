// tier: full
/**
 * The S3 proxy (ADR 0188) between apps using the AWS SDK and s3rver on loopback: each app signs with
 * its own proxy key, and only what its declared buckets and their access allow reaches the server.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { Registry } from 'prom-client';
import {
  CopyObjectCommand,
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  ListBucketsCommand,
  ListObjectsV2Command,
  PutBucketPolicyCommand,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import type { CanonicalBucket } from '../../../domain/spec/index.js';
import { startS3Proxy } from '../../../platform/s3-proxy/s3-proxy.js';
import { S3ProxyKeys, accessKeyIdOf } from '../../../platform/s3-proxy/s3-proxy-keys.js';
import { parseAmzDate, parseAuthorization, verifySigV4 } from '../../../platform/s3-proxy/sigv4.js';
import { silentLogger } from '../../../platform/logger.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { startS3Server } from '../../helpers/s3-server.js';

const bucket = (name: string, access: CanonicalBucket['access'], prefix?: string): CanonicalBucket => ({
  name,
  access,
  public: false,
  env: name.toUpperCase().replace(/[^A-Z0-9]/g, '_'),
  ...(prefix === undefined ? {} : { prefix }),
});

const DECLARED: Record<string, CanonicalBucket[]> = {
  reader: [bucket('shared', 'readOnly')],
  writer: [bucket('shared', 'readWrite'), bucket('scoped', 'readWrite', 'writer/')],
  owner: [bucket('shared', 'owner'), bucket('fresh-bucket', 'owner')],
  other: [bucket('private-b', 'owner')],
};

async function start(t: ExecutionContext, upstreamSecret = 'S3RVER') {
  const root = tempDir(t);
  const address = await startS3Server(t, ['shared', 'scoped', 'private-b'], path.join(root, 's3'));
  const keys = new S3ProxyKeys(path.join(root, 's3-credentials'));
  const registry = new Registry();
  const proxy = await startS3Proxy({
    port: 0,
    keys,
    bucketsOf: (app) => DECLARED[app],
    upstream: {
      endpoint: `http://127.0.0.1:${address.port}`,
      accessKeyId: 'S3RVER',
      secretAccessKey: upstreamSecret,
      region: 'us-east-1',
    },
    registry,
    logger: silentLogger(),
  });
  t.teardown(() => proxy.close());
  const clients: S3Client[] = [];
  t.teardown(() => clients.forEach((c) => c.destroy()));
  const clientOf = (app: string, secret?: string) => {
    const key = keys.ensure(app);
    const client = new S3Client({
      endpoint: proxy.url,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: key.accessKeyId, secretAccessKey: secret ?? key.secretAccessKey },
      // The SDK's defaults otherwise (checksums included), as an app would use it.
      maxAttempts: 1,
    });
    clients.push(client);
    return client;
  };
  return { root, keys, registry, proxy, clientOf, s3Dir: path.join(root, 's3') };
}

async function refusal(promise: Promise<unknown>): Promise<{ name: string; status: number | undefined }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof S3ServiceException) return { name: error.name, status: error.$metadata.httpStatusCode };
    throw error;
  }
  throw new Error('the request was not refused');
}

test('the proxy enforces each app its declared buckets and access, and counts refusals', async (t) => {
  const { clientOf, registry, keys, proxy } = await start(t);
  const reader = clientOf('reader');
  const writer = clientOf('writer');
  const owner = clientOf('owner');
  const other = clientOf('other');

  // The key file is the app's AWS shared-credentials file, owner-only.
  const file = keys.fileOf('writer');
  t.is(fs.statSync(file).mode & 0o777, 0o600);
  t.regex(fs.readFileSync(file, 'utf8'), new RegExp(`aws_access_key_id = ${accessKeyIdOf('writer')}`));

  // readWrite writes; readOnly reads what was written and cannot write.
  await writer.send(new PutObjectCommand({ Bucket: 'shared', Key: 'docs/a.txt', Body: 'hello' }));
  const got = await reader.send(new GetObjectCommand({ Bucket: 'shared', Key: 'docs/a.txt' }));
  t.is(await got.Body?.transformToString(), 'hello');
  // A larger upload (the SDK may ask for 100-continue) passes through whole.
  const big = Buffer.alloc(3 * 1024 * 1024, 7);
  await writer.send(new PutObjectCommand({ Bucket: 'shared', Key: 'docs/big.bin', Body: big }));
  const bigBack = await reader.send(new GetObjectCommand({ Bucket: 'shared', Key: 'docs/big.bin' }));
  t.true(Buffer.from(await bigBack.Body!.transformToByteArray()).equals(big));
  await writer.send(new DeleteObjectCommand({ Bucket: 'shared', Key: 'docs/big.bin' }));
  const listed = await reader.send(new ListObjectsV2Command({ Bucket: 'shared' }));
  t.deepEqual(
    listed.Contents?.map((o) => o.Key),
    ['docs/a.txt'],
  );
  t.deepEqual(await refusal(reader.send(new PutObjectCommand({ Bucket: 'shared', Key: 'x', Body: 'no' }))), {
    name: 'AccessDenied',
    status: 403,
  });
  t.deepEqual(await refusal(reader.send(new DeleteObjectCommand({ Bucket: 'shared', Key: 'docs/a.txt' }))), {
    name: 'AccessDenied',
    status: 403,
  });

  // readWrite may not manage the bucket; owner may.
  t.deepEqual(await refusal(writer.send(new DeleteBucketCommand({ Bucket: 'shared' }))), {
    name: 'AccessDenied',
    status: 403,
  });
  t.deepEqual(
    await refusal(writer.send(new PutBucketPolicyCommand({ Bucket: 'shared', Policy: '{"Statement":[]}' }))),
    { name: 'AccessDenied', status: 403 },
  );
  await owner.send(new CreateBucketCommand({ Bucket: 'fresh-bucket' }));
  await owner.send(new PutObjectCommand({ Bucket: 'fresh-bucket', Key: 'k', Body: 'v' }));
  await owner.send(new DeleteObjectCommand({ Bucket: 'fresh-bucket', Key: 'k' }));
  await owner.send(new DeleteBucketCommand({ Bucket: 'fresh-bucket' }));
  t.deepEqual(await refusal(owner.send(new ListObjectsV2Command({ Bucket: 'fresh-bucket' }))), {
    name: 'NoSuchBucket',
    status: 404,
  });

  // Another app's bucket is out of reach, directly or as a copy source; so is the bucket list.
  await other.send(new PutObjectCommand({ Bucket: 'private-b', Key: 'secret.txt', Body: 'mine' }));
  t.deepEqual(await refusal(writer.send(new GetObjectCommand({ Bucket: 'private-b', Key: 'secret.txt' }))), {
    name: 'AccessDenied',
    status: 403,
  });
  t.deepEqual(
    await refusal(
      writer.send(new CopyObjectCommand({ Bucket: 'shared', Key: 'stolen.txt', CopySource: 'private-b/secret.txt' })),
    ),
    { name: 'AccessDenied', status: 403 },
  );
  t.deepEqual(await refusal(other.send(new GetObjectCommand({ Bucket: 'shared', Key: 'docs/a.txt' }))), {
    name: 'AccessDenied',
    status: 403,
  });
  t.deepEqual(await refusal(owner.send(new ListBucketsCommand({}))), { name: 'AccessDenied', status: 403 });
  // A copy within the app's own buckets goes through.
  await writer.send(new CopyObjectCommand({ Bucket: 'shared', Key: 'docs/b.txt', CopySource: 'shared/docs/a.txt' }));

  // A declared prefix confines keys and listings.
  await writer.send(new PutObjectCommand({ Bucket: 'scoped', Key: 'writer/ok.txt', Body: '1' }));
  t.deepEqual(await refusal(writer.send(new PutObjectCommand({ Bucket: 'scoped', Key: 'elsewhere.txt', Body: '1' }))), {
    name: 'AccessDenied',
    status: 403,
  });
  t.deepEqual(await refusal(writer.send(new ListObjectsV2Command({ Bucket: 'scoped' }))), {
    name: 'AccessDenied',
    status: 403,
  });
  const underPrefix = await writer.send(new ListObjectsV2Command({ Bucket: 'scoped', Prefix: 'writer/' }));
  t.deepEqual(
    underPrefix.Contents?.map((o) => o.Key),
    ['writer/ok.txt'],
  );

  // A wrong secret and an unknown key id are refused before any access check.
  const forged = clientOf('reader', 'not-the-secret');
  t.deepEqual(await refusal(forged.send(new GetObjectCommand({ Bucket: 'shared', Key: 'docs/a.txt' }))), {
    name: 'SignatureDoesNotMatch',
    status: 403,
  });
  const stranger = new S3Client({
    endpoint: proxy.url,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'AKIASTRANGER', secretAccessKey: 'x' },
    maxAttempts: 1,
  });
  t.teardown(() => stranger.destroy());
  t.deepEqual(await refusal(stranger.send(new GetObjectCommand({ Bucket: 'shared', Key: 'docs/a.txt' }))), {
    name: 'InvalidAccessKeyId',
    status: 403,
  });

  const metric = await registry.getSingleMetricAsString('svc_s3_proxy_refusals_total');
  t.regex(metric, /svc_s3_proxy_refusals_total\{app="reader",reason="access"\} 2/);
  t.regex(metric, /svc_s3_proxy_refusals_total\{app="writer",reason="access"\} 6/);
  t.regex(metric, /svc_s3_proxy_refusals_total\{app="owner",reason="access"\} 1/);
  t.regex(metric, /svc_s3_proxy_refusals_total\{app="other",reason="access"\} 1/);
  t.regex(metric, /svc_s3_proxy_refusals_total\{app="reader",reason="signature"\} 1/);
});

test('a refusal is an S3 XML error, and an unsigned request never reaches the server', async (t) => {
  const { proxy, registry } = await start(t);
  const answer = await fetch(`${proxy.url}/shared/docs/a.txt`, { method: 'PUT', body: 'x' });
  t.is(answer.status, 403);
  t.is(answer.headers.get('content-type'), 'application/xml');
  const body = await answer.text();
  t.regex(body, /<Error><Code>AccessDenied<\/Code><Message>requests need an AWS Signature Version 4/);
  t.regex(body, /<Resource>\/shared\/docs\/a\.txt<\/Resource>/);
  const presigned = await fetch(`${proxy.url}/shared/a?X-Amz-Signature=00&X-Amz-Credential=x`);
  t.regex(await presigned.text(), /presigned URLs are not accepted/);
  t.regex(
    await registry.getSingleMetricAsString('svc_s3_proxy_refusals_total'),
    /svc_s3_proxy_refusals_total\{app="unknown",reason="unsigned"\} 2/,
  );
});

test('the proxy signs onward with the platform key, which a stand-in S3 server verifies', async (t) => {
  // s3rver checks only the access key id of a SigV4 request; this stand-in checks the signature too.
  const seen: http.IncomingMessage[] = [];
  const upstream = http.createServer((req, res) => {
    seen.push(req);
    req.resume();
    req.once('end', () => res.writeHead(200, { etag: '"x"' }).end());
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  t.teardown(() => upstream.close());
  const root = tempDir(t);
  const keys = new S3ProxyKeys(path.join(root, 'keys'));
  const proxy = await startS3Proxy({
    port: 0,
    keys,
    bucketsOf: (app) => DECLARED[app],
    upstream: {
      endpoint: `http://127.0.0.1:${(upstream.address() as { port: number }).port}`,
      accessKeyId: 'PLATFORM',
      secretAccessKey: 'platform-secret',
      region: 'eu-west-1',
    },
    registry: new Registry(),
    logger: silentLogger(),
  });
  t.teardown(() => proxy.close());
  const key = keys.ensure('writer');
  const writer = new S3Client({
    endpoint: proxy.url,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: key.accessKeyId, secretAccessKey: key.secretAccessKey },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    maxAttempts: 1,
  });
  t.teardown(() => writer.destroy());
  await writer.send(new PutObjectCommand({ Bucket: 'shared', Key: 'dir/a b.txt', Body: 'payload' }));
  const req = seen[0]!;
  const auth = parseAuthorization(String(req.headers.authorization))!;
  t.is(auth.accessKeyId, 'PLATFORM');
  t.is(auth.region, 'eu-west-1');
  const [rawPath, rawQuery = ''] = (req.url ?? '').split('?');
  const signable = {
    method: req.method!,
    host: String(req.headers.host),
    path: rawPath!,
    query: Object.fromEntries(new URLSearchParams(rawQuery)),
    headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)])),
  };
  const date = parseAmzDate(String(req.headers['x-amz-date']))!;
  t.true(await verifySigV4(signable, auth, 'platform-secret', date));
  t.false(await verifySigV4(signable, auth, key.secretAccessKey, date));
  t.is(rawPath, '/shared/dir/a%20b.txt');
});
