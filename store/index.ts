export {
  openDatabase,
  vectorExtensionVersion,
  sqliteVersion,
  Synchronous,
  type Db,
  type OpenDatabaseOptions,
} from './database.js';
export {
  migrate,
  appliedMigrations,
  assertMigrationList,
  migrationChecksum,
  type Migration,
  type AppliedMigration,
  type MigrationResult,
} from './migrate.js';
export { openControlStore, openKnowledgeStore, type OpenedStore } from './open-stores.js';
export { CONTROL_MIGRATIONS } from './control/migrations.js';
export { KNOWLEDGE_MIGRATIONS } from './knowledge/migrations.js';
