/**
 * The S3 client of both object-storage adapters (snapshot exports and platform backups): path-style
 * addressing by default, plain bodies (no aws-chunked uploads with checksum trailers, which many
 * S3-compatible servers store as content), and a silent SDK logger: `putFile` retries a failed
 * streaming upload itself (ADR 0216) and reports its final failure.
 */
import { S3Client } from '@aws-sdk/client-s3';

/** How to reach the object store. */
export interface S3Settings {
  readonly endpoint: string;
  readonly accessKey: string;
  readonly secretKey: string;
  /** @default us-east-1 */
  readonly region?: string;
  /** Path-style addressing (`endpoint/bucket/key`), needed by most self-hosted stores. @default true */
  readonly forcePathStyle?: boolean;
}

/**
 * The SDK's logger: silent, as its default `NoOpLogger` is. The SDK writes one warning to the console
 * when its logger is that default ("An error was encountered in a non-retryable streaming request."),
 * which `putFile` makes moot by trying such an upload again itself.
 */
const sdkLogger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

/** A client for the store `settings` name. */
export function createS3Client(settings: S3Settings): S3Client {
  return new S3Client({
    endpoint: settings.endpoint,
    region: settings.region ?? 'us-east-1',
    forcePathStyle: settings.forcePathStyle ?? true,
    credentials: { accessKeyId: settings.accessKey, secretAccessKey: settings.secretKey },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    logger: sdkLogger,
  });
}
