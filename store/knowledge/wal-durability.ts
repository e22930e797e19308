/**
 * Deferred WAL durability for group commit (docs/adr/0182): a transaction commits with
 * `synchronous = NORMAL` (its frames reach the WAL file, no fsync), then `sync()` runs `fdatasync`
 * of the WAL file on the libuv thread pool, so the event loop keeps serving requests while the disk
 * flushes. A commit whose sync has resolved is as durable as a `synchronous = FULL` commit: the same
 * file, flushed after the commit frame was written. Every other transaction on the connection keeps
 * `FULL`.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Db } from '../database.js';
import { WalCheckpointer, type CheckpointStats } from './wal-checkpointer.js';

/** Commits without an fsync and flushes the WAL asynchronously afterwards. */
export class WalDurability {
  readonly #db: Db;
  readonly #tx: (fn: () => unknown) => unknown;
  readonly #wal: string | undefined;
  #fd: number | undefined;
  #directorySynced = false;
  #syncs = 0;
  readonly #checkpointer: WalCheckpointer | undefined;

  /** With `checkpointsInWorker`, WAL checkpoints move off the event loop once the WAL grows (docs/adr/0166). */
  constructor(db: Db, options: { readonly checkpointsInWorker?: boolean } = {}) {
    this.#db = db;
    this.#tx = db.transaction((fn: () => unknown) => fn());
    // An in-memory or temporary database has no WAL file: its commits are as durable as they get.
    this.#wal = db.memory || db.name === '' ? undefined : `${db.name}-wal`;
    this.#checkpointer =
      this.#wal === undefined || options.checkpointsInWorker !== true ? undefined : new WalCheckpointer(db);
  }

  /** The WAL checkpoints run off the event loop (docs/adr/0166). */
  checkpointStats(): CheckpointStats | undefined {
    return this.#checkpointer?.stats();
  }

  /** Whether a transaction is open on the connection (SQLite may roll one back on I/O errors). */
  get inTransaction(): boolean {
    return this.#db.inTransaction;
  }

  /** Runs `fn` in a savepoint of the open transaction: a throw undoes only `fn`'s changes. */
  savepoint<T>(fn: () => T): T {
    return this.#tx(fn) as T;
  }

  /** fdatasync calls made so far (one per group commit). */
  get syncs(): number {
    return this.#syncs;
  }

  /**
   * Runs `fn` in one transaction that commits without an fsync. Its changes are visible at once;
   * they are durable only once a later `sync()` resolves.
   */
  commitUnsynced<T>(fn: () => T): T {
    const checkpointer = this.#checkpointer;
    const restart = checkpointer?.takeRestartLikely() === true;
    // `exec`, not `pragma()`: a setting pragma acts when it is prepared, and `pragma()` also builds a
    // JavaScript statement object for it; four of those were ~12 us of every group (docs/adr/0208).
    if (restart) {
      // See #restartWithoutHeaderSync: no automatic checkpoint may run in an unsynced commit.
      this.#db.exec('PRAGMA wal_autocheckpoint = 0');
      this.#db.exec('PRAGMA synchronous = OFF');
    } else this.#db.exec('PRAGMA synchronous = NORMAL');
    const inMemory = this.#subJournalInMemory(true);
    try {
      return this.#tx(fn) as T;
    } finally {
      if (inMemory) this.#subJournalInMemory(false);
      this.#db.exec('PRAGMA synchronous = FULL');
      if (restart && checkpointer) this.#db.exec(`PRAGMA wal_autocheckpoint = ${checkpointer.autocheckpointPages}`);
    }
  }

  /*
   * #restartWithoutHeaderSync (docs/adr/0205). Once the checkpoint worker has copied every frame, the
   * next commit restarts the WAL from its start, and SQLite fsyncs the new WAL header inside that
   * COMMIT, on the event loop (2-13 ms measured), unless `synchronous = OFF`. In WAL mode a commit at
   * NORMAL syncs nothing else, so OFF differs from NORMAL only by that header fsync and by the
   * automatic checkpoint's syncs, which `wal_autocheckpoint = 0` rules out for that one commit (the
   * next commit has the backstop again). The header's sync is not lost but moved: the group's
   * `fdatasync` (sync(), off the loop) flushes the header with the frames before any write of the
   * group is acknowledged, and the worker's checkpoint (synchronous FULL) flushes the WAL before it
   * copies a frame of the new WAL into the database. A crash before that fdatasync loses only
   * unacknowledged writes: an old header (every frame of the old WAL is already in the database)
   * or a torn new one (its checksum fails) both recover to the acknowledged state. When the guess is
   * wrong (a write came between the checkpoint and this commit, so the WAL is not restarted), the
   * commit appends frames exactly as at NORMAL.
   */

  /**
   * Keeps the sub-journal of the next transaction in memory (`temp_store = MEMORY`; SQLite decides
   * where it goes when the write transaction begins), or returns to the default (a temporary file).
   * A group runs every write in a savepoint, and a savepoint copies each page it first modifies
   * into the sub-journal; past 64 KiB the sub-journal spills to a file and every copy becomes a
   * write(2): that cost more than the rows themselves (docs/adr/0202). A group's sub-journal holds
   * one job's pages at a time, so it stays small; other transactions (bulk deletes, migrations)
   * keep spilling to a file. Nothing of it is durable state: the WAL is (ADR 0003). False when
   * SQLite refused the change (temporary storage in use by an open statement): the group then
   * runs with the default.
   */
  #subJournalInMemory(on: boolean): boolean {
    try {
      this.#db.exec(on ? 'PRAGMA temp_store = MEMORY' : 'PRAGMA temp_store = DEFAULT');
      return true;
    } catch {
      return false;
    }
  }

  /** Flushes every commit made before the call to disk. */
  async sync(): Promise<void> {
    if (this.#wal === undefined) return;
    this.#syncs++;
    if (this.#fd === undefined) this.#fd = fs.openSync(this.#wal, 'r');
    const fd = this.#fd;
    // The WAL's size only grows until a checkpoint lets the writer restart it from its start.
    this.#checkpointer?.committed(fs.fstatSync(fd).size);
    await new Promise<void>((resolve, reject) => fs.fdatasync(fd, (error) => (error ? reject(error) : resolve())));
    if (!this.#directorySynced) {
      // The WAL file's directory entry, once: a new file is durable only with its name.
      const dir = fs.openSync(path.dirname(this.#wal), 'r');
      try {
        fs.fsyncSync(dir);
      } finally {
        fs.closeSync(dir);
      }
      this.#directorySynced = true;
    }
  }

  /** A promise the next group commit waits for before it commits, or undefined (see `WalCheckpointer.restartGate`). */
  restartGate(): Promise<void> | undefined {
    return this.#checkpointer?.restartGate();
  }

  /** Resolves once no checkpoint runs in the worker. */
  checkpointsIdle(): Promise<void> {
    return this.#checkpointer?.idle() ?? Promise.resolve();
  }

  /** Stops the checkpoint worker, closing its connection (before the database closes). */
  async stopCheckpoints(): Promise<void> {
    await this.#checkpointer?.close();
  }

  /** Closes the WAL descriptor (before the database closes). */
  close(): void {
    if (this.#fd !== undefined) fs.closeSync(this.#fd);
    this.#fd = undefined;
  }
}
