/**
 * Uploads a file with a fresh read stream for each attempt (ADR 0216). The AWS SDK does not retry a
 * request whose body is a stream ("non-retryable streaming request"): one connection the store closed
 * while the client reused it (an idle keep-alive socket) failed the whole export. Here a dropped
 * connection, a timeout, a 429 or a 5xx is tried again from the file's start, up to three attempts
 * with a short backoff; a 4xx (a missing bucket, refused credentials) and a local error (the file
 * gone) fail at once.
 */
import fs from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';

const ATTEMPTS = 3;
const BACKOFF_MS = 200;
/** Errors of a connection that went away or never came, as Node and the SDK's handler name them. */
const NETWORK_CODES = new Set(['ECONNRESET', 'EPIPE', 'ECONNREFUSED', 'ETIMEDOUT', 'ECONNABORTED', 'EAI_AGAIN']);

/** Whether an upload that failed with `error` is worth another attempt. */
export function uploadRetryable(error: unknown): boolean {
  const e = (typeof error === 'object' && error !== null ? error : {}) as {
    name?: string;
    code?: string;
    $metadata?: { httpStatusCode?: number };
  };
  const status = e.$metadata?.httpStatusCode;
  if (typeof status === 'number') return status >= 500 || status === 429 || status === 408;
  return e.name === 'TimeoutError' || (e.code !== undefined && NETWORK_CODES.has(e.code));
}

/** Puts `file` at `bucket/key`; each attempt streams the file from its start. */
export async function putFile(
  client: S3Client,
  bucket: string,
  key: string,
  file: string,
  options: { attempts?: number; backoffMs?: number } = {},
): Promise<{ sizeBytes: number; attempts: number }> {
  const attempts = options.attempts ?? ATTEMPTS;
  const backoffMs = options.backoffMs ?? BACKOFF_MS;
  const size = fs.statSync(file).size;
  for (let attempt = 1; ; attempt++) {
    try {
      await client.send(
        new PutObjectCommand({ Bucket: bucket, Key: key, Body: fs.createReadStream(file), ContentLength: size }),
      );
      return { sizeBytes: size, attempts: attempt };
    } catch (error) {
      if (attempt >= attempts || !uploadRetryable(error)) throw error;
      await delay(backoffMs * 2 ** (attempt - 1));
    }
  }
}
