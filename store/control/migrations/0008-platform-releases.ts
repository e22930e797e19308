/**
 * control.db migration 8: the platform builds this data folder has run, one row per start.
 * Rows are append-only: triggers refuse updates and deletes.
 */
import type { Migration } from '../../migrate.js';

export const PLATFORM_RELEASES_MIGRATION: Migration = {
  version: 8,
  name: 'platform-releases',
  sql: `
    CREATE TABLE platform_releases (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      version TEXT NOT NULL,
      label TEXT NOT NULL,
      commit_sha TEXT,
      node TEXT NOT NULL,
      profile TEXT NOT NULL,
      started_at TEXT NOT NULL
    );
    CREATE INDEX platform_releases_build ON platform_releases (version, commit_sha);
    CREATE TRIGGER platform_releases_no_update BEFORE UPDATE ON platform_releases
      BEGIN SELECT RAISE(ABORT, 'platform_releases is append-only'); END;
    CREATE TRIGGER platform_releases_no_delete BEFORE DELETE ON platform_releases
      BEGIN SELECT RAISE(ABORT, 'platform_releases is append-only'); END;
  `,
};
