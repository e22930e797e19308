/**
 * Commits of state the controllers derive again on every start (a spec read from its file, status
 * conditions): written in one transaction committed with `synchronous = NORMAL`, so without an
 * fsync of their own (ADR 0195). Their WAL frames are flushed by the next FULL commit on the
 * connection or the next checkpoint, whichever comes first, so they are durable in the order they
 * were made; a power loss can lose the last of them, never an acknowledged mutation, and the
 * controllers' resync at start writes them again from the files and the scheduler. Nothing a
 * request acknowledges goes through here.
 */
import type { Db } from './database.js';
import { cachedStatement } from './statement-cache.js';

const FULL = 2;

/** Runs `write` in one transaction committed without waiting for an fsync (inside a transaction: as part of it). */
export function writeRederivable<T>(db: Db, write: () => T): T {
  if (db.inTransaction) return write();
  const level = cachedStatement(db, 'PRAGMA synchronous').pluck().get() as number;
  if (level < FULL) return db.transaction(write)();
  cachedStatement(db, 'PRAGMA synchronous = NORMAL').run();
  try {
    return db.transaction(write)();
  } finally {
    cachedStatement(db, `PRAGMA synchronous = ${level}`).run();
  }
}
