/**
 * Snapshot export and import through an S3-compatible object store (`@aws-sdk/client-s3`).
 * Remote objects live under `snapshots/<app>/<filename>`; imports are validated, private, atomic
 * and never overwrite a local dump.
 */
import fs from 'node:fs';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import { GetObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { putFile } from './put-file.js';
import { createS3Client, type S3Settings } from './s3-client.js';
import { UnavailableError, ValidationError } from '../../domain/errors.js';
import { parseSnapshotName, requireSnapshotName } from '../../domain/snapshots/index.js';
import type { SnapshotEntry, SnapshotFolder } from '../snapshots/snapshot-folder.js';

/** One remote snapshot object. */
export interface RemoteSnapshot {
  readonly key: string;
  readonly filename: string;
  readonly sizeBytes: number;
  readonly lastModified: string | null;
}

/** The key prefix of an app's remote snapshots. */
export function remotePrefix(app: string): string {
  return `snapshots/${app}/`;
}

/** Snapshot transfer for one object store. */
export class S3Snapshots {
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

  /** Uploads a local dump to `snapshots/<app>/<filename>`. */
  async upload(bucket: string, app: string, folder: SnapshotFolder, filename: string): Promise<RemoteSnapshot> {
    const file = folder.pathOf(filename);
    const key = `${remotePrefix(app)}${filename}`;
    const { sizeBytes } = await this.#call('upload', () => putFile(this.#client, bucket, key, file));
    return { key, filename, sizeBytes, lastModified: new Date().toISOString() };
  }

  /** Lists an app's remote snapshots with valid names, newest first. */
  async list(bucket: string, app: string): Promise<RemoteSnapshot[]> {
    const out: RemoteSnapshot[] = [];
    let token: string | undefined;
    do {
      const page = await this.#call('listing', () =>
        this.#client.send(
          new ListObjectsV2Command({ Bucket: bucket, Prefix: remotePrefix(app), ContinuationToken: token }),
        ),
      );
      for (const object of page.Contents ?? []) {
        const filename = object.Key?.slice(remotePrefix(app).length) ?? '';
        if (!parseSnapshotName(filename)) continue;
        out.push({
          key: object.Key!,
          filename,
          sizeBytes: object.Size ?? 0,
          lastModified: object.LastModified?.toISOString() ?? null,
        });
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return out.sort((a, b) => b.filename.localeCompare(a.filename));
  }

  /** Downloads `key` (which must lie in `snapshots/<app>/` and carry a valid name) into the local folder. */
  async download(bucket: string, app: string, key: string, folder: SnapshotFolder): Promise<SnapshotEntry> {
    if (!key.startsWith(remotePrefix(app))) {
      throw new ValidationError(`key "${key}" is outside ${remotePrefix(app)}`, {
        code: 'invalid_snapshot_key',
        details: { key },
      });
    }
    const filename = key.slice(remotePrefix(app).length);
    requireSnapshotName(filename);
    if (folder.list().some((e) => e.filename === filename)) {
      throw new ValidationError(`a local snapshot ${filename} already exists; imports never overwrite`, {
        code: 'snapshot_exists',
        details: { filename },
      });
    }
    const object = await this.#call('download', () =>
      this.#client.send(new GetObjectCommand({ Bucket: bucket, Key: key })),
    );
    const temp = folder.incomingPath();
    try {
      await pipeline(object.Body as Readable, fs.createWriteStream(temp, { mode: 0o600 }));
    } catch (error) {
      fs.rmSync(temp, { force: true });
      throw new UnavailableError(`object storage download of ${key} failed: ${(error as Error).message}`, {
        code: 'object_storage_failed',
        cause: error,
      });
    }
    return folder.publish(temp, filename);
  }

  /** Releases the client's sockets. */
  destroy(): void {
    this.#client.destroy();
  }
}
