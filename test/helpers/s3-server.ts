/**
 * S3rver, the S3-compatible stand-in, on loopback for one test: a fresh folder under the test's
 * temporary folder (or `directory`), the named buckets, closed when the test ends. Its credentials are
 * S3rver's fixed `S3RVER` / `S3RVER`.
 */
import path from 'node:path';
import type { ExecutionContext } from 'ava';
import S3rver from 's3rver';
import { tempDir } from './temp-dir.js';

/** Starts S3rver with `buckets`; resolves with its port and endpoint URL. */
export async function startS3Server(
  t: ExecutionContext,
  buckets: readonly string[],
  directory: string = path.join(tempDir(t), 's3'),
): Promise<{ port: number; endpoint: string }> {
  const server = new S3rver({
    port: 0,
    address: '127.0.0.1',
    directory,
    silent: true,
    configureBuckets: buckets.map((name) => ({ name, configs: [] })),
  });
  const { port } = (await server.run()) as { port: number };
  t.teardown(() => server.close());
  return { port, endpoint: `http://127.0.0.1:${port}` };
}
