/**
 * control.db migration 9: scoped access tokens. Only the SHA-256 of each secret is kept.
 */
import type { Migration } from '../../migrate.js';

export const ACCESS_TOKENS_MIGRATION: Migration = {
  version: 9,
  name: 'access-tokens',
  sql: `
    CREATE TABLE access_tokens (
      id TEXT PRIMARY KEY,
      name TEXT NOT NULL,
      scopes_json TEXT NOT NULL,
      secret_sha256 TEXT NOT NULL UNIQUE,
      created_at TEXT NOT NULL,
      created_by TEXT NOT NULL,
      expires_at TEXT,
      revoked_at TEXT
    );
  `,
};
