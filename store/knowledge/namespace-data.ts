/**
 * The rows of one namespace across every table of `knowledge.db`: found from the schema (every table
 * with an `ns_id` column, so a table a later migration adds is covered without a list to keep), purged
 * and copied between the live store and a backup file attached as schema `bak` (docs/adr/0174).
 *
 * Special cases: `kn_support` rows belong to versions (no `ns_id`); the vector tables (`kn_vec_<dims>`)
 * are virtual; the text index `kn_text` is derived from the versions and rebuilt, never copied.
 */
import type { Db } from '../database.js';
import { OPEN_TIME } from './rows.js';
import { textMergeOf } from './text-merge.js';

/** A plain table holding rows of namespaces, with what a copy must do to its key columns. */
export interface NamespaceTable {
  readonly name: string;
  readonly columns: readonly string[];
  /** An `INTEGER PRIMARY KEY` named `id`: reassigned on restore (inserted in the same order), copied as is in a backup. */
  readonly autoId: boolean;
  /** The table has a rowid to page by (not `WITHOUT ROWID`). */
  readonly hasRowid: boolean;
}

/** Parents first: versions need their node, support needs its version. */
const FIRST = ['kn_nodes', 'kn_versions'];

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** Tables of `schema` with an `ns_id` column (not virtual, not a virtual table's shadow), parents first. */
export function namespaceTables(db: Db, schema = 'main'): NamespaceTable[] {
  const rows = db
    .prepare(`SELECT name, sql FROM ${schema}.sqlite_master WHERE type = 'table' AND name LIKE 'kn\\_%' ESCAPE '\\'`)
    .all() as { name: string; sql: string }[];
  const tables: NamespaceTable[] = [];
  for (const row of rows) {
    if (/^CREATE VIRTUAL/i.test(row.sql) || /^kn_vec_\d+_|^kn_text_/.test(row.name)) continue;
    const info = db.prepare(`PRAGMA ${schema}.table_info(${quote(row.name)})`).all() as {
      name: string;
      type: string;
      pk: number;
    }[];
    if (!info.some((c) => c.name === 'ns_id')) continue;
    tables.push({
      name: row.name,
      columns: info.map((c) => c.name),
      autoId: info.some((c) => c.name === 'id' && c.pk === 1 && /^integer$/i.test(c.type)),
      hasRowid: !/WITHOUT\s+ROWID\s*$/i.test(row.sql.trim()),
    });
  }
  const rank = (n: string) => (FIRST.includes(n) ? FIRST.indexOf(n) : FIRST.length);
  return tables.sort((a, b) => rank(a.name) - rank(b.name) || a.name.localeCompare(b.name));
}

/** Vector dimensions that have a table in `schema`. */
export function vectorDimensions(db: Db, schema = 'main'): number[] {
  return (db.prepare(`SELECT dims FROM ${schema}.kn_vector_tables ORDER BY dims`).all() as { dims: number }[]).map(
    (r) => r.dims,
  );
}

/** Row counts of one namespace (nodes, versions, edges, vectors): what a backup or restore reports. */
export interface NamespaceCounts {
  readonly nodes: number;
  readonly versions: number;
  readonly edges: number;
  readonly vectors: number;
}

/**
 * The queries of {@link namespaceCounts} (each `SELECT count(*) AS n … WHERE ns_id = ?`), for a
 * connection of another thread to run; {@link foldNamespaceCounts} reads their answers.
 */
export function namespaceCountQueries(db: Db, schema = 'main'): string[] {
  return [
    `SELECT count(*) AS n FROM ${schema}.kn_nodes WHERE ns_id = ?`,
    `SELECT count(*) AS n FROM ${schema}.kn_versions WHERE ns_id = ?`,
    `SELECT count(*) AS n FROM ${schema}.kn_edges WHERE ns_id = ?`,
    ...vectorDimensions(db, schema).map((dims) => `SELECT count(*) AS n FROM ${schema}.kn_vec_${dims} WHERE ns_id = ?`),
  ];
}

/** The counts from the answers to {@link namespaceCountQueries}, in their order. */
export function foldNamespaceCounts(answers: readonly number[]): NamespaceCounts {
  const [nodes = 0, versions = 0, edges = 0, ...vectors] = answers;
  return { nodes, versions, edges, vectors: vectors.reduce((a, b) => a + b, 0) };
}

/** {@link NamespaceCounts} of namespace `nsId`, on this thread. */
export function namespaceCounts(db: Db, nsId: number, schema = 'main'): NamespaceCounts {
  return foldNamespaceCounts(
    namespaceCountQueries(db, schema).map((sql) => (db.prepare(sql).get(nsId) as { n: number }).n),
  );
}

/**
 * Deletes every row of namespace `nsId` from `main`, and the namespace itself when `dropNamespace`.
 * Call inside a transaction.
 */
export function purgeNamespace(db: Db, nsId: number, dropNamespace: boolean): void {
  const versions = 'SELECT vid FROM kn_versions WHERE ns_id = ?';
  db.prepare(`DELETE FROM kn_support WHERE vid IN (${versions})`).run(nsId);
  db.prepare(`DELETE FROM kn_text WHERE rowid IN (${versions})`).run(nsId);
  for (const dims of vectorDimensions(db))
    db.prepare(`DELETE FROM kn_vec_${dims} WHERE vid IN (${versions})`).run(nsId);
  const tables = namespaceTables(db).reverse();
  for (const t of tables) db.prepare(`DELETE FROM ${quote(t.name)} WHERE ns_id = ?`).run(nsId);
  if (dropNamespace) db.prepare('DELETE FROM kn_namespaces WHERE id = ?').run(nsId);
}

/** Rebuilds the text index rows of a namespace from its versions (the rule of NodeStore.insertVersion). */
function rebuildText(db: Db, nsId: number): void {
  const merge = textMergeOf(db);
  const mark = merge.mark();
  db.prepare(
    `INSERT INTO kn_text (rowid, content, ns_id, live)
       SELECT vid, content, ns_id, CASE WHEN tx_to = ${OPEN_TIME} AND retracted = 0 THEN 1 ELSE 0 END
       FROM kn_versions WHERE ns_id = ?`,
  ).run(nsId);
  // Its merge work, paid in the same transaction, in proportion to the rows it wrote (docs/adr/0207).
  merge.afterWrite(mark);
}

/** The largest version id `main` has used (rows or the AUTOINCREMENT sequence). */
function highestVid(db: Db): number {
  const rows = (db.prepare('SELECT COALESCE(max(vid), 0) AS n FROM kn_versions').get() as { n: number }).n;
  const seq = db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'kn_versions'").get() as
    { seq: number } | undefined;
  return Math.max(rows, seq?.seq ?? 0);
}

/**
 * Copies namespace `fromNsId` of the attached backup `bak` into `main` as namespace `toNsId`, which
 * must be empty (purged). Version ids are shifted past every id `main` has used, so they never meet
 * another namespace's; other integer ids are reassigned in their original order. Call inside a
 * transaction, with the vector tables of the backup's dimensions present in `main`.
 */
export function copyNamespaceIn(db: Db, fromNsId: number, toNsId: number): void {
  const offset = highestVid(db);
  const mainTables = new Map(namespaceTables(db).map((t) => [t.name, t]));
  for (const t of namespaceTables(db, 'bak')) {
    const target = mainTables.get(t.name);
    if (!target) continue;
    // Columns both have (an older backup was migrated to this schema before it gets here).
    const columns = target.columns.filter((c) => t.columns.includes(c) && !(target.autoId && c === 'id'));
    const select = columns.map((c) =>
      c === 'ns_id' ? '?' : c === 'vid' && t.name === 'kn_versions' ? `vid + ${offset}` : quote(c),
    );
    const order = t.hasRowid ? ' ORDER BY rowid' : '';
    db.prepare(
      `INSERT INTO main.${quote(t.name)} (${columns.map(quote).join(', ')})
         SELECT ${select.join(', ')} FROM bak.${quote(t.name)} WHERE ns_id = ?${order}`,
    ).run(toNsId, fromNsId);
  }
  db.prepare(
    `INSERT INTO main.kn_support (vid, source_id)
       SELECT s.vid + ${offset}, s.source_id FROM bak.kn_support s JOIN bak.kn_versions v ON v.vid = s.vid WHERE v.ns_id = ?`,
  ).run(fromNsId);
  for (const dims of vectorDimensions(db, 'bak')) {
    db.prepare(
      `INSERT INTO main.kn_vec_${dims} (vid, ns_id, embedding, valid_from, valid_to, tx_from, tx_to, retracted)
         SELECT vid + ${offset}, ?, embedding, valid_from, valid_to, tx_from, tx_to, retracted FROM bak.kn_vec_${dims} WHERE ns_id = ?`,
    ).run(BigInt(toNsId), BigInt(fromNsId)); // vec0 wants integers bound as BigInt
  }
  rebuildText(db, toNsId);
}

/** Rows copied per step of {@link copyNamespaceOut}. */
export const COPY_CHUNK = 500;

/**
 * The steps that copy namespace `nsId` of `main` into the attached, migrated, empty backup `bak`
 * with its ids unchanged, each step bounded to {@link COPY_CHUNK} rows so a caller can yield to the
 * event loop between them. Run every step inside one read transaction of `main` (a snapshot).
 */
export function* copyNamespaceOut(db: Db, nsId: number): Generator<number, void, void> {
  db.prepare('INSERT INTO bak.kn_namespaces SELECT * FROM main.kn_namespaces WHERE id = ?').run(nsId);
  for (const t of namespaceTables(db)) {
    const name = quote(t.name);
    if (!t.hasRowid) {
      yield db.prepare(`INSERT INTO bak.${name} SELECT * FROM main.${name} WHERE ns_id = ?`).run(nsId).changes;
      continue;
    }
    let after = 0;
    for (;;) {
      const last = db
        .prepare(
          `SELECT max(r) AS r FROM (SELECT rowid AS r FROM main.${name} WHERE ns_id = ? AND rowid > ? ORDER BY rowid LIMIT ${COPY_CHUNK})`,
        )
        .get(nsId, after) as { r: number | null };
      if (last.r === null) break;
      const copied = db
        .prepare(`INSERT INTO bak.${name} SELECT * FROM main.${name} WHERE ns_id = ? AND rowid > ? AND rowid <= ?`)
        .run(nsId, after, last.r).changes;
      if (t.name === 'kn_versions') {
        // The backup's text index, chunk by chunk, so it is a working store on its own (a restore rebuilds its own).
        db.prepare(
          `INSERT INTO bak.kn_text (rowid, content, ns_id, live)
             SELECT vid, content, ns_id, CASE WHEN tx_to = ${OPEN_TIME} AND retracted = 0 THEN 1 ELSE 0 END
             FROM bak.kn_versions WHERE ns_id = ? AND vid > ? AND vid <= ?`,
        ).run(nsId, after, last.r);
        db.prepare(
          `INSERT INTO bak.kn_support SELECT s.* FROM main.kn_support s
             WHERE s.vid IN (SELECT vid FROM main.kn_versions WHERE ns_id = ? AND vid > ? AND vid <= ?)`,
        ).run(nsId, after, last.r);
        for (const dims of vectorDimensions(db)) {
          db.prepare(
            `INSERT INTO bak.kn_vec_${dims} (vid, ns_id, embedding, valid_from, valid_to, tx_from, tx_to, retracted)
               SELECT vid, ns_id, embedding, valid_from, valid_to, tx_from, tx_to, retracted FROM main.kn_vec_${dims}
               WHERE vid IN (SELECT vid FROM main.kn_versions WHERE ns_id = ? AND vid > ? AND vid <= ?)`,
          ).run(nsId, after, last.r);
        }
      }
      after = last.r;
      yield copied;
    }
  }
}
