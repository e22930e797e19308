/**
 * SQL of the knowledge store's lifecycle (docs/adr/0175): which nodes a retention rule expires, which
 * superseded versions compaction removes, the deletes themselves, and VACUUM. The rules of what is
 * never removed live in the WHERE clauses here, beside the deletes they guard.
 */
import type { Db } from '../database.js';
import { OPEN_TIME } from './rows.js';

/** A node retention would delete. */
export interface ExpiringNode {
  readonly node_id: string;
  readonly ns_id: number;
  readonly mem_type: string;
  /** Transaction time of its newest version (epoch ms): the age counts from the last write. */
  readonly last_write: number;
}

/** A superseded version compaction would delete. */
export interface SupersededVersion {
  readonly vid: number;
  readonly node_id: string;
  readonly ns_id: number;
  readonly version: number;
  readonly tx_to: number;
  readonly dims: number | null;
}

/**
 * A node is referenced, and so kept, while any of these points at it: an edge still open in
 * transaction time, a pending write or feedback intent, a feedback event, a review decision about
 * it, or an acquisition candidate admitted as it.
 */
const NODE_REFERENCED = `(
  EXISTS (SELECT 1 FROM kn_edges e WHERE e.from_id = n.id AND e.tx_to = ${OPEN_TIME})
  OR EXISTS (SELECT 1 FROM kn_edges e WHERE e.to_id = n.id AND e.tx_to = ${OPEN_TIME})
  OR EXISTS (SELECT 1 FROM kn_intents i WHERE i.node_id = n.id)
  OR EXISTS (SELECT 1 FROM kn_feedback_events f WHERE f.node_id = n.id)
  OR EXISTS (SELECT 1 FROM kn_review_decisions d WHERE d.ns_id = n.ns_id AND d.review_id LIKE '%:' || n.id)
  OR EXISTS (SELECT 1 FROM kn_acquisition_candidates c WHERE c.node_id = n.id)
)`;

const nsFilter = (column: string, nsId: number | undefined) => (nsId === undefined ? '' : ` AND ${column} = ${nsId}`);

/** Lifecycle reads and deletes of one database. */
export class LifecycleStore {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  /**
   * Nodes whose current version has `memType` and whose last write is before `cutoff`, and that
   * nothing references; at most `limit`, oldest first.
   */
  expiring(memType: string, cutoff: number, limit: number, nsId?: number): ExpiringNode[] {
    return this.#db
      .prepare(
        `SELECT n.id AS node_id, n.ns_id, v.mem_type, (SELECT max(w.tx_from) FROM kn_versions w WHERE w.node_id = n.id) AS last_write
           FROM kn_nodes n JOIN kn_versions v ON v.node_id = n.id AND v.tx_to = ${OPEN_TIME}
          WHERE v.mem_type = ?${nsFilter('n.ns_id', nsId)}
            AND NOT EXISTS (SELECT 1 FROM kn_versions w WHERE w.node_id = n.id AND w.tx_from >= ?)
            AND NOT ${NODE_REFERENCED}
          GROUP BY n.id ORDER BY last_write, n.id LIMIT ?`,
      )
      .all(memType, cutoff, limit) as ExpiringNode[];
  }

  /**
   * Versions closed in transaction time before `cutoff` that a later version of the same node
   * supersedes, whose node has no pending intent, and that no feedback event names; at most
   * `limit`, oldest first. The newest version of a node is never one of them.
   */
  superseded(cutoff: number, limit: number, nsId?: number): SupersededVersion[] {
    return this.#db
      .prepare(
        `SELECT v.vid, v.node_id, v.ns_id, v.version, v.tx_to, v.dims FROM kn_versions v
          WHERE v.tx_to < ?${nsFilter('v.ns_id', nsId)}
            AND EXISTS (SELECT 1 FROM kn_versions w WHERE w.node_id = v.node_id AND w.version > v.version)
            AND NOT EXISTS (SELECT 1 FROM kn_intents i WHERE i.node_id = v.node_id)
            AND NOT EXISTS (SELECT 1 FROM kn_feedback_events f WHERE f.node_id = v.node_id AND f.node_version = v.version)
          ORDER BY v.tx_to, v.vid LIMIT ?`,
      )
      .all(cutoff, limit) as SupersededVersion[];
  }

  /** Versions (vid and vector dimensions) of nodes, for the in-memory index. */
  versionsOf(nodeIds: readonly string[]): { vid: number; dims: number | null }[] {
    const stmt = this.#db.prepare('SELECT vid, dims FROM kn_versions WHERE node_id = ?');
    return nodeIds.flatMap((id) => stmt.all(id) as { vid: number; dims: number | null }[]);
  }

  /** Deletes versions by id with their support, text and vector rows. Call inside a transaction. */
  deleteVersions(versions: readonly { vid: number; dims: number | null }[]): number {
    const support = this.#db.prepare('DELETE FROM kn_support WHERE vid = ?');
    const text = this.#db.prepare('DELETE FROM kn_text WHERE rowid = ?');
    const version = this.#db.prepare('DELETE FROM kn_versions WHERE vid = ?');
    let n = 0;
    for (const v of versions) {
      support.run(v.vid);
      text.run(v.vid);
      if (v.dims !== null && this.#vectorTable(v.dims))
        this.#db.prepare(`DELETE FROM kn_vec_${v.dims} WHERE vid = ?`).run(BigInt(v.vid));
      n += version.run(v.vid).changes;
    }
    return n;
  }

  #vectorTable(dims: number): boolean {
    return this.#db.prepare('SELECT 1 FROM kn_vector_tables WHERE dims = ?').get(dims) !== undefined;
  }

  /**
   * Deletes whole nodes: their versions (as {@link deleteVersions}), their closed edges, their
   * feedback counters, then the node rows. Call inside a transaction, for nodes {@link expiring} chose.
   */
  deleteNodes(nodeIds: readonly string[]): number {
    this.deleteVersions(this.versionsOf(nodeIds));
    const edges = this.#db.prepare('DELETE FROM kn_edges WHERE from_id = ? OR to_id = ?');
    const counters = this.#db.prepare('DELETE FROM kn_node_feedback WHERE node_id = ?');
    const node = this.#db.prepare('DELETE FROM kn_nodes WHERE id = ?');
    let n = 0;
    for (const id of nodeIds) {
      edges.run(id, id);
      counters.run(id);
      n += node.run(id).changes;
    }
    return n;
  }

  /** The database's size and free pages, in bytes. */
  size(): { bytes: number; free_bytes: number } {
    const pageSize = this.#db.pragma('page_size', { simple: true }) as number;
    const pages = this.#db.pragma('page_count', { simple: true }) as number;
    const free = this.#db.pragma('freelist_count', { simple: true }) as number;
    return { bytes: pages * pageSize, free_bytes: free * pageSize };
  }

  /** Rebuilds the database file without its free pages (blocks the connection while it runs). */
  vacuum(): void {
    this.#db.exec('VACUUM');
  }
}
