/**
 * Group commit of knowledge writes (docs/adr/0182). Writes queued in the same turn of the event
 * loop run one after another inside one transaction, each in its own savepoint, so every write sees
 * the state the writes before it left, exactly as if they ran serially, and one write's failure rolls
 * back only its own savepoint. The transaction commits without an fsync; one `fdatasync` of the WAL
 * then makes the whole group durable, and only then is any write of the group answered.
 *
 * A group first runs without savepoints (docs/adr/0208): a savepoint copies every page a job first
 * modifies into the sub-journal, ~13 µs of a text write's ~60. If no job throws, the result is the
 * one the savepoints would have given (a released savepoint changes nothing). If one throws, the
 * whole transaction rolls back and the group runs again as above, each job in its savepoint, from
 * the same state: the answers are those of the guarded run. Jobs must therefore keep every effect
 * outside the database for `afterCommit`, and the next group after such a rerun starts guarded.
 */
import { UnavailableError } from '../../domain/errors.js';
import type { Db } from '../../store/database.js';
import { WalDurability } from '../../store/knowledge/wal-durability.js';
import type { CheckpointStats } from '../../store/knowledge/wal-checkpointer.js';

/** Writes per transaction while reads come: a longer queue runs in several groups, letting reads run in between. */
export const MAX_GROUP = 256;

/**
 * Writes per transaction when no read came for {@link READ_WINDOW_MS} (docs/adr/0210): a whole batch
 * request commits as one group, paying each B-tree's right edge and one text-index segment once
 * instead of four times (~10 µs a text node on the serving thread). Nothing waits behind it.
 */
export const MAX_GROUP_WITHOUT_READS = 1024;

/** How long after a read (its arrival or its answer) the groups stay at {@link MAX_GROUP}. */
export const READ_WINDOW_MS = 5000;

/** Pause of the writes after which an empty group pays background work (docs/adr/0207). */
export const IDLE_MS = 50;

/**
 * A queued write: runs synchronously inside the group transaction; `afterCommit` ops run once it
 * committed. With `guarded` false the job runs without its own savepoint: it must then throw on any
 * failure that needs its own changes undone, and it will run again, guarded, with the whole group
 * (docs/adr/0208). Effects outside the database belong in `afterCommit`.
 */
export type GroupJob<T> = (afterCommit: (op: () => void) => void, guarded: boolean) => T;

interface Queued {
  readonly job: GroupJob<unknown>;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/** Counters of the group commits since start. */
export interface GroupCommitStats {
  readonly groups: number;
  readonly writes: number;
  readonly syncs: number;
  /** WAL checkpoints run by the worker thread (docs/adr/0166); undefined for a database in memory. */
  readonly checkpoints: CheckpointStats | undefined;
  /** Groups that ran again with a savepoint per job because a job threw without one (docs/adr/0208). */
  readonly reruns: number;
  /** The most writes one group held (docs/adr/0210). */
  readonly largestGroup: number;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/** Thrown out of an unguarded group transaction to roll it back and run the group guarded. */
class Rerun extends Error {}

/** Queues writes and commits them in groups, one transaction and one fsync per group. */
export class GroupCommit {
  readonly #wal: WalDurability;
  #queue: Queued[] = [];
  #scheduled = false;
  #inFlight = new Set<Promise<void>>();
  #groups = 0;
  #writes = 0;
  #reruns = 0;
  /** Whether the next group runs each job in a savepoint at once (after a rerun, until a group has no failure). */
  #guardNext = false;
  /** When a read last came (`performance.now()`), see {@link noteRead}. */
  #readAt = -Infinity;
  #largestGroup = 0;

  readonly #around: <T>(fn: () => T) => T;
  readonly #idleWork: (() => boolean) | undefined;
  #idleTimer: NodeJS.Timeout | undefined;
  #closing = false;

  /**
   * `around` wraps the body of each group transaction (the node store's deferred text rows, which
   * also pay the text index's merge work: docs/adr/0207). While `idleWork()` says `around` has work
   * left, an empty group runs when no write came for `IDLE_MS`, one after another until none is left.
   */
  constructor(db: Db, around: <T>(fn: () => T) => T = (fn) => fn(), idleWork?: () => boolean) {
    this.#wal = new WalDurability(db, { checkpointsInWorker: true });
    this.#around = around;
    this.#idleWork = idleWork;
    this.#armIdle(); // work a previous run or another release left (a store merged by FTS5's automerge)
  }

  /** Runs `job` in the next group; resolves with its value once the group is durable. */
  run<T>(job: GroupJob<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ job, resolve: resolve as (value: unknown) => void, reject });
      this.#schedule();
    });
  }

  /**
   * Tells the group commit that a read arrived (any request that is not a write): for the next
   * {@link READ_WINDOW_MS} groups hold at most {@link MAX_GROUP} writes, so the read waits for one
   * short group at most.
   */
  noteRead(): void {
    this.#readAt = performance.now();
  }

  /** Groups committed, writes they held and WAL syncs, since start. */
  stats(): GroupCommitStats {
    return {
      groups: this.#groups,
      writes: this.#writes,
      syncs: this.#wal.syncs,
      checkpoints: this.#wal.checkpointStats(),
      reruns: this.#reruns,
      largestGroup: this.#largestGroup,
    };
  }

  /** Resolves once no WAL checkpoint runs in the checkpoint worker (docs/adr/0166). */
  checkpointsIdle(): Promise<void> {
    return this.#wal.checkpointsIdle();
  }

  /** Waits until every queued write is committed and durable, then releases the WAL descriptor. */
  async close(): Promise<void> {
    this.#closing = true;
    clearTimeout(this.#idleTimer);
    while (this.#queue.length > 0 || this.#inFlight.size > 0 || this.#scheduled) {
      if (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight]);
      else await new Promise<void>((resolve) => setImmediate(resolve));
    }
    await this.#wal.stopCheckpoints();
    this.#wal.close();
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    const flush = (): void => {
      this.#scheduled = false;
      this.#flush();
    };
    // Under sustained writes the WAL restarts only if the writes pause for one checkpoint of the
    // worker (docs/adr/0205): the queue waits for it; the event loop and the reads do not.
    const gate = this.#wal.restartGate();
    // setImmediate: every request parsed in this turn of the event loop joins the same group.
    if (gate === undefined) setImmediate(flush);
    else void gate.then(() => setImmediate(flush));
  }

  /**
   * Runs the group's jobs in one transaction that commits without an fsync: first without savepoints
   * unless `guarded`, and again with a savepoint per job if a job threw (see the file's comment).
   */
  #run(group: readonly Queued[], guarded: boolean): { outcomes: Outcome[]; after: (() => void)[] } {
    const outcomes: Outcome[] = [];
    const after: (() => void)[] = [];
    try {
      this.#wal.commitUnsynced(() =>
        this.#around(() => {
          for (const { job } of group) {
            const ops: (() => void)[] = [];
            const push = (op: () => void) => ops.push(op);
            if (!guarded) {
              try {
                outcomes.push({ ok: true, value: job(push, false) });
              } catch {
                throw new Rerun('a job threw without its savepoint');
              }
              after.push(...ops);
              continue;
            }
            try {
              // A nested transaction is a savepoint: a throwing write undoes only its own changes.
              const value = this.#wal.savepoint(() => job(push, true));
              outcomes.push({ ok: true, value });
              after.push(...ops);
            } catch (error) {
              if (!this.#wal.inTransaction) throw error; // SQLite rolled the whole transaction back
              outcomes.push({ ok: false, error });
            }
          }
        }),
      );
    } catch (error) {
      if (!(error instanceof Rerun)) throw error;
      // The transaction rolled back: nothing of the unguarded run is left, and its after ops are dropped.
      this.#reruns++;
      this.#guardNext = true;
      return this.#run(group, true);
    }
    if (guarded && outcomes.every((o) => o.ok)) this.#guardNext = false;
    return { outcomes, after };
  }

  #flush(): void {
    const readsCame = performance.now() - this.#readAt < READ_WINDOW_MS;
    const group = this.#queue.splice(0, readsCame ? MAX_GROUP : MAX_GROUP_WITHOUT_READS);
    if (group.length > this.#largestGroup) this.#largestGroup = group.length;
    if (this.#queue.length > 0) this.#schedule();
    if (group.length === 0) return;
    let ran: { outcomes: Outcome[]; after: (() => void)[] };
    try {
      ran = this.#run(group, this.#guardNext);
    } catch (cause) {
      const error = new UnavailableError('the write transaction did not commit; nothing of it was stored', {
        code: 'commit_failed',
        cause,
      });
      for (const { reject } of group) reject(error);
      return;
    }
    const { outcomes, after } = ran;
    this.#groups++;
    this.#writes += group.length;
    for (const op of after) op();
    const durable = this.#wal.sync().then(
      () => group.forEach(({ resolve, reject }, i) => settle(outcomes[i]!, resolve, reject)),
      (cause: unknown) => {
        const error = new UnavailableError(
          'the write committed but the disk did not confirm it: it may be lost on power failure; retry with the same request_id',
          { code: 'sync_failed', cause },
        );
        for (const { reject } of group) reject(error);
      },
    );
    this.#inFlight.add(durable);
    void durable.finally(() => this.#inFlight.delete(durable));
    this.#armIdle();
  }

  /** Runs an empty group once writes paused for `IDLE_MS`, while the `around` hook has work left. */
  #armIdle(): void {
    if (this.#idleWork === undefined || this.#closing || !this.#idleWork()) return;
    clearTimeout(this.#idleTimer);
    this.#idleTimer = setTimeout(() => {
      this.#idleTimer = undefined;
      if (this.#closing || this.#queue.length > 0 || this.#scheduled) return; // a group will re-arm it
      if (this.#idleWork?.() === true) void this.run(() => undefined).catch(() => undefined);
    }, IDLE_MS);
    this.#idleTimer.unref();
  }
}

function settle(outcome: Outcome, resolve: (value: unknown) => void, reject: (error: unknown) => void): void {
  if (outcome.ok) resolve(outcome.value);
  else reject(outcome.error);
}
