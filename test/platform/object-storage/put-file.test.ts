// tier: full
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { S3Client } from '@aws-sdk/client-s3';
import { putFile, uploadRetryable } from '../../../platform/object-storage/put-file.js';
import { S3PlatformBackups } from '../../../platform/object-storage/s3-platform-backups.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { startS3Server } from '../../helpers/s3-server.js';

/**
 * S3rver on loopback behind a TCP proxy that cuts the connection of the first `cuts` PUT requests
 * after their head, as a store closing a reused keep-alive socket does; counts the PUTs it saw.
 */
async function flakyStore(t: ExecutionContext, cuts: number, sizeBytes = 2 * 1024 * 1024) {
  const root = tempDir(t);
  const { port } = await startS3Server(t, ['backups'], path.join(root, 's3'));
  const seen = { puts: 0, cut: 0 };
  const proxy = net.createServer((client) => {
    const upstream = net.connect(port, '127.0.0.1');
    client.on('data', (chunk: Buffer) => {
      if (chunk.toString('latin1', 0, 4) === 'PUT ') {
        seen.puts++;
        if (seen.cut < cuts) {
          seen.cut++;
          client.destroy();
          upstream.destroy();
          return;
        }
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    client.on('error', () => undefined);
    upstream.on('error', () => undefined);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => proxy.close(() => resolve())));
  const endpoint = `http://127.0.0.1:${(proxy.address() as net.AddressInfo).port}`;
  const file = path.join(root, 'svc-backup-20260101T000000Z-abcdef.tar');
  const bytes = crypto.randomBytes(sizeBytes);
  fs.writeFileSync(file, bytes);
  return { endpoint, seen, file, bytes, root };
}

test('an upload whose connection is cut is sent again from the file start and arrives whole', async (t) => {
  const store = await flakyStore(t, 2);
  const remote = new S3PlatformBackups({ endpoint: store.endpoint, accessKey: 'S3RVER', secretKey: 'S3RVER' });
  t.teardown(() => remote.destroy());
  const key = await remote.upload('backups', store.file);
  t.is(store.seen.puts, 3, 'two cut attempts, then one that arrived');
  const downloaded = path.join(store.root, 'downloaded.tar');
  await remote.download('backups', key, downloaded);
  t.true(fs.readFileSync(downloaded).equals(store.bytes), 'the stored object is the whole file');
});

test('an upload stops after three cut attempts with object_storage_failed, and a 4xx is not tried again', async (t) => {
  const store = await flakyStore(t, 5);
  const remote = new S3PlatformBackups({ endpoint: store.endpoint, accessKey: 'S3RVER', secretKey: 'S3RVER' });
  t.teardown(() => remote.destroy());
  const error = await t.throwsAsync(() => remote.upload('backups', store.file));
  t.is((error as { code?: string }).code, 'object_storage_failed');
  t.is(store.seen.puts, 3);
  // A small body, so the store's early 404 is read as such (a large one meets a closed socket first).
  const missing = await flakyStore(t, 0, 1024);
  const missingClient = new S3Client({
    endpoint: missing.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  });
  t.teardown(() => missingClient.destroy());
  const noBucket = await t.throwsAsync(() => putFile(missingClient, 'no-such-bucket', 'k', missing.file));
  t.is((noBucket as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode, 404);
  t.is(missing.seen.puts, 1, 'a missing bucket is answered once');
  await t.throwsAsync(() => putFile(missingClient, 'backups', 'k', path.join(missing.root, 'gone.tar')), {
    message: /ENOENT/,
  });
  t.is(missing.seen.puts, 1, 'a missing file sends nothing');
});

test('uploadRetryable: connection errors, timeouts, 429 and 5xx are tried again; 4xx and local errors are not', (t) => {
  t.true(uploadRetryable(Object.assign(new Error('socket hang up'), { name: 'TimeoutError' })));
  t.true(uploadRetryable(Object.assign(new Error('reset'), { code: 'ECONNRESET' })));
  t.true(uploadRetryable({ name: 'InternalError', $metadata: { httpStatusCode: 503 } }));
  t.true(uploadRetryable({ name: 'SlowDown', $metadata: { httpStatusCode: 429 } }));
  t.false(uploadRetryable({ name: 'NoSuchBucket', $metadata: { httpStatusCode: 404 } }));
  t.false(uploadRetryable({ name: 'AccessDenied', $metadata: { httpStatusCode: 403 } }));
  t.false(uploadRetryable(Object.assign(new Error('no file'), { code: 'ENOENT' })));
  t.false(uploadRetryable('a string'));
});
