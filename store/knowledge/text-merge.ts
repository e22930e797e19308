/**
 * Merging of the text index's segments in bounded slices tied to the amount written (docs/adr/0207).
 *
 * FTS5 writes each flush of pending terms (every commit of `kn_text` rows) as a new segment; its
 * `automerge` merges them, but in lumps: once every 64 leaf pages written it merges 64 × (levels)
 * pages at once, inside whichever COMMIT crossed the boundary (~20 ms of the event loop, ADR 0205).
 * Migration 8 turns `automerge` off, and this policy runs FTS5's documented incremental merge
 * (`INSERT INTO kn_text(kn_text, rank) VALUES('merge', N)`) after each write transaction's text rows,
 * in the same transaction, with N set by the pages that transaction wrote times the index's levels
 * (the same work automerge does, spread evenly). Work no slice paid (pages a transaction added
 * without calling the policy, what a slice left unfinished) is carried as debt and paid in slices of
 * at most `CATCH_UP_PAGES` by the following writes or by idle-time slices. Merging never changes what a query finds or its order:
 * only how the index's pages are laid out.
 *
 * The written page count comes from FTS5's structure record (`kn_text_data` row 10), whose format is
 * part of FTS5's on-disk file format (sqlite3.c, fts5StructureDecode); it is only read, and a record
 * that does not parse falls back to a fixed slice.
 */
import type Database from 'better-sqlite3';
import type { Db } from '../database.js';

/** Pages of old debt a slice may pay beside its own transaction's work (~1.5-3 ms of the event loop). */
export const CATCH_UP_PAGES = 32;
/** Slice when the structure record cannot be read: a bounded amount of work. */
const FALLBACK_PAGES = 16;
/** FTS5's `usermerge` default: a level is merged once it holds this many segments. */
const USERMERGE = 4;

/** One level of the text index: its segments and their leaf pages. */
export interface TextLevel {
  readonly segments: number;
  /** Segments of the level being merged by an unfinished incremental merge. */
  readonly merging: number;
  readonly pages: number;
}

/** The text index's segments, from its structure record. */
export interface TextSegments {
  readonly levels: readonly TextLevel[];
  readonly segments: number;
  readonly pages: number;
}

/** Counters of the merge policy since it was made. */
export interface TextMergeStats {
  /** `merge` commands run. */
  readonly slices: number;
  /** Pages those commands were allowed to write. */
  readonly pagesBudgeted: number;
  /** Pages the policy still owes (0 when nothing is left to merge). */
  readonly debt: number;
}

/**
 * Decodes an FTS5 structure record (`<table>_data` row 10): a 4-byte cookie, an optional 4-byte V2
 * marker, then varints: levels, segments, write counter, and per level the segments being merged,
 * the segment count and, per segment, its id and first and last leaf page (V2 adds five more).
 */
export function decodeStructure(block: Uint8Array): TextSegments {
  let i = 4;
  const v2 = block[4] === 0xff && block[5] === 0 && block[6] === 0 && block[7] === 1;
  if (v2) i += 4;
  const varint = (): number => {
    let value = 0;
    for (let n = 0; n < 9; n++) {
      const byte = block[i++];
      if (byte === undefined) throw new Error('FTS5 structure record ends inside a varint');
      if (n === 8) return value * 256 + byte;
      value = value * 128 + (byte & 0x7f);
      if ((byte & 0x80) === 0) return value;
    }
    return value;
  };
  const nLevel = varint();
  const nSegment = varint();
  varint(); // write counter
  const levels: TextLevel[] = [];
  let pages = 0;
  let counted = 0;
  for (let level = 0; level < nLevel; level++) {
    const merging = varint();
    const segments = varint();
    let levelPages = 0;
    for (let s = 0; s < segments; s++) {
      varint(); // segment id
      const first = varint();
      const last = varint();
      if (v2) for (let k = 0; k < 5; k++) varint();
      levelPages += last - first + 1;
    }
    counted += segments;
    pages += levelPages;
    levels.push({ segments, merging, pages: levelPages });
  }
  if (counted !== nSegment) throw new Error('FTS5 structure record does not add up');
  return { levels, segments: nSegment, pages };
}

/** The text index's segments, read from its structure record; undefined when there is none yet. */
export function textSegments(db: Db): TextSegments | undefined {
  const row = db.prepare('SELECT block FROM kn_text_data WHERE id = 10').get() as { block: Uint8Array } | undefined;
  return row === undefined ? undefined : decodeStructure(row.block);
}

/** Whether FTS5's `merge` command would merge something: a level being merged, or one of 4 segments. */
function due(segments: TextSegments): boolean {
  return segments.levels.some((l) => l.merging > 0 || l.segments >= USERMERGE);
}

const policies = new WeakMap<Db, TextMergePolicy>();

/** The one merge policy of a database connection (its debt is shared by every writer of `kn_text`). */
export function textMergeOf(db: Db): TextMergePolicy {
  let policy = policies.get(db);
  if (policy === undefined) {
    policy = new TextMergePolicy(db);
    policies.set(db, policy);
  }
  return policy;
}

/** Pays the text index's merge work in slices as rows are written. */
export class TextMergePolicy {
  readonly #structure: Database.Statement;
  readonly #merge: Database.Statement;
  readonly #flush: Database.Statement;
  readonly #changes: Database.Statement;
  /** Leaf pages of the index after the last slice: what the next transaction adds is new. */
  #pages: number;
  #debt = 0;
  #slices = 0;
  #budgeted = 0;

  constructor(db: Db) {
    this.#structure = db.prepare('SELECT block FROM kn_text_data WHERE id = 10');
    this.#merge = db.prepare("INSERT INTO kn_text(kn_text, rank) VALUES('merge', ?)");
    this.#flush = db.prepare("INSERT INTO kn_text(kn_text) VALUES('flush')");
    this.#changes = db.prepare('SELECT total_changes()').pluck();
    const now = this.#read();
    this.#pages = now?.pages ?? 0;
    // Levels already due (a store written by a release with automerge, or a bulk rebuild): owed.
    this.#debt =
      now === undefined || !due(now)
        ? 0
        : now.levels.reduce((n, l) => n + (l.segments >= USERMERGE || l.merging > 0 ? l.pages : 0), 0);
  }

  /** Merge work owed, and slices run, since start. */
  stats(): TextMergeStats {
    return { slices: this.#slices, pagesBudgeted: this.#budgeted, debt: this.#debt };
  }

  /** Whether merge work is owed (an idle-time slice would do some). */
  get pending(): boolean {
    return this.#debt > 0;
  }

  /** Leaf pages of the index now: pass it to `afterWrite` to pay for what is written after it. */
  mark(): number | undefined {
    return this.#read()?.pages;
  }

  /**
   * Call inside a transaction that wrote `kn_text` rows, after the last of them, with the `mark()`
   * taken before the first: flushes them to a segment and merges as many pages as they added times
   * the index's levels (what automerge would have done for them), plus up to `CATCH_UP_PAGES` of
   * older debt: pages other transactions added since the last slice (a path that does not call the
   * policy) and work earlier slices left. A transaction's slice is thus its own work plus a bounded
   * extra, never a lump left by others.
   */
  afterWrite(mark: number | undefined): void {
    this.#flush.run();
    const now = this.#read();
    if (now === undefined) {
      this.#slice(FALLBACK_PAGES);
      return;
    }
    if (!due(now)) {
      // FTS5's merge would find nothing to do (no level has 4 segments, none is being merged).
      this.#debt = 0;
      this.#pages = now.pages;
      return;
    }
    const levels = Math.max(1, now.levels.length);
    const before = mark ?? this.#pages;
    const own = Math.max(0, now.pages - before) * levels;
    this.#debt += own + Math.max(0, before - this.#pages) * levels;
    this.#slice(Math.min(this.#debt, own + CATCH_UP_PAGES));
  }

  #slice(pages: number): void {
    if (pages <= 0) return;
    const before = this.#changes.get() as number;
    this.#merge.run(pages);
    const changes = (this.#changes.get() as number) - before;
    this.#slices++;
    this.#budgeted += pages;
    // FTS5's documented test: a merge that changed fewer than 2 rows found nothing left to merge.
    this.#debt = changes < 2 ? 0 : Math.max(0, this.#debt - pages);
    this.#pages = this.#read()?.pages ?? this.#pages;
  }

  #read(): TextSegments | undefined {
    const row = this.#structure.get() as { block: Uint8Array } | undefined;
    if (row === undefined) return undefined;
    try {
      return decodeStructure(row.block);
    } catch {
      return undefined;
    }
  }
}
