/**
 * Idempotency keys in control.db: the first request with a key reserves it (in flight), its
 * response is stored with it, and the row is kept at least 24 hours.
 */
import type { Db } from '../database.js';

/** A stored key. */
export interface IdempotencyRecord {
  readonly key: string;
  readonly requestHash: string;
  readonly method: string;
  readonly path: string;
  readonly state: 'in_flight' | 'done';
  readonly responseStatus: number | null;
  readonly responseBody: unknown;
  readonly createdAt: string;
  readonly expiresAt: string;
}

interface RawRecord {
  key: string;
  request_hash: string;
  method: string;
  path: string;
  state: 'in_flight' | 'done';
  response_status: number | null;
  response_json: string | null;
  created_at: string;
  expires_at: string;
}

function fromRaw(raw: RawRecord): IdempotencyRecord {
  return {
    key: raw.key,
    requestHash: raw.request_hash,
    method: raw.method,
    path: raw.path,
    state: raw.state,
    responseStatus: raw.response_status,
    responseBody: raw.response_json === null ? null : JSON.parse(raw.response_json),
    createdAt: raw.created_at,
    expiresAt: raw.expires_at,
  };
}

/** Reserves `key` for a request, or returns the live record already holding it (expired rows are replaced). */
export function reserveIdempotencyKey(
  db: Db,
  input: { key: string; requestHash: string; method: string; path: string; ttlMs: number },
  now = new Date(),
): { reserved: true } | { reserved: false; existing: IdempotencyRecord } {
  const at = now.toISOString();
  return db
    .transaction(() => {
      const raw = db.prepare('SELECT * FROM idempotency_keys WHERE key = ?').get(input.key) as RawRecord | undefined;
      if (raw && raw.expires_at > at) return { reserved: false as const, existing: fromRaw(raw) };
      db.prepare(
        `INSERT INTO idempotency_keys (key, request_hash, method, path, state, created_at, expires_at) VALUES (?, ?, ?, ?, 'in_flight', ?, ?)
       ON CONFLICT(key) DO UPDATE SET request_hash = excluded.request_hash, method = excluded.method, path = excluded.path, state = 'in_flight',
         response_status = NULL, response_json = NULL, created_at = excluded.created_at, expires_at = excluded.expires_at`,
      ).run(
        input.key,
        input.requestHash,
        input.method,
        input.path,
        at,
        new Date(now.getTime() + input.ttlMs).toISOString(),
      );
      return { reserved: true as const };
    })
    .immediate();
}

/** Stores the response of the request that reserved `key`. */
export function completeIdempotencyKey(db: Db, key: string, status: number, body: unknown): void {
  db.prepare("UPDATE idempotency_keys SET state = 'done', response_status = ?, response_json = ? WHERE key = ?").run(
    status,
    JSON.stringify(body ?? null),
    key,
  );
}

/** Frees a key whose request failed unexpectedly, so the caller may retry it. */
export function releaseIdempotencyKey(db: Db, key: string): void {
  db.prepare("DELETE FROM idempotency_keys WHERE key = ? AND state = 'in_flight'").run(key);
}

/** Deletes expired keys; returns how many. */
export function purgeExpiredIdempotencyKeys(db: Db, now = new Date()): number {
  return db.prepare('DELETE FROM idempotency_keys WHERE expires_at <= ?').run(now.toISOString()).changes;
}

/** Frees every key still in flight: at start, no request of the previous process is in flight any more. */
export function releaseInFlightIdempotencyKeys(db: Db): number {
  return db.prepare("DELETE FROM idempotency_keys WHERE state = 'in_flight'").run().changes;
}
