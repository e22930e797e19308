/**
 * control.db migration 12: the platform self-upgrade lane. Releases on disk (label apart from the
 * identity, commit and SHA-256, and the signature policy's verdict), one phase record per
 * upgrade (what a resumed attempt continues from) and the steps of each lane operation.
 */
import type { Migration } from '../../migrate.js';

export const PLATFORM_LANE_MIGRATION: Migration = {
  version: 12,
  name: 'platform-lane',
  sql: `
    CREATE TABLE platform_builds (
      id TEXT PRIMARY KEY,
      label TEXT NOT NULL,
      version TEXT NOT NULL,
      commit_sha TEXT,
      sha256 TEXT NOT NULL,
      source TEXT NOT NULL,
      verification TEXT NOT NULL,
      verification_message TEXT,
      created_at TEXT NOT NULL,
      promoted_at TEXT
    );
    CREATE TABLE platform_upgrades (
      operation_id TEXT PRIMARY KEY REFERENCES operations(id),
      phase TEXT NOT NULL,
      from_release TEXT,
      to_release TEXT,
      drain_mode TEXT NOT NULL,
      message TEXT,
      updated_at TEXT NOT NULL
    );
    CREATE TABLE platform_lane_steps (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      operation_id TEXT NOT NULL REFERENCES operations(id),
      attempt INTEGER NOT NULL,
      step TEXT NOT NULL,
      status TEXT NOT NULL,
      message TEXT,
      started_at TEXT NOT NULL,
      ended_at TEXT
    );
    CREATE INDEX platform_lane_steps_operation ON platform_lane_steps (operation_id, seq);
  `,
};
