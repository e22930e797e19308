/**
 * Prepared statements kept per connection and SQL text, so a statement run on every request or
 * commit is compiled by SQLite once (ADR 0194: the event dispatcher's pass after every group commit
 * compiled two statements each time).
 */
import type Database from 'better-sqlite3';
import type { Db } from './database.js';

const statements = new WeakMap<Db, Map<string, Database.Statement<unknown[], unknown>>>();

/** The prepared statement of `sql` on `db`, compiled on first use. */
export function cachedStatement(db: Db, sql: string): Database.Statement<unknown[], unknown> {
  let cache = statements.get(db);
  if (!cache) {
    cache = new Map();
    statements.set(db, cache);
  }
  let statement = cache.get(sql);
  if (!statement) {
    statement = db.prepare(sql);
    cache.set(sql, statement);
  }
  return statement;
}
