/**
 * SQL over the rows one retrieval may return (docs/adr/0224): its namespace, its valid-time and
 * transaction-time view, its retraction, label and source filters. Ranking statistics (row counts,
 * document frequencies, length and order samples) and neighbouring turns read through these, so a
 * row the request cannot see never moves its ranking.
 */
import type Database from 'better-sqlite3';
import type { Db } from '../database.js';
import type { VersionText } from './node-store.js';

/** What one retrieval may see; the same rule as its result filter. */
export interface VersionView {
  readonly nsId: number;
  readonly validAt: number;
  readonly knownAt: number;
  readonly includeRetracted: boolean;
  /** Every one of these labels. */
  readonly labels: readonly string[];
  /** At least one supporting source among these (after exclusions); undefined: any. */
  readonly include: ReadonlySet<string> | undefined;
  /** Supporting sources that do not count; a version supported by none other is not seen. */
  readonly exclude: ReadonlySet<string>;
}

/** The `WHERE` terms (on alias `v` of `kn_versions`) and their parameters for `view`. */
export function viewWhere(view: VersionView): { sql: string; params: unknown[] } {
  const terms = ['v.ns_id = ?', 'v.valid_from <= ?', '? < v.valid_to', 'v.tx_from <= ?', '? < v.tx_to'];
  const params: unknown[] = [view.nsId, view.validAt, view.validAt, view.knownAt, view.knownAt];
  if (!view.includeRetracted) terms.push('v.retracted = 0');
  for (const label of view.labels) {
    terms.push('EXISTS (SELECT 1 FROM json_each(v.labels) WHERE json_each.value = ?)');
    params.push(label);
  }
  // A version needs a supporting source the request counts (a retracted one it asked for excepted).
  // Without source filters that holds for every version it sees: a version loses its last source
  // only by retraction (retract-source), so every unretracted version has one.
  if (view.exclude.size === 0 && view.include === undefined) return { sql: terms.join(' AND '), params };
  const excluded = [...view.exclude];
  const notExcluded = excluded.length > 0 ? ` AND s.source_id NOT IN (${excluded.map(() => '?').join(', ')})` : '';
  const supported = `EXISTS (SELECT 1 FROM kn_support s WHERE s.vid = v.vid${notExcluded})`;
  terms.push(view.includeRetracted ? `(${supported} OR v.retracted = 1)` : supported);
  params.push(...excluded);
  if (view.include !== undefined) {
    const included = [...view.include];
    terms.push(
      `EXISTS (SELECT 1 FROM kn_support s WHERE s.vid = v.vid AND s.source_id IN (${included.map(() => '?').join(', ')})${notExcluded})`,
    );
    params.push(...included, ...excluded);
  }
  return { sql: terms.join(' AND '), params };
}

/**
 * The ids a view saw when it was taken, kept in a table of an in-memory database attached to the
 * connection (`kn_views`). Not the temporary schema: the write path changes `temp_store`, which
 * drops every temporary table.
 */
export interface ViewSnapshot {
  /** Versions the view saw. */
  readonly rows: number;
  /** Versions the view saw whose indexed text holds `token`. */
  documentFrequency(token: string): number;
  /** Drops the table (at once, or after the transaction open now). */
  drop(): void;
}

/** FTS5 query text matching exactly `token`, as the index's tokenizer stems it. */
function phrase(token: string): string {
  return `"${token.replace(/"/g, '""')}"`;
}

/** Counts and samples over the versions a view sees. */
export class ViewStore {
  readonly #db: Db;
  readonly #stmts = new Map<string, Database.Statement>();
  #snapshots = 0;
  #attached = false;
  /** Snapshot tables to drop once no transaction is open. */
  readonly #toDrop: string[] = [];

  constructor(db: Db) {
    this.#db = db;
  }

  #prepare(sql: string): Database.Statement {
    let stmt = this.#stmts.get(sql);
    if (!stmt) {
      if (this.#stmts.size > 256) this.#stmts.clear();
      stmt = this.#db.prepare(sql);
      this.#stmts.set(sql, stmt);
    }
    return stmt;
  }

  /** Versions the view sees. */
  count(view: VersionView): number {
    const where = viewWhere(view);
    return (
      this.#prepare(`SELECT count(*) AS n FROM kn_versions v INDEXED BY kn_versions_ns_tx WHERE ${where.sql}`).get(
        ...where.params,
      ) as { n: number }
    ).n;
  }

  /**
   * Versions the view sees whose indexed text holds `token` (as the index's tokenizer stems it): the
   * token's postings drive, one lookup per row holding it, never a scan of the namespace.
   */
  documentFrequency(view: VersionView, token: string): number {
    const where = viewWhere(view);
    return (
      this.#prepare(
        `SELECT count(*) AS n FROM kn_text t CROSS JOIN kn_versions v ON v.vid = t.rowid
         WHERE kn_text MATCH ? AND ${where.sql}`,
      ).get(phrase(token), ...where.params) as { n: number }
    ).n;
  }

  /**
   * The ids `view` sees now, for counting many terms against: a posting then costs a lookup in a
   * table of ids instead of one in the versions (3-5 times faster). Undefined inside a transaction
   * (a database cannot be attached in one, and a rollback would take the table with it).
   */
  snapshot(view: VersionView): ViewSnapshot | undefined {
    const db = this.#db;
    if (db.inTransaction) return undefined;
    if (!this.#attached) {
      db.exec("ATTACH DATABASE ':memory:' AS kn_views");
      this.#attached = true;
    }
    for (const table of this.#toDrop.splice(0)) db.exec(`DROP TABLE IF EXISTS kn_views.${table}`);
    const table = `view_${++this.#snapshots}`;
    const where = viewWhere(view);
    db.exec(`CREATE TABLE kn_views.${table} (vid INTEGER PRIMARY KEY)`);
    const rows = db
      .prepare(
        `INSERT INTO kn_views.${table} SELECT v.vid FROM kn_versions v INDEXED BY kn_versions_ns_tx WHERE ${where.sql}`,
      )
      .run(...where.params).changes;
    const count = db.prepare<[string], { n: number }>(
      `SELECT count(*) AS n FROM kn_text t CROSS JOIN kn_views.${table} s ON s.vid = t.rowid WHERE kn_text MATCH ?`,
    );
    let dropped = false;
    return {
      rows,
      documentFrequency: (token) => {
        if (dropped) throw new Error(`view snapshot ${table} was dropped`);
        return count.get(phrase(token))!.n;
      },
      drop: () => {
        if (dropped) return;
        dropped = true;
        if (db.inTransaction) this.#toDrop.push(table);
        else db.exec(`DROP TABLE IF EXISTS kn_views.${table}`);
      },
    };
  }

  /** Contents of up to `limit` of the newest versions the view sees. */
  sampleContent(view: VersionView, limit: number): string[] {
    const where = viewWhere(view);
    return (
      this.#prepare(
        `SELECT v.content FROM kn_versions v INDEXED BY kn_versions_ns_tx WHERE ${where.sql}
         ORDER BY v.tx_from DESC, v.vid DESC LIMIT ?`,
      ).all(...where.params, limit) as { content: string }[]
    ).map((r) => r.content);
  }

  /**
   * The versions the view sees written just before and just after version `vid` in its namespace
   * (write order: transaction time, then version id), at most `reach` on each side, nearest first.
   */
  neighbours(view: VersionView, vid: number, reach: number): VersionText[] {
    const where = viewWhere(view);
    const side = (cmp: '<' | '>', dir: 'DESC' | 'ASC') =>
      this.#prepare(
        `SELECT v.vid, v.content FROM kn_versions a, kn_versions v INDEXED BY kn_versions_ns_tx
         WHERE a.vid = ? AND (v.tx_from, v.vid) ${cmp} (a.tx_from, a.vid) AND ${where.sql}
         ORDER BY v.tx_from ${dir}, v.vid ${dir} LIMIT ?`,
      ).all(vid, ...where.params, reach) as VersionText[];
    return [...side('<', 'DESC'), ...side('>', 'ASC')];
  }
}
