/**
 * In-memory approximate vector index kept in step with the sqlite-vec tables (docs/adr/0021).
 *
 * Every vector version is held twice in memory: unit-length float32 for exact rescoring and a
 * sign-bit code (sqlite-vec's `vec_quantize_binary`) for a Hamming prefilter. A query scans the
 * codes of rows passing the namespace, bi-temporal and retraction filters, keeps the
 * `rescore` closest by Hamming distance, and rescoring them by exact cosine gives the top k.
 * The tables stay the durable truth; the index is rebuilt from them at start.
 */
import { signCode } from '../../domain/knowledge/retrieval/vector-math.js';
import type { VectorFilter, VectorMeta, VectorRecord } from '../../store/knowledge/vector-tables.js';
import { OPEN_TIME } from '../../store/knowledge/rows.js';

/** One exact-rescored hit. */
export interface VectorHit {
  readonly vid: number;
  /** Cosine similarity in [-1, 1]. */
  readonly cosine: number;
}

/** Options of a query. */
export interface VectorQueryOptions {
  /** Hamming candidates rescored exactly. @default max(8 · k, 512), or max(8 · k, 1024) up to 20,000 rows */
  readonly rescore?: number;
  /** Skip the two-stage Hamming scan even on a large index. @default false */
  readonly singleStage?: boolean;
}

/** The index of one dimension. */
export class DimensionIndex {
  readonly dims: number;
  readonly #words: number;
  #size = 0;
  #capacity = 0;
  #vids = new Float64Array(0);
  /** Namespace id when the row is open in both times and not retracted, else -1 - namespace id. */
  #nsOpen = new Int32Array(0);
  #maxValidFrom = -Infinity;
  #maxTxFrom = -Infinity;
  #validFrom = new Float64Array(0);
  #validTo = new Float64Array(0);
  #txFrom = new Float64Array(0);
  #txTo = new Float64Array(0);
  #retracted = new Uint8Array(0);
  #codes = new Uint32Array(0);
  /** The first PREFIX_WORDS words of every code, contiguous, for the first Hamming stage. */
  #prefix = new Uint32Array(0);
  /**
   * The unit vectors, {@link VECTOR_CHUNK_ROWS} rows per array. They are ~94% of the index's bytes
   * (1.5 KiB a 384-dim row): chunks are added, never copied, so growing never copies them on the
   * event loop (a doubling copied 12-25 MB at 8-16K rows, docs/adr/0205).
   */
  readonly #vectorChunks: Float32Array[] = [];
  #slots = new Map<number, number>();
  #dist = new Uint16Array(0);

  constructor(dims: number) {
    this.dims = dims;
    this.#words = Math.ceil(dims / 32);
  }

  get size(): number {
    return this.#size;
  }

  #grow(): void {
    const capacity = Math.max(1024, this.#capacity * 2);
    const grow = <T extends Float64Array | Int32Array | Uint8Array | Uint32Array | Float32Array | Uint16Array>(
      old: T,
      make: (n: number) => T,
      per = 1,
    ): T => {
      const next = make(capacity * per);
      next.set(old);
      return next;
    };
    this.#vids = grow(this.#vids, (n) => new Float64Array(n));
    this.#nsOpen = grow(this.#nsOpen, (n) => new Int32Array(n));
    this.#validFrom = grow(this.#validFrom, (n) => new Float64Array(n));
    this.#validTo = grow(this.#validTo, (n) => new Float64Array(n));
    this.#txFrom = grow(this.#txFrom, (n) => new Float64Array(n));
    this.#txTo = grow(this.#txTo, (n) => new Float64Array(n));
    this.#retracted = grow(this.#retracted, (n) => new Uint8Array(n));
    this.#codes = grow(this.#codes, (n) => new Uint32Array(n), this.#words);
    this.#prefix = grow(this.#prefix, (n) => new Uint32Array(n), PREFIX_WORDS);
    this.#dist = new Uint16Array(capacity);
    this.#capacity = capacity;
  }

  /** Adds a vector (normalized here) with its metadata. */
  add(vid: number, vector: ArrayLike<number>, meta: VectorMeta): void {
    if (vector.length !== this.dims) throw new Error(`vector has ${vector.length} dimensions, index has ${this.dims}`);
    if (this.#slots.has(vid)) return;
    if (this.#size === this.#capacity) this.#grow();
    const slot = this.#size++;
    let sum = 0;
    for (let i = 0; i < this.dims; i++) sum += vector[i]! * vector[i]!;
    const norm = Math.sqrt(sum) || 1;
    const chunk = slot >>> VECTOR_CHUNK_BITS;
    if (chunk === this.#vectorChunks.length) this.#vectorChunks.push(new Float32Array(VECTOR_CHUNK_ROWS * this.dims));
    const vectors = this.#vectorChunks[chunk]!;
    const base = (slot & VECTOR_CHUNK_MASK) * this.dims;
    for (let i = 0; i < this.dims; i++) vectors[base + i] = vector[i]! / norm;
    signCode(vector, this.#codes, slot * this.#words);
    for (let w = 0; w < PREFIX_WORDS && w < this.#words; w++)
      this.#prefix[slot * PREFIX_WORDS + w] = this.#codes[slot * this.#words + w]!;
    this.#vids[slot] = vid;
    const open = meta.validTo >= OPEN_TIME && meta.txTo >= OPEN_TIME && !meta.retracted;
    this.#nsOpen[slot] = open ? meta.nsId : -1 - meta.nsId;
    this.#maxValidFrom = Math.max(this.#maxValidFrom, meta.validFrom);
    this.#maxTxFrom = Math.max(this.#maxTxFrom, meta.txFrom);
    this.#validFrom[slot] = meta.validFrom;
    this.#validTo[slot] = meta.validTo;
    this.#txFrom[slot] = meta.txFrom;
    this.#txTo[slot] = meta.txTo;
    this.#retracted[slot] = meta.retracted ? 1 : 0;
    this.#slots.set(vid, slot);
  }

  /** Records that version `vid` was closed in transaction time. */
  closeTx(vid: number, txTo: number): void {
    const slot = this.#slots.get(vid);
    if (slot === undefined) return;
    this.#txTo[slot] = txTo;
    const key = this.#nsOpen[slot]!;
    if (key >= 0) this.#nsOpen[slot] = -1 - key;
  }

  /**
   * Forgets version `vid` (its row was deleted by lifecycle or a restore): its slot stays, marked with
   * a key no namespace filter matches, and is never returned again.
   */
  remove(vid: number): void {
    const slot = this.#slots.get(vid);
    if (slot === undefined) return;
    this.#nsOpen[slot] = REMOVED;
    this.#slots.delete(vid);
  }

  /** The unit vector of `vid`, or undefined. */
  vector(vid: number): Float32Array | undefined {
    const slot = this.#slots.get(vid);
    if (slot === undefined) return undefined;
    const base = (slot & VECTOR_CHUNK_MASK) * this.dims;
    return this.#vectorChunks[slot >>> VECTOR_CHUNK_BITS]!.slice(base, base + this.dims);
  }

  /**
   * Approximate top-k by cosine among rows passing `filter`. `query` must be unit length.
   * Large indexes use two Hamming stages: the first 96 bits of every passing row, then all bits of
   * the closest sixteenth (at least 8 · rescore rows), then exact cosine of the `rescore` closest.
   */
  search(query: Float32Array, k: number, filter: VectorFilter, options: VectorQueryOptions = {}): VectorHit[] {
    const words = this.#words;
    const size = this.#size;
    const qc = signCode(query);
    const dist = this.#dist;
    const skip = this.dims + 1;
    const { nsId, validAt, knownAt, includeRetracted } = filter;
    const codes = this.#codes;
    const nsOpen = this.#nsOpen;
    const validFrom = this.#validFrom;
    const validTo = this.#validTo;
    const txFrom = this.#txFrom;
    const txTo = this.#txTo;
    const retracted = this.#retracted;
    const large = size > 8 * PREFIX_MIN_ROWS;
    // Small indexes rescore more: with few rows per topic, Hamming ranks weak neighbours poorly.
    const rescore = Math.max(options.rescore ?? Math.max(8 * k, large ? 512 : 1024), k);
    const twoStage = large && words >= 3 * PREFIX_WORDS && options.singleStage !== true; // PREFIX_WORDS is 3: see the inlined first stage
    const prefix = twoStage ? PREFIX_WORDS : words;
    const firstCodes = twoStage ? this.#prefix : codes;
    // Open rows need no time checks when the anchors are after every row's start (the usual "now").
    const fast = validAt >= this.#maxValidFrom && knownAt >= this.#maxTxFrom;
    const closedKey = -1 - nsId;
    const q0 = qc[0] ?? 0;
    const q1 = qc[1] ?? 0;
    const q2 = qc[2] ?? 0;
    let hist = new Uint32Array(this.dims + 2);
    let passing = 0;
    for (let i = 0; i < size; i++) {
      const key = nsOpen[i];
      if (key === nsId) {
        if (!fast && (validFrom[i]! > validAt || txFrom[i]! > knownAt)) {
          dist[i] = skip;
          continue;
        }
      } else if (
        key !== closedKey ||
        validFrom[i]! > validAt ||
        validTo[i]! <= validAt ||
        txFrom[i]! > knownAt ||
        txTo[i]! <= knownAt ||
        (!includeRetracted && retracted[i] === 1)
      ) {
        dist[i] = skip;
        continue;
      }
      let d: number;
      if (twoStage) {
        // The first stage inlined for its fixed three words: this loop runs once per row.
        const o = i * 3;
        let a = firstCodes[o]! ^ q0;
        let b = firstCodes[o + 1]! ^ q1;
        let c = firstCodes[o + 2]! ^ q2;
        a -= (a >>> 1) & 0x55555555;
        a = (a & 0x33333333) + ((a >>> 2) & 0x33333333);
        b -= (b >>> 1) & 0x55555555;
        b = (b & 0x33333333) + ((b >>> 2) & 0x33333333);
        c -= (c >>> 1) & 0x55555555;
        c = (c & 0x33333333) + ((c >>> 2) & 0x33333333);
        let sum = a + b + c;
        sum = (sum & 0x0f0f0f0f) + ((sum >>> 4) & 0x0f0f0f0f);
        d = Math.imul(sum, 0x01010101) >>> 24;
      } else {
        d = popcountXor(firstCodes, i * prefix, qc, 0, prefix);
      }
      dist[i] = d;
      hist[d]!++;
      passing++;
    }
    if (prefix < words && passing > 8 * rescore) {
      const firstThreshold = thresholdFor(hist, Math.max(8 * rescore, Math.ceil(passing / 16)), this.dims);
      hist = new Uint32Array(this.dims + 2);
      passing = 0;
      for (let i = 0; i < size; i++) {
        const d1 = dist[i]!;
        if (d1 > firstThreshold) {
          dist[i] = skip;
          continue;
        }
        let d = d1;
        const o = i * words;
        for (let w = prefix; w + 3 <= words; w += 3) {
          let a = codes[o + w]! ^ qc[w]!;
          let b = codes[o + w + 1]! ^ qc[w + 1]!;
          let c = codes[o + w + 2]! ^ qc[w + 2]!;
          a -= (a >>> 1) & 0x55555555;
          a = (a & 0x33333333) + ((a >>> 2) & 0x33333333);
          b -= (b >>> 1) & 0x55555555;
          b = (b & 0x33333333) + ((b >>> 2) & 0x33333333);
          c -= (c >>> 1) & 0x55555555;
          c = (c & 0x33333333) + ((c >>> 2) & 0x33333333);
          let sum = a + b + c;
          sum = (sum & 0x0f0f0f0f) + ((sum >>> 4) & 0x0f0f0f0f);
          d += Math.imul(sum, 0x01010101) >>> 24;
        }
        if (words % 3 !== 0) d += popcountXor(codes, o, qc, words - (words % 3), words);
        dist[i] = d;
        hist[d]!++;
        passing++;
      }
    }
    // Rescore every row below the threshold distance and, of the rows at it, only enough to fill the budget.
    const threshold = passing > rescore ? thresholdFor(hist, rescore, this.dims) : this.dims;
    let atThreshold = passing > rescore ? rescore - countBelow(hist, threshold) : Number.POSITIVE_INFINITY;
    const hits: VectorHit[] = [];
    const chunks = this.#vectorChunks;
    const dims = this.dims;
    for (let i = 0; i < size; i++) {
      const d = dist[i]!;
      if (d > threshold) continue;
      if (d === threshold) {
        if (atThreshold <= 0) continue;
        atThreshold--;
      }
      const cosine = dotAt(query, chunks[i >>> VECTOR_CHUNK_BITS]!, (i & VECTOR_CHUNK_MASK) * dims, dims);
      hits.push({ vid: this.#vids[i]!, cosine });
    }
    hits.sort((a, b) => b.cosine - a.cosine || a.vid - b.vid);
    return hits.slice(0, k);
  }
}

/** Indexes at most this many rows before the two-stage scan pays off (times 8). */
const PREFIX_MIN_ROWS = 2500;

/** Rows of one chunk of unit vectors (1.5 MiB at 384 dims). */
const VECTOR_CHUNK_BITS = 10;
const VECTOR_CHUNK_ROWS = 1 << VECTOR_CHUNK_BITS;
const VECTOR_CHUNK_MASK = VECTOR_CHUNK_ROWS - 1;

/** Words (32 bits each) of the first Hamming stage. */
const PREFIX_WORDS = 3;

/** Dot product of `q` with the `dims` floats of `vectors` at `offset`, four lanes at a time. */
function dotAt(q: Float32Array, vectors: Float32Array, offset: number, dims: number): number {
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let i = 0;
  for (; i + 4 <= dims; i += 4) {
    s0 += q[i]! * vectors[offset + i]!;
    s1 += q[i + 1]! * vectors[offset + i + 1]!;
    s2 += q[i + 2]! * vectors[offset + i + 2]!;
    s3 += q[i + 3]! * vectors[offset + i + 3]!;
  }
  for (; i < dims; i++) s0 += q[i]! * vectors[offset + i]!;
  return s0 + s1 + s2 + s3;
}

/** Number of rows with a distance below `threshold`. */
function countBelow(hist: Uint32Array, threshold: number): number {
  let n = 0;
  for (let d = 0; d < threshold; d++) n += hist[d]!;
  return n;
}

/** Smallest distance whose cumulative count reaches `count`. */
function thresholdFor(hist: Uint32Array, count: number, max: number): number {
  let acc = 0;
  for (let d = 0; d <= max; d++) {
    acc += hist[d]!;
    if (acc >= count) return d;
  }
  return max;
}

/** Hamming distance of words [from, to) of the code at `offset` to the query code (SWAR popcount). */
function popcountXor(codes: Uint32Array, offset: number, qc: Uint32Array, from: number, to: number): number {
  let d = 0;
  let w = from;
  // Three words per byte-sum: per-nibble sums stay below 16.
  for (; w + 3 <= to; w += 3) {
    let a = codes[offset + w]! ^ qc[w]!;
    let b = codes[offset + w + 1]! ^ qc[w + 1]!;
    let c = codes[offset + w + 2]! ^ qc[w + 2]!;
    a -= (a >>> 1) & 0x55555555;
    a = (a & 0x33333333) + ((a >>> 2) & 0x33333333);
    b -= (b >>> 1) & 0x55555555;
    b = (b & 0x33333333) + ((b >>> 2) & 0x33333333);
    c -= (c >>> 1) & 0x55555555;
    c = (c & 0x33333333) + ((c >>> 2) & 0x33333333);
    let sum = a + b + c;
    sum = (sum & 0x0f0f0f0f) + ((sum >>> 4) & 0x0f0f0f0f);
    d += Math.imul(sum, 0x01010101) >>> 24;
  }
  for (; w < to; w++) {
    let x = codes[offset + w]! ^ qc[w]!;
    x -= (x >>> 1) & 0x55555555;
    x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
    d += Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
  }
  return d;
}

/** The namespace key of a removed slot: neither an open (ns id) nor a closed (-1 - ns id) key of any namespace. */
const REMOVED = -2_147_483_648;

/** Indexes of every dimension in use. */
export class VectorIndex {
  readonly #byDims = new Map<number, DimensionIndex>();

  /** Loads every record (from the vector tables at start). */
  load(records: Iterable<VectorRecord>): number {
    let n = 0;
    for (const r of records) {
      this.add(r.vid, r.vector, r);
      n++;
    }
    return n;
  }

  add(vid: number, vector: ArrayLike<number>, meta: VectorMeta): void {
    let index = this.#byDims.get(vector.length);
    if (!index) {
      index = new DimensionIndex(vector.length);
      this.#byDims.set(vector.length, index);
    }
    index.add(vid, vector, meta);
  }

  closeTx(dims: number, vid: number, txTo: number): void {
    this.#byDims.get(dims)?.closeTx(vid, txTo);
  }

  vector(dims: number, vid: number): Float32Array | undefined {
    return this.#byDims.get(dims)?.vector(vid);
  }

  /** Forgets deleted versions (see {@link DimensionIndex.remove}). */
  remove(dims: number, vids: Iterable<number>): void {
    const index = this.#byDims.get(dims);
    if (index) for (const vid of vids) index.remove(vid);
  }

  /** Drops every vector (before a reload from the vector tables after a restore). */
  clear(): void {
    this.#byDims.clear();
  }

  search(query: Float32Array, k: number, filter: VectorFilter, options?: VectorQueryOptions): VectorHit[] {
    return this.#byDims.get(query.length)?.search(query, k, filter, options) ?? [];
  }

  /** Vector count per dimension. */
  sizes(): Record<string, number> {
    return Object.fromEntries([...this.#byDims].map(([d, i]) => [String(d), i.size]));
  }
}
