/**
 * State file: the local driver's JSON state, written atomically (temp file, fsync, rename, fsync
 * of the folder), and the lock that keeps two live drivers off one data dir.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { writeFileAtomic } from '../files/write-file-atomic.js';
import { ConflictError } from '../../domain/errors.js';
import { emptyDriverState, type DriverState } from './driver-state.js';
import { isProcessAlive, readProcess } from './tasks/process-table.js';

/** Reads and writes `<dir>/state.json`. */
export class StateFile {
  readonly file: string;
  readonly #dir: string;

  constructor(dir: string) {
    this.#dir = dir;
    this.file = path.join(dir, 'state.json');
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  }

  /** The stored state, or an empty one on first start. */
  load(): DriverState {
    let text: string;
    try {
      text = fs.readFileSync(this.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return emptyDriverState();
      throw error;
    }
    const state = JSON.parse(text) as DriverState;
    if (state.formatVersion !== 1) {
      throw new Error(
        `local scheduler state ${this.file}: format version ${String(state.formatVersion)} is not supported`,
      );
    }
    return state;
  }

  // Bumped by every write; an asynchronous write renames its file only if none came after it began.
  #generation = 0;

  /** The temporary file of an asynchronous save whose rename is under way, if any. */
  #renaming: string | undefined;

  /** Replaces the stored state atomically. */
  save(state: DriverState): void {
    this.#generation += 1;
    // An asynchronous rename already under way must not land after this write: without its file it
    // fails instead (or it landed already, and this write replaces it).
    if (this.#renaming !== undefined) fs.rmSync(this.#renaming, { force: true });
    writeFileAtomic(this.file, JSON.stringify(state), 0o600);
  }

  /**
   * {@link save} with the writes, the fsyncs and the rename off the event loop (the state is
   * serialized at once): the same temporary file, fsync, rename and folder fsync. A {@link save}
   * begun meanwhile wins: this write then drops its file instead of renaming an older state over the
   * newer one, and a rename already under way finds its file gone. One at a time (the driver chains them).
   */
  async saveAsync(state: DriverState): Promise<void> {
    const generation = ++this.#generation;
    const text = JSON.stringify(state);
    const temp = path.join(this.#dir, `.state.json.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
    const handle = await fs.promises.open(temp, 'wx', 0o600);
    try {
      await handle.writeFile(text);
      await handle.sync();
    } finally {
      await handle.close();
    }
    if (generation !== this.#generation) {
      await fs.promises.rm(temp, { force: true });
      return;
    }
    // Off the loop too: a rename over the existing file waits on the file system's journal while
    // other processes' fsyncs commit (6 ms per cold wake in ADR 0201's profile).
    this.#renaming = temp;
    try {
      await fs.promises.rename(temp, this.file);
    } catch (error) {
      // A synchronous save removed the file meanwhile: its newer state stands.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT' && generation !== this.#generation) return;
      await fs.promises.rm(temp, { force: true });
      throw error;
    } finally {
      if (this.#renaming === temp) this.#renaming = undefined;
    }
    const dir = await fs.promises.open(this.#dir, 'r');
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
  }

  /** Takes the driver lock; a lock left by a dead process is taken over. Returns the release function. */
  acquireLock(): () => void {
    const lock = path.join(this.#dir, 'driver.lock');
    const self = { pid: process.pid, startTime: readProcess(process.pid)?.startTime };
    for (let attempt = 0; attempt < 2; attempt += 1) {
      try {
        fs.writeFileSync(lock, JSON.stringify(self), { flag: 'wx', mode: 0o600 });
        return () => fs.rmSync(lock, { force: true });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        let holder: { pid?: number; startTime?: string } = {};
        try {
          holder = JSON.parse(fs.readFileSync(lock, 'utf8')) as typeof holder;
        } catch {
          // Unreadable lock: treat as stale.
        }
        if (holder.pid !== undefined && isProcessAlive(holder.pid, holder.startTime)) {
          throw new ConflictError(`local scheduler: data dir ${this.#dir} is in use by process ${holder.pid}`, {
            code: 'scheduler_locked',
          });
        }
        fs.rmSync(lock, { force: true });
      }
    }
    throw new ConflictError(`local scheduler: could not lock ${this.#dir}`, { code: 'scheduler_locked' });
  }
}
