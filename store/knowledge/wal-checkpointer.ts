/**
 * WAL checkpoints of `knowledge.db` off the event loop (docs/adr/0166). SQLite's automatic checkpoint
 * runs inside the commit that crosses `wal_autocheckpoint` (1,000 pages): it copies the WAL's pages
 * into the database and fsyncs both files on the thread that serves. Under 8 writing clients that was
 * every ~14 group commits, each time a stall of tens of pages copied and two fsyncs, which a retrieve
 * queued behind it waited for. Here a long-lived worker thread with its own connection runs
 * `PRAGMA wal_checkpoint(PASSIVE)` instead: in WAL mode a passive checkpoint neither blocks nor waits
 * for the writer, and the writer restarts the WAL at its next transaction once every frame was copied.
 * The connection's own automatic checkpoint stays as a backstop at a higher threshold, for when the
 * worker cannot keep up (it then copies only the frames the worker has not).
 *
 * Durability is unchanged: the worker's checkpoint (synchronous FULL) flushes the WAL before copying
 * and the database before recording the copy, exactly as the automatic checkpoint did, and the WAL is
 * restarted only by the writer after a complete, flushed checkpoint.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { Db } from '../database.js';

/** WAL size (bytes) from which checkpoints move to the worker: half of SQLite's default threshold (1,000 pages of 4 KiB), so the worker starts before the commits checkpoint. */
export const WORKER_FROM_BYTES = 2 * 1024 * 1024;
/**
 * Least time between two worker checkpoints. Each complete one lets the writer restart the WAL, and
 * SQLite fsyncs the new WAL header on the writer's thread (the event loop) at every restart: at most
 * two such fsyncs a second, where the commits' own checkpoints cost three fsyncs and the page copy
 * every ~100 writes (docs/adr/0166).
 */
export const CHECKPOINT_INTERVAL_MS = 500;
/**
 * WAL frames from which an incomplete checkpoint makes the next group commit wait for one that
 * completes (see `restartGate`): ~16 MiB, well below the backstop.
 */
export const GATE_FRAMES = 4000;
/** The connection's own automatic checkpoint once the worker runs (pages): a backstop. */
export const BACKSTOP_PAGES = 10_000;
/** SQLite's default `wal_autocheckpoint`, restored if the worker stops. */
const DEFAULT_PAGES = 1000;

const SCRIPT = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.sqlite);
const db = new Database(workerData.file, { fileMustExist: true });
db.pragma('synchronous = FULL');
db.pragma('wal_autocheckpoint = 0');
parentPort.on('message', (m) => {
  if (m === 'close') {
    db.close();
    parentPort.close();
    return;
  }
  try {
    const [r] = db.pragma('wal_checkpoint(PASSIVE)');
    parentPort.postMessage({ ok: true, busy: r.busy, log: r.log, checkpointed: r.checkpointed });
  } catch (error) {
    parentPort.postMessage({ ok: false, message: String((error && error.message) || error) });
  }
});`;

/** Counters of the worker's checkpoints since start. */
export interface CheckpointStats {
  /** Whether checkpoints run in the worker (false: in the commits, as SQLite does by default). */
  readonly inWorker: boolean;
  readonly checkpoints: number;
  /** Checkpoints that copied every frame the WAL held when they started. */
  readonly complete: number;
  /** Commits run without the WAL-header fsync after a complete checkpoint (docs/adr/0205). */
  readonly unsyncedRestarts: number;
  /** Times the group commit waited for a checkpoint to let the WAL restart (docs/adr/0205). */
  readonly gates: number;
}

/** Moves the WAL checkpoints of one file-backed WAL database to a worker thread. */
export class WalCheckpointer {
  readonly #db: Db;
  readonly #file: string;
  #worker: Worker | undefined;
  #failed = false;
  #busy = false;
  #lastEnd = 0;
  #checkpoints = 0;
  #complete = 0;
  #closing: Promise<void> | undefined;
  /** A commit happened since the last checkpoint was asked for. */
  #wanted = false;
  #timer: NodeJS.Timeout | undefined;
  #waiters: (() => void)[] = [];
  #restartLikely = false;
  #unsyncedRestarts = 0;
  #gateNeeded = false;
  #gateWaiters: (() => void)[] = [];
  #gateSent = false;
  #gates = 0;
  /** Commits seen (`committed` calls), and their count when the running checkpoint was asked for. */
  #commits = 0;
  #commitsAtPost = 0;

  constructor(db: Db) {
    this.#db = db;
    this.#file = db.name;
  }

  stats(): CheckpointStats {
    return {
      inWorker: this.#worker !== undefined,
      checkpoints: this.#checkpoints,
      complete: this.#complete,
      unsyncedRestarts: this.#unsyncedRestarts,
      gates: this.#gates,
    };
  }

  /**
   * Whether the next commit will likely restart the WAL (the worker copied every frame since the
   * last commit asked), cleared by the call. The caller then commits without SQLite's WAL-header
   * fsync on the event loop (see `WalDurability.commitUnsynced`, docs/adr/0205).
   */
  takeRestartLikely(): boolean {
    const likely = this.#restartLikely && this.#worker !== undefined && !this.#failed;
    this.#restartLikely = false;
    if (likely) this.#unsyncedRestarts++;
    return likely;
  }

  /**
   * When a checkpoint of the worker could not copy the whole WAL because commits kept adding frames
   * and the WAL holds {@link GATE_FRAMES} or more, a promise for the next group commit to wait for:
   * the worker checkpoints at once, with no commit adding frames meanwhile, so it can complete and
   * the next commit restarts the WAL (docs/adr/0205). Without it, under sustained writes no passive
   * checkpoint completes, the WAL grows to the backstop and the commit that crosses it checkpoints
   * on the event loop. The writes wait (asynchronously); the event loop does not. Undefined when no
   * wait is needed. The promise always resolves (also when the worker stops or closes).
   */
  restartGate(): Promise<void> | undefined {
    if (!this.#gateNeeded || this.#worker === undefined || this.#closing !== undefined) return undefined;
    this.#gateNeeded = false;
    this.#gates++;
    return new Promise<void>((resolve) => {
      this.#gateWaiters.push(resolve);
      this.#wanted = true;
      clearTimeout(this.#timer);
      this.#timer = undefined;
      this.#pump();
    });
  }

  /** The connection's `wal_autocheckpoint` (pages) while this checkpointer is in its current state. */
  get autocheckpointPages(): number {
    return this.#worker !== undefined ? BACKSTOP_PAGES : DEFAULT_PAGES;
  }

  /**
   * Called after each commit with the WAL file's size. Starts the worker once the WAL is half as large
   * as SQLite's own checkpoint threshold (small stores, tests among them, never start one), then has it
   * checkpoint: at once when none ran in the last `CHECKPOINT_INTERVAL_MS`, else when the interval
   * ends, so the frames of the last commits of a burst are copied too and the next write restarts the WAL.
   */
  committed(walBytes: number): void {
    this.#commits++;
    if (this.#closing !== undefined || this.#failed) return;
    if (this.#worker === undefined) {
      if (walBytes < WORKER_FROM_BYTES) return;
      this.#start();
      if (this.#worker === undefined) return;
    }
    this.#wanted = true;
    this.#pump();
  }

  /** Resolves once no checkpoint is running, scheduled or wanted. */
  idle(): Promise<void> {
    if (this.#isIdle()) return Promise.resolve();
    return new Promise<void>((resolve) => this.#waiters.push(resolve));
  }

  /** Stops the worker (closing its connection) before the database closes. */
  close(): Promise<void> {
    this.#closing ??= new Promise<void>((resolve) => {
      clearTimeout(this.#timer);
      this.#timer = undefined;
      this.#wanted = false;
      this.#settle();
      for (const resolve of this.#gateWaiters.splice(0)) resolve();
      const worker = this.#worker;
      if (worker === undefined) return resolve();
      worker.ref(); // awaited: the process must not end before the worker closed its connection
      worker.once('exit', () => resolve());
      worker.postMessage('close');
    });
    return this.#closing;
  }

  #start(): void {
    let sqlite: string;
    try {
      sqlite = createRequire(import.meta.url).resolve('better-sqlite3');
    } catch {
      // A packaged build has no module a worker can require (ADR 0161): SQLite keeps checkpointing.
      this.#failed = true;
      return;
    }
    let worker: Worker;
    try {
      worker = new Worker(SCRIPT, { eval: true, workerData: { file: this.#file, sqlite } });
    } catch {
      this.#failed = true;
      return;
    }
    worker.unref();
    worker.on('message', (m: { ok: boolean; log?: number; checkpointed?: number; message?: string }) => {
      this.#lastEnd = performance.now();
      this.#busy = false;
      const gated = this.#gateSent;
      this.#gateSent = false;
      if (m.ok) {
        this.#checkpoints++;
        // It copied every frame it saw; the writer restarts the WAL only if no commit added one since.
        const quiet = this.#commits === this.#commitsAtPost;
        if (m.log === m.checkpointed) this.#complete++;
        if (m.log === m.checkpointed && quiet) this.#restartLikely = true;
        else if (!gated && (m.log ?? 0) >= GATE_FRAMES) this.#gateNeeded = true;
      }
      if (gated) for (const resolve of this.#gateWaiters.splice(0)) resolve();
      this.#pump();
      this.#settle();
    });
    const stop = (): void => {
      if (this.#worker !== worker) return;
      this.#worker = undefined;
      this.#busy = false;
      this.#wanted = false;
      clearTimeout(this.#timer);
      this.#timer = undefined;
      this.#gateSent = false;
      for (const resolve of this.#gateWaiters.splice(0)) resolve();
      this.#settle();
      if (this.#closing !== undefined) return;
      // The worker died: the commits checkpoint again, as SQLite does by default.
      this.#failed = true;
      if (this.#db.open) this.#db.pragma(`wal_autocheckpoint = ${DEFAULT_PAGES}`);
    };
    worker.on('error', stop);
    worker.on('exit', stop);
    this.#worker = worker;
    this.#db.pragma(`wal_autocheckpoint = ${BACKSTOP_PAGES}`);
  }

  /** Asks the worker for a checkpoint when one is wanted, none runs and the interval since the last ended. */
  #pump(): void {
    const worker = this.#worker;
    if (worker === undefined || this.#busy || !this.#wanted || this.#timer !== undefined) return;
    const gate = this.#gateWaiters.length > 0;
    const wait = gate ? 0 : this.#lastEnd + CHECKPOINT_INTERVAL_MS - performance.now();
    if (wait > 0) {
      this.#timer = setTimeout(() => {
        this.#timer = undefined;
        this.#pump();
      }, wait);
      this.#timer.unref();
      return;
    }
    this.#wanted = false;
    this.#busy = true;
    this.#gateSent = gate;
    this.#commitsAtPost = this.#commits;
    worker.postMessage('checkpoint');
  }

  #isIdle(): boolean {
    return !this.#busy && !this.#wanted && this.#timer === undefined;
  }

  #settle(): void {
    if (!this.#isIdle()) return;
    for (const resolve of this.#waiters.splice(0)) resolve();
  }
}
