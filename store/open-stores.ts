/**
 * Opens the two service databases under the data folder and brings their schemas up to date.
 */
import path from 'node:path';
import { openDatabase, vectorExtensionVersion, type Db } from './database.js';
import { migrate, type MigrationResult } from './migrate.js';
import { CONTROL_MIGRATIONS } from './control/migrations.js';
import { KNOWLEDGE_MIGRATIONS } from './knowledge/migrations.js';

export interface OpenedStore {
  readonly db: Db;
  readonly file: string;
  readonly migrations: MigrationResult;
}

/** Opens `control.db` (synchronous FULL: operations and events are acknowledged only when on disk). */
export function openControlStore(dataDir: string): OpenedStore {
  const file = path.join(dataDir, 'control.db');
  const db = openDatabase(file, { synchronous: 'FULL' });
  return { db, file, migrations: migrate(db, CONTROL_MIGRATIONS) };
}

/** Opens `knowledge.db` with sqlite-vec loaded and checked (synchronous FULL, see ADR 0003). */
export function openKnowledgeStore(dataDir: string): OpenedStore & { vecVersion: string } {
  const file = path.join(dataDir, 'knowledge.db');
  const db = openDatabase(file, { synchronous: 'FULL', vectors: true });
  let vecVersion: string;
  try {
    vecVersion = vectorExtensionVersion(db);
  } catch (cause) {
    db.close();
    throw new Error('sqlite-vec did not load into knowledge.db; reinstall the sqlite-vec package', { cause });
  }
  return { db, file, vecVersion, migrations: migrate(db, KNOWLEDGE_MIGRATIONS) };
}
