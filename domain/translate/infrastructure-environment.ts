/**
 * Infrastructure environment: the connection settings an app receives for the backing services its spec
 * declares. Values come from the platform's settings; passwords never appear, a password file may.
 */
import type { CanonicalAppSpec } from '../spec/index.js';
import type { TranslationInfrastructure, TranslationWarning } from './translation.js';

function hostForUrl(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

/**
 * The environment for the infrastructure the spec declares, filled from `settings`:
 *
 * - postgres: `PGDATABASE`, and with settings `PGHOST`, `PGPORT`, `PGUSER`, `DATABASE_URL`
 *   (`postgres://<user>@<host>:<port>/<database>`, no password) and `PGPASSFILE` when a password file is given;
 * - redis: `REDIS_URL`, `REDIS_NAMESPACE`; kafka: `KAFKA_BROKERS`, `KAFKA_TOPICS` (comma-separated);
 * - nats: `NATS_URL`, `NATS_STREAMS` (comma-separated);
 * - object storage: `S3_ENDPOINT`, `S3_REGION`, and per bucket `S3_BUCKET_<ENV>` (the bucket name) and
 *   `S3_BUCKET_<ENV>_PREFIX` when it has a prefix; `<ENV>` is the canonical bucket alias; behind the
 *   platform's S3 proxy also `S3_FORCE_PATH_STYLE`, `S3_ACCESS_KEY_ID`, `AWS_ENDPOINT_URL_S3` and
 *   `AWS_SHARED_CREDENTIALS_FILE` (the app's key file; the AWS SDKs read it with no code).
 *
 * Infrastructure the spec does not declare gives nothing, even when settings exist; declared
 * infrastructure without settings gives what the spec alone knows, with a warning.
 */
export function infrastructureEnvironment(
  spec: CanonicalAppSpec,
  settings: TranslationInfrastructure = {},
  warnings: TranslationWarning[] = [],
): Record<string, string> {
  const env: Record<string, string> = {};
  const declared = spec.infrastructure;
  if (declared === undefined) return env;
  const missing = (kind: string, what: string): void => {
    warnings.push({
      path: `infrastructure.${kind}`,
      message: `is declared but the platform supplied no ${kind} connection settings; ${what} are not set`,
    });
  };
  if (declared.postgres !== undefined) {
    const database = declared.postgres.database;
    env.PGDATABASE = database;
    const pg = settings.postgres;
    if (pg === undefined) missing('postgres', 'DATABASE_URL, PGHOST, PGPORT and PGUSER');
    else {
      env.PGHOST = pg.host;
      env.PGPORT = String(pg.port);
      env.PGUSER = pg.user;
      env.DATABASE_URL = `postgres://${encodeURIComponent(pg.user)}@${hostForUrl(pg.host)}:${pg.port}/${encodeURIComponent(database)}`;
      if (pg.passwordFile !== undefined) env.PGPASSFILE = pg.passwordFile;
    }
  }
  if (declared.redis !== undefined) {
    if (declared.redis.namespace !== undefined) env.REDIS_NAMESPACE = declared.redis.namespace;
    if (settings.redis === undefined) missing('redis', 'REDIS_URL');
    else env.REDIS_URL = settings.redis.url;
  }
  if (declared.kafka !== undefined) {
    if (declared.kafka.topics !== undefined) env.KAFKA_TOPICS = declared.kafka.topics.join(',');
    if (settings.kafka === undefined) missing('kafka', 'KAFKA_BROKERS');
    else env.KAFKA_BROKERS = settings.kafka.brokers;
  }
  if (declared.nats !== undefined) {
    if (declared.nats.streams !== undefined) env.NATS_STREAMS = declared.nats.streams.join(',');
    if (settings.nats === undefined) missing('nats', 'NATS_URL');
    else env.NATS_URL = settings.nats.url;
  }
  if (declared.objectStorage !== undefined) {
    declared.objectStorage.buckets.forEach((bucket, index) => {
      if (env[`S3_BUCKET_${bucket.env}`] !== undefined) {
        warnings.push({
          path: `infrastructure.objectStorage.buckets.${index}.env`,
          message: `S3_BUCKET_${bucket.env} is already set by an earlier bucket; ${JSON.stringify(bucket.name)} replaces it (give the buckets distinct env aliases)`,
        });
      }
      env[`S3_BUCKET_${bucket.env}`] = bucket.name;
      if (bucket.prefix !== undefined) env[`S3_BUCKET_${bucket.env}_PREFIX`] = bucket.prefix;
    });
    if (settings.s3 === undefined) missing('objectStorage', 'S3_ENDPOINT');
    else {
      env.S3_ENDPOINT = settings.s3.endpoint;
      if (settings.s3.region !== undefined) env.S3_REGION = settings.s3.region;
      if (settings.s3.credentialsFile !== undefined) {
        env.S3_FORCE_PATH_STYLE = 'true';
        env.AWS_ENDPOINT_URL_S3 = settings.s3.endpoint;
        env.AWS_SHARED_CREDENTIALS_FILE = settings.s3.credentialsFile;
        if (settings.s3.accessKeyId !== undefined) env.S3_ACCESS_KEY_ID = settings.s3.accessKeyId;
      }
    }
  }
  return env;
}
