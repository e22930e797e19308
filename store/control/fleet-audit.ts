/**
 * The fleet audit chain in control.db: each entry carries the SHA-256 of the previous one and an
 * HMAC signature made with the audit signing key (computed by the caller; SQL only here).
 */
import type { Db } from '../database.js';

/** A stored audit entry. */
export interface AuditEntry {
  readonly seq: number;
  readonly at: string;
  readonly actor: string;
  readonly action: string;
  readonly subject: string;
  readonly details: Readonly<Record<string, unknown>>;
  readonly prevSha256: string;
  readonly entrySha256: string;
  readonly signature: string;
}

interface Row {
  seq: number;
  at: string;
  actor: string;
  action: string;
  subject: string;
  details_json: string;
  prev_sha256: string;
  entry_sha256: string;
  signature: string;
}

const toEntry = (row: Row): AuditEntry => ({
  seq: row.seq,
  at: row.at,
  actor: row.actor,
  action: row.action,
  subject: row.subject,
  details: JSON.parse(row.details_json) as Record<string, unknown>,
  prevSha256: row.prev_sha256,
  entrySha256: row.entry_sha256,
  signature: row.signature,
});

/** The newest entry's hash, or undefined for an empty chain. */
export function lastAuditHash(db: Db): string | undefined {
  return (
    db.prepare('SELECT entry_sha256 FROM fleet_audit ORDER BY seq DESC LIMIT 1').get() as
      { entry_sha256: string } | undefined
  )?.entry_sha256;
}

export function appendAudit(db: Db, entry: Omit<AuditEntry, 'seq'>): void {
  db.prepare(
    'INSERT INTO fleet_audit (at, actor, action, subject, details_json, prev_sha256, entry_sha256, signature) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
  ).run(
    entry.at,
    entry.actor,
    entry.action,
    entry.subject,
    JSON.stringify(entry.details),
    entry.prevSha256,
    entry.entrySha256,
    entry.signature,
  );
}

/** Entries newest first. */
export function listAudit(db: Db, filter: { limit: number; offset: number; action?: string }): AuditEntry[] {
  const where = filter.action === undefined ? '' : 'WHERE action = ?';
  const args = filter.action === undefined ? [] : [filter.action];
  return (
    db
      .prepare(`SELECT * FROM fleet_audit ${where} ORDER BY seq DESC LIMIT ? OFFSET ?`)
      .all(...args, filter.limit, filter.offset) as Row[]
  ).map(toEntry);
}

/** Removes at most `limit` entries older than `before` (retention). */
export function pruneAudit(db: Db, before: Date, limit: number): number {
  return db
    .prepare('DELETE FROM fleet_audit WHERE seq IN (SELECT seq FROM fleet_audit WHERE at < ? ORDER BY seq LIMIT ?)')
    .run(before.toISOString(), limit).changes;
}
