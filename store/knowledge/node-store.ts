/**
 * SQL for namespaces, nodes, bi-temporal versions, per-version source support and the FTS5 index.
 * Versions are never updated except to close them in transaction time (`tx_to`).
 */
import type Database from 'better-sqlite3';
import type { Db } from '../database.js';
import { OPEN_TIME, versionRow, type NamespaceRow, type NewVersion, type VersionRow } from './rows.js';
import { textMergeOf, type TextMergePolicy } from './text-merge.js';

/** Columns of a version insert, in the order `#insertNumbered` binds them. */
const VERSION_COLUMNS = [
  'node_id',
  'ns_id',
  'version',
  'content',
  'labels',
  'properties',
  'confidence',
  'utility',
  'mem_type',
  'model_id',
  'fingerprint',
  'claim_key',
  'claim_value',
  'dims',
  'valid_from',
  'valid_to',
  'tx_from',
  'tx_to',
  'retracted',
  'change',
] as const;

/** Filters of a lexical query. */
export interface TextFilter {
  readonly nsId: number;
  /** Only versions open in transaction time and not retracted (the fast path). */
  readonly liveOnly: boolean;
}

/** A version id and its content. */
export interface VersionText {
  readonly vid: number;
  readonly content: string;
}

/** Namespaces, nodes, versions and text of one database. */
export class NodeStore {
  readonly #db: Db;
  readonly #s;
  /** One transaction wrapper, reused: building one per call costs more than the savepoint itself. */
  readonly #tx: (fn: () => unknown) => unknown;
  /** `IN (?, …)` lookups by their SQL and number of ids: preparing one costs more than running it. */
  readonly #inStmts = new Map<string, Database.Statement>();
  /** Versions whose text rows wait for the end of `deferText` (undefined: text rows go in at once). */
  #pendingText: Set<number> | undefined;
  /** Namespace rows found during `deferText`, by tenant and name (undefined outside it). */
  #namespaces: Map<string, NamespaceRow> | undefined;
  /** Merges the text index's segments in slices as rows are written (docs/adr/0207). */
  readonly textMerge: TextMergePolicy;

  constructor(db: Db) {
    this.#db = db;
    this.textMerge = textMergeOf(db);
    this.#tx = db.transaction((fn: () => unknown) => fn());
    this.#s = {
      nsGet: db.prepare('SELECT * FROM kn_namespaces WHERE tenant = ? AND name = ?'),
      nsInsert: db.prepare(
        'INSERT INTO kn_namespaces (tenant, name, mode, created_at) VALUES (?, ?, ?, ?) RETURNING *',
      ),
      nsCount: db.prepare('SELECT count(*) AS n FROM kn_namespaces WHERE tenant = ?'),
      nsAll: db.prepare('SELECT * FROM kn_namespaces ORDER BY id'),
      nodeGet: db.prepare('SELECT id, ns_id, request_id, created_at, last_version FROM kn_nodes WHERE id = ?'),
      nodeByRequest: db.prepare('SELECT id FROM kn_nodes WHERE ns_id = ? AND request_id = ?'),
      nodeInsert: db.prepare(
        'INSERT INTO kn_nodes (id, ns_id, request_id, created_at, last_version) VALUES (?, ?, ?, ?, 0)',
      ),
      nodeInsertFirst: db.prepare(
        'INSERT INTO kn_nodes (id, ns_id, request_id, created_at, last_version) VALUES (?, ?, ?, ?, 1)',
      ),
      // No RETURNING: on these tables it costs more than a second lookup (docs/adr/0202).
      nodeBump: db.prepare('UPDATE kn_nodes SET last_version = last_version + 1 WHERE id = ?'),
      nodeLastVersion: db.prepare('SELECT last_version FROM kn_nodes WHERE id = ?'),
      // Positional parameters in VERSION_COLUMNS order, and the new vid from `lastInsertRowid`: binding
      // twenty named parameters and a RETURNING clause each cost more than the row's smaller indexes.
      versionInsert: db.prepare(
        `INSERT INTO kn_versions (${VERSION_COLUMNS.join(', ')}) VALUES (${VERSION_COLUMNS.map(() => '?').join(', ')})`,
      ),
      versionClose: db.prepare('UPDATE kn_versions SET tx_to = ? WHERE vid = ? AND tx_to = ?'),
      versionGet: db.prepare('SELECT * FROM kn_versions WHERE vid = ?'),
      versionsOfNode: db.prepare('SELECT * FROM kn_versions WHERE node_id = ? ORDER BY version'),
      currentOfNode: db.prepare(
        `SELECT * FROM kn_versions WHERE node_id = ? AND tx_to = ${OPEN_TIME} ORDER BY valid_from`,
      ),
      visibleOfNode: db.prepare(
        'SELECT * FROM kn_versions WHERE node_id = @node AND tx_from <= @known AND tx_to > @known AND valid_from <= @valid AND valid_to > @valid ORDER BY version DESC LIMIT 1',
      ),
      byFingerprint: db.prepare(
        `SELECT * FROM kn_versions INDEXED BY kn_versions_fingerprint WHERE ns_id = ? AND fingerprint = ? AND tx_to = ${OPEN_TIME} AND retracted = 0 AND valid_to > ? ORDER BY vid LIMIT 1`,
      ),
      laterFingerprint: db.prepare(
        'SELECT node_id FROM kn_versions INDEXED BY kn_versions_fingerprint WHERE ns_id = ? AND fingerprint = ? AND tx_from >= ? ORDER BY vid LIMIT 1',
      ),
      byClaim: db.prepare(
        `SELECT * FROM kn_versions INDEXED BY kn_versions_claim WHERE ns_id = ? AND claim_key = ? AND tx_to = ${OPEN_TIME} AND retracted = 0 AND valid_to > ? ORDER BY valid_to, vid`,
      ),
      supportInsert: db.prepare('INSERT OR IGNORE INTO kn_support (vid, source_id) VALUES (?, ?)'),
      supportOf: db.prepare('SELECT source_id FROM kn_support WHERE vid = ? ORDER BY source_id'),
      textInsert: db.prepare('INSERT INTO kn_text (rowid, content, ns_id, live) VALUES (?, ?, ?, ?)'),
      textLive: db.prepare('UPDATE kn_text SET live = ? WHERE rowid = ?'),
      textFromVersions: db.prepare(
        `INSERT INTO kn_text (rowid, content, ns_id, live)
         SELECT vid, content, ns_id, tx_to = ${OPEN_TIME} AND retracted = 0 FROM kn_versions WHERE vid BETWEEN ? AND ?`,
      ),
      counts: db.prepare(
        `SELECT count(DISTINCT v.node_id) AS nodes, count(*) AS versions FROM kn_versions v JOIN kn_namespaces n ON n.id = v.ns_id WHERE n.tenant = ?`,
      ),
    };
  }

  /**
   * Runs `fn` in one transaction (nested calls join the outer one). An outermost one pays the text
   * index's merge work its own text rows added, plus a bounded share of older debt (docs/adr/0207).
   */
  transaction<T>(fn: () => T): T {
    if (this.#db.inTransaction) return this.#tx(fn) as T;
    return this.#tx(() => {
      const mark = this.textMerge.mark();
      const value = fn();
      this.textMerge.afterWrite(mark);
      return value;
    }) as T;
  }

  /**
   * Runs `fn` (inside an open transaction) with the text rows of the versions it inserts deferred to
   * its end, then inserts them in one run, each from its version row as it then is (docs/adr/0164).
   * FTS5 flushes its pending terms to a new segment at every savepoint, so text rows inserted one per
   * savepoint (one per group-commit job) cost several times more than the same rows in one run. A
   * version rolled back with its job's savepoint has no row left, so it gets no text row; one closed
   * later in `fn` gets its text row with `live = 0`. Nothing inside `fn` may read `kn_text`, nor
   * delete a namespace (namespace rows found are remembered until the end of `fn`, see `namespace`).
   */
  deferText<T>(fn: () => T): T {
    if (this.#pendingText !== undefined) return fn();
    const pending = new Set<number>();
    const mark = this.textMerge.mark();
    this.#pendingText = pending;
    this.#namespaces = new Map();
    let value: T;
    try {
      value = fn();
    } finally {
      this.#pendingText = undefined;
      this.#namespaces = undefined;
    }
    // One statement per run of consecutive version ids (a group's versions are mostly one run): every
    // id of a run was recorded, so the range holds no version that is not pending.
    const vids = [...pending].sort((a, b) => a - b);
    for (let i = 0; i < vids.length;) {
      let j = i;
      while (j + 1 < vids.length && vids[j + 1] === vids[j]! + 1) j++;
      this.#s.textFromVersions.run(vids[i], vids[j]);
      i = j + 1;
    }
    // The group's text rows become one segment here, and the merge work the group added is paid in the
    // same transaction, in a slice of its size (docs/adr/0207); an empty group pays older debt.
    this.textMerge.afterWrite(mark);
    return value;
  }

  /**
   * A namespace by tenant and name. Inside `deferText` (a group commit) a row once found is
   * remembered until its end: a group's jobs only write nodes, and a namespace row found in its
   * transaction stays there until it commits (only a found row is kept, never one a job creates, which
   * its savepoint may still undo). Every write of a group used to look its namespace up again.
   */
  namespace(tenant: string, name: string): NamespaceRow | undefined {
    const cache = this.#namespaces;
    const key = cache === undefined ? '' : `${tenant}\u0000${name}`;
    const cached = cache?.get(key);
    if (cached !== undefined) return cached;
    const row = this.#s.nsGet.get(tenant, name) as NamespaceRow | undefined;
    if (row !== undefined) cache?.set(key, row);
    return row;
  }

  /** Every namespace of every tenant. */
  allNamespaces(): NamespaceRow[] {
    return this.#s.nsAll.all() as NamespaceRow[];
  }

  createNamespace(tenant: string, name: string, mode: string, now: number): NamespaceRow {
    return this.#s.nsInsert.get(tenant, name, mode, now) as NamespaceRow;
  }

  /** Namespace, node and version counts of a tenant. */
  counts(tenant: string): { namespaces: number; nodes: number; versions: number } {
    const ns = (this.#s.nsCount.get(tenant) as { n: number }).n;
    const c = this.#s.counts.get(tenant) as { nodes: number; versions: number };
    return { namespaces: ns, nodes: c.nodes, versions: c.versions };
  }

  node(
    id: string,
  ): { id: string; ns_id: number; request_id: string | null; created_at: number; last_version: number } | undefined {
    return this.#s.nodeGet.get(id) as
      { id: string; ns_id: number; request_id: string | null; created_at: number; last_version: number } | undefined;
  }

  nodeByRequest(nsId: number, requestId: string): string | undefined {
    return (this.#s.nodeByRequest.get(nsId, requestId) as { id: string } | undefined)?.id;
  }

  createNode(id: string, nsId: number, requestId: string | null, now: number): void {
    this.#s.nodeInsert.run(id, nsId, requestId, now);
  }

  /**
   * Creates a node (created at the version's `tx_from`) with its first version, numbered 1, with its
   * support rows and text row: `createNode` then `insertVersion` without the version counter's bump.
   */
  insertFirstVersion(requestId: string | null, version: NewVersion, sources: readonly string[]): VersionRow {
    this.#s.nodeInsertFirst.run(version.node_id, version.ns_id, requestId, version.tx_from);
    return this.#insertNumbered(version, 1, sources);
  }

  /** Inserts a version (numbered after the node's last), its support rows and its text row. */
  insertVersion(version: NewVersion, sources: readonly string[]): VersionRow {
    this.#s.nodeBump.run(version.node_id);
    const number = (this.#s.nodeLastVersion.get(version.node_id) as { last_version: number }).last_version;
    return this.#insertNumbered(version, number, sources);
  }

  #insertNumbered(version: NewVersion, number: number, sources: readonly string[]): VersionRow {
    const v = version;
    const vid = Number(
      this.#s.versionInsert.run(
        v.node_id,
        v.ns_id,
        number,
        v.content,
        v.labels,
        v.properties,
        v.confidence,
        v.utility,
        v.mem_type,
        v.model_id,
        v.fingerprint,
        v.claim_key,
        v.claim_value,
        v.dims,
        v.valid_from,
        v.valid_to,
        v.tx_from,
        v.tx_to,
        v.retracted,
        v.change,
      ).lastInsertRowid,
    );
    for (const source of sources) this.#s.supportInsert.run(vid, source);
    if (this.#pendingText !== undefined) this.#pendingText.add(vid);
    else {
      const live = version.tx_to === OPEN_TIME && version.retracted === 0 ? 1 : 0;
      this.#s.textInsert.run(vid, version.content, version.ns_id, live);
    }
    return versionRow(vid, number, version);
  }

  /** Closes a version in transaction time; false when it was already closed. */
  closeVersion(vid: number, txTo: number): boolean {
    const changed = this.#s.versionClose.run(txTo, vid, OPEN_TIME).changes === 1;
    if (changed) this.#s.textLive.run(0, vid);
    return changed;
  }

  version(vid: number): VersionRow | undefined {
    return this.#s.versionGet.get(vid) as VersionRow | undefined;
  }

  /** Versions by id, in the order asked (missing ids skipped). */
  versions(vids: readonly number[]): VersionRow[] {
    if (vids.length === 0) return [];
    const out = new Map<number, VersionRow>();
    for (let i = 0; i < vids.length; i += 500) {
      const chunk = vids.slice(i, i + 500);
      const rows = this.#inList('SELECT * FROM kn_versions WHERE vid IN', chunk.length).all(...chunk) as VersionRow[];
      for (const row of rows) out.set(row.vid, row);
    }
    return vids.flatMap((v) => out.get(v) ?? []);
  }

  /** The statement `${sql} (?, …)` with `n` placeholders (n ≤ 500), prepared once. */
  #inList(sql: string, n: number): Database.Statement {
    const key = `${sql}:${n}`;
    let stmt = this.#inStmts.get(key);
    if (!stmt) {
      stmt = this.#db.prepare(`${sql} (${Array.from({ length: n }, () => '?').join(',')})`);
      this.#inStmts.set(key, stmt);
    }
    return stmt;
  }

  /** Every version of a node, oldest first. */
  history(nodeId: string): VersionRow[] {
    return this.#s.versionsOfNode.all(nodeId) as VersionRow[];
  }

  /** Versions of a node still open in transaction time, by valid_from. */
  current(nodeId: string): VersionRow[] {
    return this.#s.currentOfNode.all(nodeId) as VersionRow[];
  }

  /** The version of a node visible at valid time `valid` as known at transaction time `known`. */
  visible(nodeId: string, valid: number, known: number): VersionRow | undefined {
    return this.#s.visibleOfNode.get({ node: nodeId, valid, known }) as VersionRow | undefined;
  }

  /** A live current version with this fingerprint whose validity has not ended by `now`. */
  byFingerprint(nsId: number, fingerprint: string, now: number): VersionRow | undefined {
    return this.#s.byFingerprint.get(nsId, fingerprint, now) as VersionRow | undefined;
  }

  /** A node with this fingerprint written at or after `since`, if any. */
  laterWithFingerprint(nsId: number, fingerprint: string, since: number): string | undefined {
    return (this.#s.laterFingerprint.get(nsId, fingerprint, since) as { node_id: string } | undefined)?.node_id;
  }

  /** Live current versions making a claim under `claimKey`. */
  byClaim(nsId: number, claimKey: string, now: number): VersionRow[] {
    return this.#s.byClaim.all(nsId, claimKey, now) as VersionRow[];
  }

  /** Sources supporting a version. */
  support(vid: number): string[] {
    return (this.#s.supportOf.all(vid) as { source_id: string }[]).map((r) => r.source_id);
  }

  /** Sources supporting each of several versions. */
  supportMany(vids: readonly number[]): Map<number, string[]> {
    const out = new Map<number, string[]>();
    for (let i = 0; i < vids.length; i += 500) {
      const chunk = vids.slice(i, i + 500);
      const rows = this.#inList('SELECT vid, source_id FROM kn_support WHERE vid IN', chunk.length).all(...chunk) as {
        vid: number;
        source_id: string;
      }[];
      for (const row of rows) {
        const list = out.get(row.vid) ?? [];
        list.push(row.source_id);
        out.set(row.vid, list);
      }
    }
    return out;
  }

  /** Newest live versions whose content contains `needle` (case-insensitive), by a bounded scan. */
  scanContains(nsId: number, needle: string, limit: number): VersionRow[] {
    return this.#db
      .prepare(
        `SELECT * FROM kn_versions WHERE ns_id = ? AND tx_to = ${OPEN_TIME} AND retracted = 0 AND instr(lower(content), lower(?)) > 0 ORDER BY vid DESC LIMIT ?`,
      )
      .all(nsId, needle, limit) as VersionRow[];
  }

  /** Every live version of a namespace, newest first (the naive baseline a text index replaces). */
  *scanLive(nsId: number): Generator<VersionRow> {
    yield* this.#db
      .prepare(`SELECT * FROM kn_versions WHERE ns_id = ? AND tx_to = ${OPEN_TIME} AND retracted = 0 ORDER BY vid DESC`)
      .iterate(nsId) as Iterable<VersionRow>;
  }

  /**
   * Lexical candidates: ids of the newest matching versions, at most `cap` of them. No bm25 here:
   * FTS5's bm25 walks the whole doclist of every phrase to count documents, which is what makes
   * common terms slow at scale; ranking happens on the capped set (docs/adr/0023).
   */
  textSearch(match: string, filter: TextFilter, cap: number): number[] {
    const live = filter.liveOnly ? 'AND live = 1' : '';
    const rows = this.#db
      .prepare(
        `SELECT rowid AS vid FROM kn_text WHERE kn_text MATCH ? AND ns_id = ? ${live} ORDER BY rowid DESC LIMIT ?`,
      )
      .all(match, filter.nsId, cap) as { vid: number }[];
    return rows.map((r) => r.vid);
  }

  /**
   * Lexical candidates ranked by FTS5's bm25, best first, at most `cap`. Reads the whole doclist of
   * every term, so callers pass selective terms only and handle very common ones otherwise
   * (docs/adr/0023).
   */
  textSearchRanked(match: string, filter: TextFilter, cap: number): number[] {
    const live = filter.liveOnly ? 'AND live = 1' : '';
    const rows = this.#db
      .prepare(`SELECT rowid AS vid FROM kn_text WHERE kn_text MATCH ? AND ns_id = ? ${live} ORDER BY rank LIMIT ?`)
      .all(match, filter.nsId, cap) as { vid: number }[];
    return rows.map((r) => r.vid);
  }
}
