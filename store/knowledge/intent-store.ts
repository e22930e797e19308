/**
 * SQL for durable pending intents: recorded (and committed) before a mutation, deleted in the same
 * transaction that applies it, so a row that survives a crash names a mutation that did not land.
 */
import type { Db } from '../database.js';
import type { IntentRow } from './rows.js';

/** Pending intents of one database. */
export class IntentStore {
  readonly #s;

  constructor(db: Db) {
    this.#s = {
      insert: db.prepare(
        'INSERT INTO kn_intents (id, ns_id, kind, node_id, request_id, payload, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ),
      remove: db.prepare('DELETE FROM kn_intents WHERE id = ?'),
      get: db.prepare('SELECT * FROM kn_intents WHERE id = ?'),
      list: db.prepare('SELECT * FROM kn_intents WHERE ns_id = ? ORDER BY created_at, id LIMIT ? OFFSET ?'),
      count: db.prepare('SELECT count(*) AS n FROM kn_intents WHERE ns_id = ?'),
      fail: db.prepare('UPDATE kn_intents SET attempts = attempts + 1, last_error = ? WHERE id = ?'),
    };
  }

  insert(row: Omit<IntentRow, 'attempts' | 'last_error'>): void {
    this.#s.insert.run(row.id, row.ns_id, row.kind, row.node_id, row.request_id, row.payload, row.created_at);
  }

  remove(id: string): boolean {
    return this.#s.remove.run(id).changes === 1;
  }

  get(id: string): IntentRow | undefined {
    return this.#s.get.get(id) as IntentRow | undefined;
  }

  list(nsId: number, limit: number, offset: number): IntentRow[] {
    return this.#s.list.all(nsId, limit, offset) as IntentRow[];
  }

  count(nsId: number): number {
    return (this.#s.count.get(nsId) as { n: number }).n;
  }

  recordFailure(id: string, error: string): void {
    this.#s.fail.run(error, id);
  }
}
