/**
 * Event surface settings kept in platform_meta (host id, capacity episode state).
 */
import type { Db } from '../database.js';

/** Reads a platform_meta value. */
export function readMeta(db: Db, key: string): string | undefined {
  return (db.prepare('SELECT value FROM platform_meta WHERE key = ?').get(key) as { value: string } | undefined)?.value;
}

/** Writes a platform_meta value (event surface state such as the host id and capacity episode). */
export function writeMeta(db: Db, key: string, value: string, at: string): void {
  db.prepare(
    'INSERT INTO platform_meta (key, value, updated_at) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at',
  ).run(key, value, at);
}

/** Removes a platform_meta value. */
export function deleteMeta(db: Db, key: string): void {
  db.prepare('DELETE FROM platform_meta WHERE key = ?').run(key);
}
