/**
 * The settings of platform backups (ADR 0173), part of {@link VARIABLES} in config.ts.
 */
import path from 'node:path';
import { ConfigError } from '../domain/errors.js';
import { durationMs, optional, wholeNumber, type VariableSpec } from './config-parsers.js';

/** Platform backup settings of {@link SvcConfig}. */
export interface BackupConfig {
  /** Folder of platform backup archives. @default <dataDir>/backups */
  readonly backupDir: string;
  /** The operator key: an age identity or recipient, a passphrase, or `@file`; never shown. */
  readonly backupKey: string | undefined;
  /** Interval of scheduled backups in ms; 0: none. @default 0 (off) */
  readonly backupIntervalMs: number;
  /** Verified backups kept locally (and remotely, when exported). @default 7 */
  readonly backupKeep: number;
  /** Export each verified backup to the S3 bucket (needs SVC_S3_*); unset: no export. */
  readonly backupS3Bucket: string | undefined;
  /**
   * MB per second at most that a backup writes (its staged copies, the archive, a restore's unpacking),
   * synced every 8 MiB, so the platform's own fsyncs do not wait behind it (docs/adr/0167); 0: no limit.
   * @default 32
   */
  readonly backupIoMbps: number;
}

export const BACKUP_VARIABLES = {
  backupDir: {
    name: 'SVC_BACKUP_DIR',
    description:
      'Folder of platform backup archives (svc backup); put it on another disk, or export them (SVC_BACKUP_S3_BUCKET)',
    defaultText: '<SVC_DATA_DIR>/backups',
    parse: (raw, env) => path.resolve(optional(raw) ?? path.join(optional(env.SVC_DATA_DIR) ?? '.data', 'backups')),
  },
  backupKey: {
    name: 'SVC_BACKUP_KEY',
    description:
      'Operator key of platform backups: an age identity (AGE-SECRET-KEY-1..., encrypts and verifies), an age recipient (age1..., encrypts only), a passphrase (12+ characters), or @file holding one; without it only backups without secrets (--no-secrets)',
    defaultText: '(none)',
    secret: true,
    parse: optional,
  },
  backupIntervalMs: {
    name: 'SVC_BACKUP_INTERVAL',
    description: 'Scheduled platform backups: a duration such as 24h, or off',
    defaultText: 'off',
    parse: durationMs('SVC_BACKUP_INTERVAL', 0, true),
  },
  backupKeep: {
    name: 'SVC_BACKUP_KEEP',
    description: 'Verified platform backups kept, locally and in the S3 bucket (older ones are removed)',
    defaultText: '7',
    parse: (raw) => {
      const value = optional(raw);
      if (value === undefined) return 7;
      if (!/^[1-9]\d{0,3}$/.test(value))
        throw new ConfigError('SVC_BACKUP_KEEP', `"${value}" is not a count from 1 to 9999`);
      return Number(value);
    },
  },
  backupS3Bucket: {
    name: 'SVC_BACKUP_S3_BUCKET',
    description: 'S3 bucket each verified platform backup is exported to (the SVC_S3_* target of snapshots)',
    defaultText: '(none)',
    parse: optional,
  },
  backupIoMbps: {
    name: 'SVC_BACKUP_IO_MBPS',
    description:
      "MB per second at most that a platform backup or restore writes (synced every 8 MiB), so the platform's own writes do not wait behind it; 0: no limit",
    defaultText: '32',
    parse: wholeNumber('SVC_BACKUP_IO_MBPS', 32, 0, 100_000),
  },
} satisfies { [K in keyof BackupConfig]: VariableSpec<BackupConfig[K]> };
