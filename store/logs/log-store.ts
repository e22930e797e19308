/**
 * The app log store: captured lines in `logs.db` (SQLite, WAL, its own file), a word index
 * (FTS5) for text search, per-app usage for the size bound, and capture offsets (docs/adr/0165).
 *
 * Capture only appends rows (cheap); the word index follows in bounded steps ({@link LogStore.indexStep}),
 * and a search reads the index below its mark and scans the few lines above it.
 */
import path from 'node:path';
import type { CaptureOffset, CapturedLine, LogLine, LogQuery, LogSink, LogStream } from '../../domain/logs/index.js';
import { openDatabase, type Db } from '../database.js';
import { migrate } from '../migrate.js';
import { LOG_MIGRATIONS } from './log-migrations.js';

/** Bytes a stored line counts for beyond its text (its fields and index entries, roughly). */
export const LINE_OVERHEAD_BYTES = 64;
/** Most rows one pruning step deletes, so the event loop is never held long. */
const PRUNE_STEP_ROWS = 5000;
/** Rows one indexing step adds to the word index. */
export const INDEX_STEP_ROWS = 2000;
/** How often pruning looks for lines past the age bound. */
const AGE_CHECK_MS = 10_000;

/** Bounds of what the store keeps, per app. */
export interface LogStoreOptions {
  /** `logs.db` path, or `:memory:`. */
  readonly file: string;
  /** Bytes (text plus {@link LINE_OVERHEAD_BYTES} a line) kept per app; the oldest go first. */
  readonly maxBytesPerApp: number;
  /** Lines older than this are dropped. */
  readonly maxAgeMs: number;
  /** @default Date.now */
  readonly now?: () => number;
}

interface Row {
  id: number;
  at: number;
  app: string;
  process: string;
  allocation: string;
  release: string;
  stream: string;
  line: string;
}

/** Path of the log store in a data folder. */
export function logStoreFile(dataDir: string): string {
  return path.join(dataDir, 'logs.db');
}

/** FTS5 query of `grep`: each word a quoted prefix term, all required; undefined when it has no word. */
export function ftsQueryOf(grep: string): string | undefined {
  const words = grep.match(/[\p{L}\p{N}]+/gu);
  if (!words) return undefined;
  return words.map((word) => `"${word}"*`).join(' ');
}

/** SQLite log store; implements the capture sink. */
export class LogStore implements LogSink {
  readonly db: Db;
  readonly #options: LogStoreOptions;
  readonly #now: () => number;
  readonly #usage = new Map<string, { bytes: number; lines: number }>();
  readonly #insertLine;
  readonly #insertText;
  #indexedUpto: number;
  #ageCheckedAt = 0;
  readonly #upsertOffset;
  readonly #upsertUsage;
  readonly #offsetOf;
  readonly #appendTx;

  constructor(options: LogStoreOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    // Lines are a record of what apps printed, not a ledger: NORMAL keeps commits off fsync.
    this.db = openDatabase(options.file, { synchronous: 'NORMAL' });
    migrate(this.db, LOG_MIGRATIONS);
    for (const row of this.db.prepare('SELECT app, bytes, lines FROM log_usage').all() as {
      app: string;
      bytes: number;
      lines: number;
    }[])
      this.#usage.set(row.app, { bytes: row.bytes, lines: row.lines });
    this.#insertLine = this.db.prepare(
      'INSERT INTO log_lines (at, app, process, allocation, release, stream, line) VALUES (?, ?, ?, ?, ?, ?, ?)',
    );
    this.#insertText = this.db.prepare('INSERT INTO log_text (rowid, line) VALUES (?, ?)');
    this.#upsertOffset = this.db.prepare(
      'INSERT INTO log_offsets (allocation, stream, offset) VALUES (?, ?, ?) ON CONFLICT (allocation, stream) DO UPDATE SET offset = excluded.offset',
    );
    this.#upsertUsage = this.db.prepare(
      'INSERT INTO log_usage (app, bytes, lines) VALUES (?, ?, ?) ON CONFLICT (app) DO UPDATE SET bytes = excluded.bytes, lines = excluded.lines',
    );
    this.#indexedUpto = this.db.prepare('SELECT upto FROM log_index WHERE id = 1').pluck().get() as number;
    this.#offsetOf = this.db.prepare('SELECT offset FROM log_offsets WHERE allocation = ? AND stream = ?').pluck();
    this.#appendTx = this.db.transaction((lines: readonly CapturedLine[], offsets: readonly CaptureOffset[]) => {
      const stored: LogLine[] = [];
      const touched = new Set<string>();
      for (const line of lines) {
        const id = Number(
          this.#insertLine.run(line.at, line.app, line.process, line.allocation, line.release, line.stream, line.line)
            .lastInsertRowid,
        );
        const usage = this.#usage.get(line.app) ?? { bytes: 0, lines: 0 };
        usage.bytes += line.line.length + LINE_OVERHEAD_BYTES;
        usage.lines += 1;
        this.#usage.set(line.app, usage);
        touched.add(line.app);
        stored.push({ id, ...line });
      }
      for (const app of touched) {
        const usage = this.#usage.get(app)!;
        this.#upsertUsage.run(app, usage.bytes, usage.lines);
      }
      for (const offset of offsets) this.#upsertOffset.run(offset.allocation, offset.stream, offset.offset);
      return stored;
    });
  }

  /** Stores lines and read offsets in one transaction; returns the lines with their ids. */
  append(lines: readonly CapturedLine[], offsets: readonly CaptureOffset[]): LogLine[] {
    return this.#appendTx(lines, offsets);
  }

  offsetOf(allocation: string, stream: LogStream): number | undefined {
    return this.#offsetOf.get(allocation, stream) as number | undefined;
  }

  /** Bytes and lines kept for `app`. */
  usage(app: string): { bytes: number; lines: number } {
    return { ...(this.#usage.get(app) ?? { bytes: 0, lines: 0 }) };
  }

  /** The newest `limit` lines matching the query, oldest first; `afterId` reads only newer lines. */
  query(query: LogQuery & { afterId?: number }): LogLine[] {
    const where = ['l.app = @app'];
    const params: Record<string, unknown> = { app: query.app, limit: query.limit };
    for (const field of ['process', 'allocation', 'release', 'stream'] as const) {
      if (query[field] === undefined) continue;
      where.push(`l.${field} = @${field}`);
      params[field] = query[field];
    }
    if (query.since !== undefined) {
      where.push('l.at >= @since');
      params.since = query.since;
    }
    if (query.until !== undefined) {
      where.push('l.at < @until');
      params.until = query.until;
    }
    if (query.afterId !== undefined) {
      where.push('l.id > @afterId');
      params.afterId = query.afterId;
    }
    if (query.grep === undefined) return this.#select('log_lines l', where, params);
    // Text search: lines above the index mark are scanned; below it the word index narrows to
    // lines holding every word (as a prefix) first. Both keep lines holding the text as written.
    where.push('instr(lower(l.line), lower(@grep)) > 0');
    params.grep = query.grep;
    params.indexed = this.#indexedUpto;
    const recent = this.#select('log_lines l', [...where, 'l.id > @indexed'], params);
    if (recent.length >= query.limit) return recent;
    const match = ftsQueryOf(query.grep);
    const older = this.#select(
      // CROSS JOIN keeps the word index the outer loop (the planner would walk the app's lines instead).
      match === undefined ? 'log_lines l' : 'log_text t CROSS JOIN log_lines l ON l.id = t.rowid',
      [...where, 'l.id <= @indexed', ...(match === undefined ? [] : ['log_text MATCH @match'])],
      { ...params, limit: query.limit - recent.length, ...(match === undefined ? {} : { match }) },
      match === undefined ? 'l.id' : 't.rowid',
    );
    return [...older, ...recent];
  }

  #select(from: string, where: readonly string[], params: Record<string, unknown>, order = 'l.id'): LogLine[] {
    const rows = this.db
      .prepare(
        `SELECT l.id, l.at, l.app, l.process, l.allocation, l.release, l.stream, l.line FROM ${from} WHERE ${where.join(' AND ')} ORDER BY ${order} DESC LIMIT @limit`,
      )
      .all(params) as Row[];
    return rows.reverse().map((row) => ({ ...row, stream: row.stream as LogStream }));
  }

  /** Lines stored but not yet in the word index. */
  unindexed(): number {
    const last = (this.db.prepare('SELECT max(id) FROM log_lines').pluck().get() as number | null) ?? 0;
    return Math.max(0, last - this.#indexedUpto);
  }

  /** Adds up to `maxRows` lines to the word index; returns true when more remain. */
  indexStep(maxRows = INDEX_STEP_ROWS): boolean {
    return this.db.transaction(() => {
      const rows = this.db
        .prepare('SELECT id, line FROM log_lines WHERE id > ? ORDER BY id LIMIT ?')
        .all(this.#indexedUpto, maxRows) as { id: number; line: string }[];
      for (const row of rows) this.#insertText.run(row.id, row.line);
      if (rows.length > 0) {
        this.#indexedUpto = rows[rows.length - 1]!.id;
        this.db.prepare('UPDATE log_index SET upto = ? WHERE id = 1').run(this.#indexedUpto);
      }
      return rows.length === maxRows;
    })();
  }

  /** Apps whose usage is over the size bound. */
  overBound(): string[] {
    return [...this.#usage].filter(([, usage]) => usage.bytes > this.#options.maxBytesPerApp).map(([app]) => app);
  }

  /**
   * One bounded pruning step: drops lines past the age bound, then the oldest lines of apps over
   * the size bound (down to 90 % of it), at most {@link PRUNE_STEP_ROWS} rows. Returns true when
   * more remains to prune (the caller schedules another step).
   */
  pruneStep(): boolean {
    const cutoff = this.#now() - this.#options.maxAgeMs;
    let budget = PRUNE_STEP_ROWS;
    if (this.#now() - this.#ageCheckedAt >= AGE_CHECK_MS) {
      this.#ageCheckedAt = this.#now();
      const oldest = this.db.prepare('SELECT id, at FROM log_lines WHERE app = ? ORDER BY id LIMIT ?');
      for (const app of [...this.#usage.keys()]) {
        if (budget <= 0) break;
        // Ids grow with capture time: the old lines of an app are its first ones.
        let last: number | undefined;
        for (const row of oldest.all(app, budget) as { id: number; at: number }[]) {
          if (row.at >= cutoff) break;
          last = row.id;
        }
        if (last !== undefined) budget -= this.#deleteUpTo(app, last, budget);
      }
      if (budget <= 0) this.#ageCheckedAt = 0;
    }
    for (const app of this.overBound()) {
      if (budget <= 0) break;
      const usage = this.#usage.get(app)!;
      const excess = usage.bytes - this.#options.maxBytesPerApp * 0.9;
      // Lines to drop, at the app's mean line size; the next step corrects any shortfall.
      const count = Math.min(budget, Math.max(1, Math.ceil((excess / usage.bytes) * usage.lines)));
      const last = this.db
        .prepare('SELECT id FROM log_lines WHERE app = ? ORDER BY id LIMIT 1 OFFSET ?')
        .pluck()
        .get(app, count - 1) as number | undefined;
      if (last !== undefined) budget -= this.#deleteUpTo(app, last, budget);
    }
    return budget <= 0 || this.overBound().length > 0;
  }

  /** Deletes `app`'s lines with id <= `lastId` (at most `max`); returns how many. */
  #deleteUpTo(app: string, lastId: number, max: number): number {
    return this.db.transaction(() => {
      const rows = this.db
        .prepare('SELECT id, length(line) AS chars FROM log_lines WHERE app = ? AND id <= ? ORDER BY id LIMIT ?')
        .all(app, lastId, max) as { id: number; chars: number }[];
      if (rows.length === 0) return 0;
      const deleteText = this.db.prepare('DELETE FROM log_text WHERE rowid = ?');
      let bytes = 0;
      for (const row of rows) {
        if (row.id <= this.#indexedUpto) deleteText.run(row.id);
        bytes += row.chars + LINE_OVERHEAD_BYTES;
      }
      this.db
        .prepare('DELETE FROM log_lines WHERE app = ? AND id BETWEEN ? AND ?')
        .run(app, rows[0]!.id, rows[rows.length - 1]!.id);
      const usage = this.#usage.get(app)!;
      usage.bytes = Math.max(0, usage.bytes - bytes);
      usage.lines = Math.max(0, usage.lines - rows.length);
      this.#upsertUsage.run(app, usage.bytes, usage.lines);
      return rows.length;
    })();
  }

  /** Forgets the read offsets of allocations no longer present. */
  forgetOffsets(keep: ReadonlySet<string>): void {
    const all = this.db.prepare('SELECT DISTINCT allocation FROM log_offsets').pluck().all() as string[];
    const drop = this.db.prepare('DELETE FROM log_offsets WHERE allocation = ?');
    for (const allocation of all) if (!keep.has(allocation)) drop.run(allocation);
  }

  close(): void {
    this.db.close();
  }
}
