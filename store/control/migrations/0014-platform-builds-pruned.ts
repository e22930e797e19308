/**
 * control.db migration 14: when a platform release's folder was removed from disk (pruned after an
 * upgrade, ADR 0088); the record stays as history.
 */
import type { Migration } from '../../migrate.js';

export const PLATFORM_BUILDS_PRUNED_MIGRATION: Migration = {
  version: 14,
  name: 'platform-builds-pruned',
  sql: `
    ALTER TABLE platform_builds ADD COLUMN pruned_at TEXT;
  `,
};
