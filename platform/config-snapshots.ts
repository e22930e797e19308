/**
 * The settings of snapshots and of the S3-compatible store they are exported to (and its proxy, ADR 0188),
 * part of {@link VARIABLES} in config.ts.
 */
import path from 'node:path';
import { ConfigError } from '../domain/errors.js';
import { bool, optional, type VariableSpec } from './config-parsers.js';

/** Snapshot and S3 settings of {@link SvcConfig}. */
export interface SnapshotConfig {
  /** Local snapshot folder. @default <working dir>/snapshots */
  readonly snapshotsDir: string;
  /** S3-compatible endpoint for snapshot export and import. */
  readonly s3Endpoint: string | undefined;
  readonly s3AccessKey: string | undefined;
  /** Never logged. */
  readonly s3SecretKey: string | undefined;
  readonly s3Region: string;
  /** Port of the S3 proxy on loopback (ADR 0188); undefined: no proxy. */
  readonly s3ProxyPort: number | undefined;
  /** Path-style addressing (needed by most self-hosted stores). @default true */
  readonly s3ForcePathStyle: boolean;
}

export const SNAPSHOT_VARIABLES = {
  snapshotsDir: {
    name: 'SVC_SNAPSHOTS_DIR',
    description: 'local snapshot folder',
    defaultText: './snapshots',
    parse: (raw) => path.resolve(optional(raw) ?? 'snapshots'),
  },
  s3Endpoint: {
    name: 'SVC_S3_ENDPOINT',
    description: 'S3-compatible endpoint for snapshot export and import',
    defaultText: '(none)',
    parse: optional,
  },
  s3AccessKey: { name: 'SVC_S3_ACCESS_KEY', description: 'S3 access key', defaultText: '(none)', parse: optional },
  s3SecretKey: {
    name: 'SVC_S3_SECRET_KEY',
    description: 'S3 secret key',
    secret: true,
    defaultText: '(none)',
    parse: optional,
  },
  s3Region: {
    name: 'SVC_S3_REGION',
    description: 'S3 region',
    defaultText: 'us-east-1',
    parse: (raw) => optional(raw) ?? 'us-east-1',
  },
  s3ProxyPort: {
    name: 'SVC_S3_PROXY_PORT',
    description:
      "Loopback port of the S3 proxy that enforces apps' bucket access (ADR 0188); needs SVC_S3_*; 0 picks a free port. Unset: no proxy, and apps get no S3 credentials",
    defaultText: '(off)',
    parse: (raw) => {
      const value = optional(raw);
      if (value === undefined) return undefined;
      if (!/^\d+$/.test(value) || Number(value) > 65535)
        throw new ConfigError('SVC_S3_PROXY_PORT', `"${value}" is not a port number (0-65535)`);
      return Number(value);
    },
  },
  s3ForcePathStyle: {
    name: 'SVC_S3_FORCE_PATH_STYLE',
    description: 'path-style S3 addressing',
    defaultText: 'true',
    parse: bool('SVC_S3_FORCE_PATH_STYLE', true),
  },
} satisfies { [K in keyof SnapshotConfig]: VariableSpec<SnapshotConfig[K]> };
