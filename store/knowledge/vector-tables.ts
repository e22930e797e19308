/**
 * sqlite-vec `vec0` tables, one per vector dimension, created on first use.
 *
 * Namespace is a partition key and the bi-temporal bounds plus the retraction flag are metadata
 * columns, so a KNN query filters inside the scan instead of after it (a join after `k` rows
 * silently returns too few). Integers bound to vec0 must be BigInt.
 */
import type Database from 'better-sqlite3';
import type { Db } from '../database.js';

/** Largest vector dimension accepted. */
export const MAX_DIMENSIONS = 4096;

/** Metadata stored beside each vector. */
export interface VectorMeta {
  readonly nsId: number;
  readonly validFrom: number;
  readonly validTo: number;
  readonly txFrom: number;
  readonly txTo: number;
  readonly retracted: boolean;
}

/** One row read back from a vector table. */
export interface VectorRecord extends VectorMeta {
  readonly vid: number;
  readonly vector: Float32Array;
}

/** Filters applied inside the KNN scan. */
export interface VectorFilter {
  readonly nsId: number;
  readonly validAt: number;
  readonly knownAt: number;
  readonly includeRetracted: boolean;
}

function tableName(dims: number): string {
  if (!Number.isInteger(dims) || dims < 1 || dims > MAX_DIMENSIONS)
    throw new Error(`vector dimension ${dims} is outside 1-${MAX_DIMENSIONS}`);
  return `kn_vec_${dims}`;
}

function blob(v: Float32Array): Buffer {
  return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
}

/** Vector tables of one database. */
export class VectorTables {
  readonly #db: Db;
  readonly #known = new Set<number>();
  /** Insert statements by dimension, prepared once instead of at every write (docs/adr/0166). */
  readonly #inserts = new Map<number, Database.Statement>();

  constructor(db: Db) {
    this.#db = db;
    for (const row of db.prepare('SELECT dims FROM kn_vector_tables').all() as { dims: number }[])
      this.#known.add(row.dims);
  }

  /** Dimensions that have a table. */
  dimensions(): number[] {
    return [...this.#known].sort((a, b) => a - b);
  }

  /** Creates the table for `dims` when missing (call inside the write transaction). */
  ensure(dims: number): void {
    if (this.#known.has(dims)) return;
    const name = tableName(dims);
    this.#db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS ${name} USING vec0(
      vid integer primary key,
      ns_id integer partition key,
      embedding float[${dims}] distance_metric=cosine,
      valid_from integer,
      valid_to integer,
      tx_from integer,
      tx_to integer,
      retracted integer
    )`);
    this.#db.prepare('INSERT OR IGNORE INTO kn_vector_tables (dims, created_at) VALUES (?, ?)').run(dims, Date.now());
    this.#known.add(dims);
  }

  /** Stores the vector of version `vid`. */
  insert(vid: number, vector: Float32Array, meta: VectorMeta): void {
    this.ensure(vector.length);
    let insert = this.#inserts.get(vector.length);
    if (insert === undefined) {
      insert = this.#db.prepare(
        `INSERT INTO ${tableName(vector.length)} (vid, ns_id, embedding, valid_from, valid_to, tx_from, tx_to, retracted) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      );
      this.#inserts.set(vector.length, insert);
    }
    insert.run(
      BigInt(vid),
      BigInt(meta.nsId),
      blob(vector),
      BigInt(meta.validFrom),
      BigInt(meta.validTo),
      BigInt(meta.txFrom),
      BigInt(meta.txTo),
      meta.retracted ? 1n : 0n,
    );
  }

  /** Closes version `vid` in transaction time. */
  closeTx(dims: number, vid: number, txTo: number): void {
    this.#db.prepare(`UPDATE ${tableName(dims)} SET tx_to = ? WHERE vid = ?`).run(BigInt(txTo), BigInt(vid));
  }

  /** The stored vector of version `vid`, or undefined. */
  get(dims: number, vid: number): Float32Array | undefined {
    if (!this.#known.has(dims)) return undefined;
    const row = this.#db.prepare(`SELECT embedding FROM ${tableName(dims)} WHERE vid = ?`).get(BigInt(vid)) as
      { embedding: Buffer } | undefined;
    return row === undefined
      ? undefined
      : new Float32Array(
          row.embedding.buffer.slice(row.embedding.byteOffset, row.embedding.byteOffset + row.embedding.byteLength),
        );
  }

  /** Every stored vector of dimension `dims`, for rebuilding the in-memory index. */
  *all(dims: number): Generator<VectorRecord> {
    if (!this.#known.has(dims)) return;
    const stmt = this.#db
      .prepare(`SELECT vid, ns_id, embedding, valid_from, valid_to, tx_from, tx_to, retracted FROM ${tableName(dims)}`)
      .safeIntegers(true);
    for (const row of stmt.iterate() as Iterable<Record<string, bigint | Buffer>>) {
      const buf = row.embedding as Buffer;
      yield {
        vid: Number(row.vid),
        nsId: Number(row.ns_id),
        vector: new Float32Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength)),
        validFrom: Number(row.valid_from),
        validTo: Number(row.valid_to),
        txFrom: Number(row.tx_from),
        txTo: Number(row.tx_to),
        retracted: Number(row.retracted) !== 0,
      };
    }
  }

  /** Plain exact KNN over every stored vector of the dimension, no filters (the benchmark baseline). */
  knnPlain(query: Float32Array, k: number): { vid: number; distance: number }[] {
    if (!this.#known.has(query.length)) return [];
    const rows = this.#db
      .prepare(
        `SELECT vid, distance FROM ${tableName(query.length)} WHERE embedding MATCH ? AND k = ? ORDER BY distance`,
      )
      .all(blob(query), BigInt(k)) as { vid: number | bigint; distance: number }[];
    return rows.map((r) => ({ vid: Number(r.vid), distance: r.distance }));
  }

  /** Exact KNN by cosine distance inside sqlite-vec, with every filter in the scan. */
  knn(query: Float32Array, k: number, filter: VectorFilter): { vid: number; distance: number }[] {
    if (!this.#known.has(query.length)) return [];
    const retracted = filter.includeRetracted ? '' : 'AND retracted = 0';
    const rows = this.#db
      .prepare(
        `SELECT vid, distance FROM ${tableName(query.length)}
        WHERE embedding MATCH ? AND k = ? AND ns_id = ?
          AND valid_from <= ? AND valid_to > ? AND tx_from <= ? AND tx_to > ? ${retracted}
        ORDER BY distance`,
      )
      .all(
        blob(query),
        BigInt(k),
        BigInt(filter.nsId),
        BigInt(filter.validAt),
        BigInt(filter.validAt),
        BigInt(filter.knownAt),
        BigInt(filter.knownAt),
      ) as { vid: number | bigint; distance: number }[];
    return rows.map((r) => ({ vid: Number(r.vid), distance: r.distance }));
  }
}
