/**
 * SQL for typed, weighted edges between nodes of one namespace.
 */
import type { Db } from '../database.js';
import { OPEN_TIME, type EdgeRow } from './rows.js';

/** Edges of one database. */
export class EdgeStore {
  readonly #db: Db;
  readonly #s;

  constructor(db: Db) {
    this.#db = db;
    this.#s = {
      insert: db.prepare(
        'INSERT INTO kn_edges (id, ns_id, from_id, to_id, type, weight, tx_from, tx_to) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      ),
      from: db.prepare(
        'SELECT * FROM kn_edges WHERE from_id = ? AND tx_from <= ? AND tx_to > ? ORDER BY weight DESC, id',
      ),
      touching: db.prepare(
        'SELECT * FROM kn_edges WHERE (from_id = @id OR to_id = @id) AND tx_from <= @known AND tx_to > @known ORDER BY weight DESC, id',
      ),
    };
  }

  insert(edge: EdgeRow): void {
    this.#s.insert.run(edge.id, edge.ns_id, edge.from_id, edge.to_id, edge.type, edge.weight, edge.tx_from, edge.tx_to);
  }

  /** Outgoing edges of a node known at `known`. */
  outgoing(nodeId: string, known: number): EdgeRow[] {
    return this.#s.from.all(nodeId, known, known) as EdgeRow[];
  }

  /** Edges in either direction of a node known at `known`. */
  touching(nodeId: string, known: number): EdgeRow[] {
    return this.#s.touching.all({ id: nodeId, known }) as EdgeRow[];
  }

  /** Outgoing edges of many nodes at once, known now. */
  outgoingMany(nodeIds: readonly string[]): Map<string, EdgeRow[]> {
    const out = new Map<string, EdgeRow[]>();
    for (let i = 0; i < nodeIds.length; i += 500) {
      const chunk = nodeIds.slice(i, i + 500);
      const rows = this.#db
        .prepare(
          `SELECT * FROM kn_edges WHERE tx_to = ${OPEN_TIME} AND from_id IN (${chunk.map(() => '?').join(',')}) ORDER BY weight DESC, id`,
        )
        .all(...chunk) as EdgeRow[];
      for (const row of rows) out.set(row.from_id, [...(out.get(row.from_id) ?? []), row]);
    }
    return out;
  }
}
