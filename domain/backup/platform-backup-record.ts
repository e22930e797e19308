/**
 * The record of one platform backup, as listed by `svc backup list`: a backup is good only when its
 * status is `verified` (restored into a throwaway folder and checked).
 */

/** Where a backup stands. */
export const BackupStatus = {
  /** Being written or verified. */
  running: 'running',
  /** Written, then restored into a throwaway folder and every check passed. */
  verified: 'verified',
  /** Writing or verification failed; the archive (if any) must not be trusted. */
  failed: 'failed',
  /** The process stopped while it ran (found at the next start). */
  interrupted: 'interrupted',
} as const;
export type BackupStatus = (typeof BackupStatus)[keyof typeof BackupStatus];

/** One backup. */
export interface PlatformBackupRecord {
  readonly id: string;
  /** Archive file name in the backups folder. */
  readonly file: string;
  readonly status: BackupStatus;
  /** Whether credentials and secret settings are in it (encrypted). */
  readonly secrets: boolean;
  readonly encrypted: boolean;
  readonly bytes: number | null;
  readonly sha256: string | null;
  /** `scheduled`, `api`, `pre-restore`. */
  readonly trigger: string;
  readonly createdAt: string;
  readonly finishedAt: string | null;
  /** What the verification checked (or why it failed). */
  readonly verification: readonly string[];
  readonly error: string | null;
  /** The S3 key it was exported to, if any. */
  readonly remoteKey: string | null;
}
