/**
 * The S3 proxy of the control plane (ADR 0188), started when `SVC_S3_PROXY_PORT` is set: apps that
 * declare buckets get their own proxy key and reach object storage only through it.
 */
import path from 'node:path';
import { Registry } from 'prom-client';
import { ConfigError } from '../../domain/errors.js';
import type { CanonicalAppSpec } from '../../domain/spec/index.js';
import type { TranslationInfrastructure } from '../../domain/translate/index.js';
import type { SvcConfig } from '../../platform/config.js';
import type { Logger } from '../../platform/logger.js';
import { startS3Proxy, type S3Proxy } from '../../platform/s3-proxy/s3-proxy.js';
import { S3ProxyKeys, type KeyOwner } from '../../platform/s3-proxy/s3-proxy-keys.js';
import type { Db } from '../../store/database.js';
import { getApp } from '../../store/control/apps.js';

/** A running proxy, the keys it checks and its metrics (to join the control plane's registry). */
export interface S3ProxyWiring {
  readonly proxy: S3Proxy;
  readonly keys: S3ProxyKeys;
  readonly registry: Registry;
  /** The `s3` settings of an app that declares buckets (creating its key), else nothing. */
  settingsFor(app: string, spec: CanonicalAppSpec): TranslationInfrastructure;
}

/** Starts the proxy when configured. */
export async function startS3ProxyFor(
  config: SvcConfig,
  deps: { readonly db: Db; readonly hostedDir: string; readonly owner?: KeyOwner; readonly logger: Logger },
): Promise<S3ProxyWiring | undefined> {
  if (config.s3ProxyPort === undefined) return undefined;
  if (config.s3Endpoint === undefined || config.s3AccessKey === undefined || config.s3SecretKey === undefined)
    throw new ConfigError(
      'SVC_S3_PROXY_PORT',
      'the S3 proxy signs onward with the platform key: set SVC_S3_ENDPOINT, SVC_S3_ACCESS_KEY and SVC_S3_SECRET_KEY',
    );
  const keys = new S3ProxyKeys(path.join(deps.hostedDir, 's3-credentials'), deps.owner);
  const registry = new Registry();
  const proxy = await startS3Proxy({
    port: config.s3ProxyPort,
    keys,
    bucketsOf: (app) => {
      const row = getApp(deps.db, app);
      if (row?.spec == null || row.deletedAt !== null) return undefined;
      return row.spec.infrastructure?.objectStorage?.buckets ?? [];
    },
    upstream: {
      endpoint: config.s3Endpoint,
      accessKeyId: config.s3AccessKey,
      secretAccessKey: config.s3SecretKey,
      region: config.s3Region,
    },
    registry,
    logger: deps.logger,
  });
  deps.logger.info({ url: proxy.url }, 's3 proxy listening');
  return {
    proxy,
    keys,
    registry,
    settingsFor(app, spec) {
      if (spec.infrastructure?.objectStorage === undefined) return {};
      const key = keys.ensure(app);
      return {
        s3: {
          endpoint: proxy.url,
          region: config.s3Region,
          credentialsFile: key.file,
          accessKeyId: key.accessKeyId,
        },
      };
    },
  };
}
