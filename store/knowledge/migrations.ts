/**
 * knowledge.db schema migrations. Append only: never edit a released entry, add a new one.
 */
import type { Migration } from '../migrate.js';

export const KNOWLEDGE_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'store-metadata',
    sql: `
      CREATE TABLE store_meta (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
    `,
  },
];
