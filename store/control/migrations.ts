/**
 * control.db schema migrations. Append only: never edit a released entry, add a new one.
 */
import type { Migration } from '../migrate.js';
import { EVENTS_MIGRATION } from './migrations/0003-events.js';
import { OPERATIONS_MIGRATION } from './migrations/0004-operations.js';
import { ROUTING_MIGRATION } from './migrations/0005-routing.js';
import { SCHEDULE_OVERRIDES_MIGRATION } from './migrations/0006-schedule-overrides.js';
import { FUNCTION_EXECUTIONS_MIGRATION } from './migrations/0007-function-executions.js';
import { PLATFORM_RELEASES_MIGRATION } from './migrations/0008-platform-releases.js';
import { ACCESS_TOKENS_MIGRATION } from './migrations/0009-access-tokens.js';
import { FLEET_AUTHORITY_MIGRATION } from './migrations/0010-fleet-authority.js';
import { DEPLOYMENT_SPECS_MIGRATION } from './migrations/0011-deployment-specs.js';
import { PLATFORM_LANE_MIGRATION } from './migrations/0012-platform-lane.js';
import { DEPLOYMENT_HISTORY_INDEXES_MIGRATION } from './migrations/0013-deployment-history-indexes.js';
import { PLATFORM_BUILDS_PRUNED_MIGRATION } from './migrations/0014-platform-builds-pruned.js';
import { PLATFORM_BACKUPS_MIGRATION } from './migrations/0015-platform-backups.js';

export const CONTROL_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'platform-metadata',
    sql: `
      CREATE TABLE platform_meta (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
    `,
  },
  {
    version: 2,
    name: 'apps-and-deploy-groups',
    sql: `
      CREATE TABLE apps (
        name TEXT PRIMARY KEY,
        file TEXT NOT NULL,
        spec_json TEXT,
        findings_json TEXT NOT NULL DEFAULT '[]',
        generation TEXT,
        observed_generation TEXT,
        conditions_json TEXT NOT NULL DEFAULT '[]',
        release_json TEXT,
        finalizers_json TEXT NOT NULL DEFAULT '[]',
        deleted_at TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE TABLE deploy_groups (
        name TEXT PRIMARY KEY,
        file TEXT NOT NULL,
        group_json TEXT,
        findings_json TEXT NOT NULL DEFAULT '[]',
        generation TEXT,
        updated_at TEXT NOT NULL
      );
    `,
  },
  EVENTS_MIGRATION,
  OPERATIONS_MIGRATION,
  ROUTING_MIGRATION,
  SCHEDULE_OVERRIDES_MIGRATION,
  FUNCTION_EXECUTIONS_MIGRATION,
  PLATFORM_RELEASES_MIGRATION,
  ACCESS_TOKENS_MIGRATION,
  FLEET_AUTHORITY_MIGRATION,
  DEPLOYMENT_SPECS_MIGRATION,
  PLATFORM_LANE_MIGRATION,
  DEPLOYMENT_HISTORY_INDEXES_MIGRATION,
  PLATFORM_BUILDS_PRUNED_MIGRATION,
  PLATFORM_BACKUPS_MIGRATION,
];
