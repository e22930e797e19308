/**
 * Off-site copies of platform backup archives in the S3-compatible store of snapshots, under
 * `platform-backups/<archive name>` (ADR 0173): upload, list, download (to a `.partial` name, renamed
 * when complete) and delete for retention.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DeleteObjectCommand, GetObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { UnavailableError, ValidationError } from '../../domain/errors.js';
import { putFile } from './put-file.js';
import { createS3Client, type S3Settings } from './s3-client.js';

/** Prefix of platform backups in the bucket. */
export const PLATFORM_BACKUP_PREFIX = 'platform-backups/';
const ARCHIVE_NAME = /^svc-backup-[0-9TZ]+-[0-9a-f]{6}\.(age|tar)$/;

/** One remote archive. */
export interface RemoteBackup {
  readonly key: string;
  readonly sizeBytes: number;
  readonly lastModified: string | null;
}

/** Platform backup archives in one S3-compatible store. */
export class S3PlatformBackups {
  readonly #client: S3Client;

  constructor(settings: S3Settings) {
    this.#client = createS3Client(settings);
  }

  async #call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      const name = (error as { name?: string }).name ?? 'Error';
      throw new UnavailableError(`object storage ${what} failed: ${name}: ${(error as Error).message}`, {
        code: 'object_storage_failed',
        cause: error,
      });
    }
  }

  /** Uploads the archive at `file`; returns its key. */
  async upload(bucket: string, file: string): Promise<string> {
    const key = `${PLATFORM_BACKUP_PREFIX}${path.basename(file)}`;
    await this.#call('upload', () => putFile(this.#client, bucket, key, file));
    return key;
  }

  /** The archives in the bucket, newest first (names sort by time). */
  async list(bucket: string): Promise<RemoteBackup[]> {
    const out: RemoteBackup[] = [];
    let token: string | undefined;
    do {
      const page = await this.#call('listing', () =>
        this.#client.send(
          new ListObjectsV2Command({ Bucket: bucket, Prefix: PLATFORM_BACKUP_PREFIX, ContinuationToken: token }),
        ),
      );
      for (const object of page.Contents ?? []) {
        if (!ARCHIVE_NAME.test(object.Key?.slice(PLATFORM_BACKUP_PREFIX.length) ?? '')) continue;
        out.push({
          key: object.Key!,
          sizeBytes: object.Size ?? 0,
          lastModified: object.LastModified?.toISOString() ?? null,
        });
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return out.sort((a, b) => b.key.localeCompare(a.key));
  }

  /** Downloads `key` to `file` (complete under that name only). */
  async download(bucket: string, key: string, file: string): Promise<void> {
    if (!key.startsWith(PLATFORM_BACKUP_PREFIX) || !ARCHIVE_NAME.test(key.slice(PLATFORM_BACKUP_PREFIX.length)))
      throw new ValidationError(`"${key}" is not a platform backup key (${PLATFORM_BACKUP_PREFIX}svc-backup-...)`, {
        code: 'invalid_backup_key',
      });
    const object = await this.#call('download', () =>
      this.#client.send(new GetObjectCommand({ Bucket: bucket, Key: key })),
    );
    const temp = `${file}.partial`;
    try {
      await pipeline(object.Body as Readable, fs.createWriteStream(temp, { mode: 0o600 }));
    } catch (error) {
      fs.rmSync(temp, { force: true });
      throw new UnavailableError(`object storage download of ${key} failed: ${(error as Error).message}`, {
        code: 'object_storage_failed',
        cause: error,
      });
    }
    fs.renameSync(temp, file);
  }

  /** Deletes `key`. */
  async delete(bucket: string, key: string): Promise<void> {
    await this.#call('delete', () => this.#client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key })));
  }

  /** Releases the client's sockets. */
  destroy(): void {
    this.#client.destroy();
  }
}
