/**
 * Scoped access tokens in control.db: name, scopes, expiry and revocation; the secret only as its
 * SHA-256.
 */
import type { Scope } from '../../domain/auth/index.js';
import type { Db } from '../database.js';

/** A stored token (never the secret). */
export interface AccessTokenRecord {
  readonly id: string;
  readonly name: string;
  readonly scopes: readonly Scope[];
  readonly createdAt: string;
  readonly createdBy: string;
  readonly expiresAt: string | null;
  readonly revokedAt: string | null;
}

interface Row {
  id: string;
  name: string;
  scopes_json: string;
  created_at: string;
  created_by: string;
  expires_at: string | null;
  revoked_at: string | null;
}

const COLUMNS = 'id, name, scopes_json, created_at, created_by, expires_at, revoked_at';

function toRecord(row: Row): AccessTokenRecord {
  return {
    id: row.id,
    name: row.name,
    scopes: JSON.parse(row.scopes_json) as Scope[],
    createdAt: row.created_at,
    createdBy: row.created_by,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
  };
}

/** Stores a new token. */
export function insertAccessToken(db: Db, record: AccessTokenRecord, secretSha256: string): void {
  db.prepare(
    `INSERT INTO access_tokens (id, name, scopes_json, secret_sha256, created_at, created_by, expires_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?, NULL)`,
  ).run(
    record.id,
    record.name,
    JSON.stringify(record.scopes),
    secretSha256,
    record.createdAt,
    record.createdBy,
    record.expiresAt,
  );
}

/** The token whose secret has this SHA-256, if any. */
export function accessTokenBySecret(db: Db, secretSha256: string): AccessTokenRecord | undefined {
  const row = db.prepare(`SELECT ${COLUMNS} FROM access_tokens WHERE secret_sha256 = ?`).get(secretSha256) as
    Row | undefined;
  return row ? toRecord(row) : undefined;
}

/** Every token, newest first. */
export function listAccessTokens(db: Db): AccessTokenRecord[] {
  return (db.prepare(`SELECT ${COLUMNS} FROM access_tokens ORDER BY created_at DESC, id DESC`).all() as Row[]).map(
    toRecord,
  );
}

export function getAccessToken(db: Db, id: string): AccessTokenRecord | undefined {
  const row = db.prepare(`SELECT ${COLUMNS} FROM access_tokens WHERE id = ?`).get(id) as Row | undefined;
  return row ? toRecord(row) : undefined;
}

/** Marks a token revoked (idempotent: the first revocation time stays). */
export function revokeAccessToken(db: Db, id: string, now: Date): AccessTokenRecord | undefined {
  db.prepare('UPDATE access_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL').run(now.toISOString(), id);
  return getAccessToken(db, id);
}
