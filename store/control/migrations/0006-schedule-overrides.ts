/**
 * control.db migration 6: operator schedule overrides of periodic processes.
 */
import type { Migration } from '../../migrate.js';

export const SCHEDULE_OVERRIDES_MIGRATION: Migration = {
  version: 6,
  name: 'schedule-overrides',
  sql: `
    CREATE TABLE schedule_overrides (
      app TEXT NOT NULL,
      process TEXT NOT NULL,
      schedule TEXT NOT NULL,
      spec_schedule TEXT NOT NULL,
      updated_by TEXT,
      updated_at TEXT NOT NULL,
      PRIMARY KEY (app, process)
    );
  `,
};
