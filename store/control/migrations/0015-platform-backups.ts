/**
 * control.db migration 15: platform backups (ADR 0173), one row per archive with its verification.
 */
import type { Migration } from '../../migrate.js';

export const PLATFORM_BACKUPS_MIGRATION: Migration = {
  version: 15,
  name: 'platform-backups',
  sql: `
    CREATE TABLE platform_backups (
      id TEXT PRIMARY KEY,
      file TEXT NOT NULL,
      status TEXT NOT NULL,
      secrets INTEGER NOT NULL,
      encrypted INTEGER NOT NULL,
      bytes INTEGER,
      sha256 TEXT,
      trigger TEXT NOT NULL,
      created_at TEXT NOT NULL,
      finished_at TEXT,
      verification_json TEXT NOT NULL DEFAULT '[]',
      error TEXT,
      remote_key TEXT
    );
    CREATE INDEX platform_backups_created ON platform_backups (created_at);
  `,
};
