/**
 * Read-only queries of the admin debugger (time travel, diffs, recent nodes): version rows by
 * valid time and by transaction time within one namespace.
 */
import type { Db } from '../database.js';
import type { VersionRow } from './rows.js';

/** Version queries for the admin debugger. */
export class DebuggerStore {
  readonly #validAt;
  readonly #changed;

  constructor(db: Db) {
    this.#validAt = db.prepare<[number, number, number, number, number, number], VersionRow>(
      `SELECT * FROM kn_versions WHERE ns_id = ? AND valid_from <= ? AND valid_to > ? AND tx_from <= ? AND tx_to > ? AND retracted = 0
       ORDER BY tx_from DESC, vid DESC LIMIT ?`,
    );
    this.#changed = db.prepare<[number, number, number, number], VersionRow>(
      'SELECT * FROM kn_versions WHERE ns_id = ? AND tx_from > ? AND tx_from <= ? ORDER BY tx_from, vid LIMIT ?',
    );
  }

  /** Versions valid at `validAt` as known at `knownAt` (not retracted), newest transaction first. */
  validAt(nsId: number, validAt: number, knownAt: number, limit: number): VersionRow[] {
    return this.#validAt.all(nsId, validAt, validAt, knownAt, knownAt, limit);
  }

  /** Versions recorded after `from` up to and including `to` (transaction time), oldest first. */
  changedBetween(nsId: number, from: number, to: number, limit: number): VersionRow[] {
    return this.#changed.all(nsId, from, to, limit);
  }
}
