export { BACKUP_FORMAT, BACKUP_FORMAT_VERSION, checkManifest, rowCountDifferences } from './backup-manifest.js';
export type {
  BackupAppUser,
  BackupDatabaseEntry,
  BackupFileEntry,
  BackupManifest,
  BackupPostgresEntry,
  KnownSchemas,
} from './backup-manifest.js';
export { BackupStatus } from './platform-backup-record.js';
export type { PlatformBackupRecord } from './platform-backup-record.js';
