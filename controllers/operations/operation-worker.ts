/**
 * The operation worker: claims queued operations under a lease (renewed by a heartbeat), runs the
 * handler of each kind with a bounded concurrency, one running operation per app, and recovers
 * interrupted operations at start, in a periodic sweep and at stop.
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Operation } from '../../domain/operations/index.js';
import { ConflictError } from '../../domain/errors.js';
import type { Logger } from '../../platform/logger.js';
import type { Db } from '../../store/database.js';
import {
  claimOperations,
  countOperations,
  finishOperations,
  getOperation,
  recordStage,
  recoverOperations,
  renewLeases,
  retryOperation,
  type RecoveredOperation,
} from '../../store/control/operations/operations.js';
import { purgeExpiredIdempotencyKeys } from '../../store/control/idempotency.js';
import { RetryableOperationError } from '../errors.js';
import type { OperationHandlers } from './operation-handlers.js';
import type { AuditReceipts } from '../audit/audit-receipts.js';

/** Behaviour while operations are active and the platform is asked to stop or upgrade (`SVC_DRAIN_MODE`). */
export const DrainMode = { fail: 'fail', wait: 'wait', force: 'force' } as const;
export type DrainMode = (typeof DrainMode)[keyof typeof DrainMode];

/** Options of the worker. */
export interface OperationWorkerOptions {
  readonly db: Db;
  readonly handlers: OperationHandlers;
  readonly logger: Logger;
  /** Operations run at once (never two of one app). @default 2 */
  readonly concurrency?: number;
  /** Lease length; a running operation whose lease expired is recovered by the sweeper. @default 30000 */
  readonly leaseMs?: number;
  /** Poll period for due retries and released dependencies. @default 500 */
  readonly pollMs?: number;
  /** @default fail */
  readonly drainMode?: DrainMode;
  /** Candidate APIs run with recovery and workers disabled. @default true */
  readonly enabled?: boolean;
  /** Stages of a running `platform.upgrade` during which no app operation is claimed. @default none */
  readonly holdStages?: readonly string[];
  /**
   * Audit receipts (production profile, ADR 0187): each operation of a mutating kind reserves a
   * signed receipt before its handler runs; when the receipt cannot be written, the operation fails
   * without running. @default none
   */
  readonly receipts?: AuditReceipts;
}

/** Kinds that only check and change nothing: they reserve no receipt. */
const CHECK_ONLY_KINDS: ReadonlySet<string> = new Set(['app.preflight', 'platform.preflight', 'platform.smoke']);

/** The queue and drain state served by `GET /api/operations/active`. */
export interface DrainState {
  readonly draining: boolean;
  readonly mode: DrainMode;
  readonly workerEnabled: boolean;
  readonly owner: string;
  readonly running: number;
}

/** A running operation worker. */
export class OperationWorker {
  /** This process's lock owner identity: host, pid and a random boot token. */
  readonly owner: string;
  readonly #options: OperationWorkerOptions;
  readonly #log: Logger;
  readonly #leaseMs: number;
  readonly #concurrency: number;
  readonly #running = new Map<string, { controller: AbortController; done: Promise<void> }>();
  readonly #listeners = new Set<(operation: Operation) => void>();
  #timer: NodeJS.Timeout | undefined;
  #heartbeat: NodeJS.Timeout | undefined;
  #sweeper: NodeJS.Timeout | undefined;
  #stopping = false;
  #draining = false;
  #pumping = false;
  #pumpAgain = false;
  /** Finished attempts waiting for the next group commit. */
  #finishes: {
    id: string;
    status: 'succeeded' | 'failed';
    result?: Readonly<Record<string, unknown>>;
    error?: string;
  }[] = [];
  #flushScheduled = false;

  constructor(options: OperationWorkerOptions) {
    this.#options = options;
    this.#log = options.logger.child({ component: 'operation-worker' });
    this.#leaseMs = options.leaseMs ?? 30_000;
    this.#concurrency = options.concurrency ?? 2;
    this.owner = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  }

  /** Recovers what a previous process left running, then starts claiming. */
  start(): RecoveredOperation[] {
    if (this.#options.enabled === false) return [];
    const recovered = recoverOperations(this.#options.db, {
      owner: this.owner,
      mode: 'startup',
      kinds: this.#options.handlers.kinds(),
    });
    this.#afterRecovery(recovered, 'start');
    this.#timer = setInterval(() => this.wake(), this.#options.pollMs ?? 500);
    this.#timer.unref();
    this.#heartbeat = setInterval(() => this.#beat(), Math.max(50, Math.floor(this.#leaseMs / 3)));
    this.#heartbeat.unref();
    this.#sweeper = setInterval(() => this.sweep(), Math.max(100, this.#leaseMs));
    this.#sweeper.unref();
    this.wake();
    return recovered;
  }

  /** Recovers running operations whose lease expired (a hung or lost worker) and purges expired idempotency keys. */
  sweep(): RecoveredOperation[] {
    // This worker's own operations are alive (they run here): their leases are renewed first. After
    // the event loop stalled longer than the lease (a synchronous copy on a loaded host), the sweeper
    // may fire before the heartbeat and would otherwise abort and requeue its own operation, each
    // stall costing an attempt (a platform upgrade's stage step: attempts ran out under load).
    try {
      renewLeases(this.#options.db, this.owner, this.#leaseMs);
    } catch (error) {
      this.#log.error({ err: error }, 'lease renewal before the sweep failed');
    }
    const recovered = recoverOperations(this.#options.db, {
      owner: this.owner,
      mode: 'expired',
      kinds: this.#options.handlers.kinds(),
    });
    for (const r of recovered) this.#running.get(r.operation.id)?.controller.abort(new Error('lease expired'));
    this.#afterRecovery(recovered, 'sweep');
    purgeExpiredIdempotencyKeys(this.#options.db);
    return recovered;
  }

  /** Asks the worker to look for claimable operations now (after an enqueue). */
  wake(): void {
    if (this.#stopping || this.#draining || this.#options.enabled === false) return;
    if (this.#pumping) {
      this.#pumpAgain = true;
      return;
    }
    this.#pumping = true;
    try {
      do {
        this.#pumpAgain = false;
        const free = this.#concurrency - this.#running.size;
        if (free > 0) {
          // One transaction claims every free slot's operation.
          const { claimed, dependencyFailures } = claimOperations(this.#options.db, {
            owner: this.owner,
            leaseMs: this.#leaseMs,
            kinds: this.#options.handlers.kinds(),
            limit: free,
            ...(this.#options.holdStages ? { holdStages: this.#options.holdStages } : {}),
          });
          for (const failure of dependencyFailures) {
            this.#options.handlers.get(failure.operation.kind)?.abandoned?.(failure.operation, failure.reason);
            this.#notify(failure.operation);
          }
          for (const operation of claimed) this.#launch(operation);
          if (dependencyFailures.length > 0) this.#pumpAgain = true;
        }
      } while (this.#pumpAgain);
    } catch (error) {
      this.#log.error({ err: error }, 'claiming operations failed');
    } finally {
      this.#pumping = false;
    }
  }

  /** Calls `listener` with the row each time an operation reaches a terminal state or is requeued; returns an unsubscribe. */
  onFinished(listener: (operation: Operation) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Resolves with the operation once it is terminal. */
  waitFor(id: string, timeoutMs = 60_000): Promise<Operation> {
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        const op = getOperation(this.#options.db, id);
        if (!op) {
          finish(() => reject(new Error(`operation ${id} does not exist`)));
          return true;
        }
        if (op.status === 'succeeded' || op.status === 'failed' || op.status === 'cancelled') {
          finish(() => resolve(op));
          return true;
        }
        return false;
      };
      const unsubscribe = this.onFinished((op) => {
        if (op.id === id) check();
      });
      const timer = setTimeout(
        () => finish(() => reject(new Error(`timed out after ${timeoutMs} ms waiting for operation ${id}`))),
        timeoutMs,
      );
      const finish = (fn: () => void) => {
        clearTimeout(timer);
        unsubscribe();
        fn();
      };
      check();
    });
  }

  /** Number of operations this worker runs right now. */
  get runningCount(): number {
    return this.#running.size;
  }

  /** Queue and drain state. */
  drainState(): DrainState {
    return {
      draining: this.#draining || this.#stopping,
      mode: this.#options.drainMode ?? 'fail',
      workerEnabled: this.#options.enabled !== false,
      owner: this.owner,
      running: this.#running.size,
    };
  }

  /** Stops claiming new work (running operations continue); `resume` undoes it. */
  drain(): void {
    this.#draining = true;
  }

  /**
   * The drain gate of a platform restart or upgrade, by `SVC_DRAIN_MODE`: `fail` refuses while
   * operations are queued or running (409 `operations_active`), `wait` stops claiming and resolves
   * once nothing runs, `force` resolves at once.
   */
  async drainGate(options: { timeoutMs?: number } = {}): Promise<{ mode: DrainMode; waitedMs: number }> {
    const mode = this.#options.drainMode ?? 'fail';
    const started = Date.now();
    if (mode === 'force') return { mode, waitedMs: 0 };
    const active = countOperations(this.#options.db);
    if (mode === 'fail') {
      if (active.running + active.queued > 0) {
        throw new ConflictError(
          `${active.running} running and ${active.queued} queued operation(s): SVC_DRAIN_MODE=fail refuses to drain`,
          { code: 'operations_active', details: { running: active.running, queued: active.queued } },
        );
      }
      return { mode, waitedMs: 0 };
    }
    this.drain();
    const deadline = started + (options.timeoutMs ?? 10 * 60_000);
    while (this.#running.size > 0) {
      if (Date.now() > deadline)
        throw new ConflictError(`operations still running after ${options.timeoutMs ?? 600_000} ms`, {
          code: 'drain_timeout',
        });
      await Promise.race([...this.#running.values()].map((r) => r.done));
    }
    return { mode, waitedMs: Date.now() - started };
  }

  resume(): void {
    this.#draining = false;
    this.wake();
  }

  /**
   * Stops: no new claims; running handlers are aborted and awaited, and what they left running is
   * recovered like a crash (requeued before a mutable stage, failed visibly after one).
   */
  async stop(): Promise<void> {
    this.#stopping = true;
    for (const timer of [this.#timer, this.#heartbeat, this.#sweeper]) if (timer) clearInterval(timer);
    // SVC_DRAIN_MODE=wait lets running operations finish; otherwise they are interrupted and recovered.
    if ((this.#options.drainMode ?? 'fail') !== 'wait') {
      for (const { controller } of this.#running.values()) controller.abort(new Error('the control plane is stopping'));
    }
    await Promise.all([...this.#running.values()].map((r) => r.done));
    // Every handler has settled: what is still running was interrupted by this stop.
    this.#afterRecovery(
      recoverOperations(this.#options.db, { owner: '', mode: 'startup', kinds: this.#options.handlers.kinds() }),
      'stop',
    );
  }

  #beat(): void {
    try {
      if (this.#running.size > 0) renewLeases(this.#options.db, this.owner, this.#leaseMs);
    } catch (error) {
      this.#log.error({ err: error }, 'lease heartbeat failed');
    }
  }

  #afterRecovery(recovered: readonly RecoveredOperation[], when: string): void {
    for (const { operation, decision } of recovered) {
      this.#log.warn(
        {
          operation: operation.id,
          kind: operation.kind,
          app: operation.app,
          action: decision.action,
          reason: decision.reason,
          when,
        },
        'interrupted operation recovered',
      );
      try {
        this.#options.handlers.get(operation.kind)?.recovered?.(operation, decision);
      } catch (error) {
        this.#log.error({ err: error, operation: operation.id }, 'recovery hook failed');
      }
      this.#notify(operation);
    }
  }

  #notify(operation: Operation): void {
    for (const listener of this.#listeners) {
      try {
        listener(operation);
      } catch (error) {
        this.#log.error({ err: error }, 'operation listener failed');
      }
    }
  }

  /**
   * Records a finished attempt with the others finishing in the same tick, in one transaction (a
   * group commit: one fsync for many operations); resolves once it is on disk.
   */
  #finish(outcome: {
    id: string;
    status: 'succeeded' | 'failed';
    result?: Readonly<Record<string, unknown>>;
    error?: string;
  }): Promise<void> {
    this.#finishes.push(outcome);
    if (!this.#flushScheduled) {
      this.#flushScheduled = true;
      this.#flushed = new Promise<void>((resolve) =>
        setImmediate(() => {
          const batch = this.#finishes;
          this.#finishes = [];
          this.#flushScheduled = false;
          try {
            finishOperations(this.#options.db, this.owner, batch);
          } catch (error) {
            this.#log.error(
              { err: error, operations: batch.map((b) => b.id) },
              'recording finished operations failed; recovery will settle them',
            );
          }
          resolve();
        }),
      );
    }
    return this.#flushed;
  }

  #flushed: Promise<void> = Promise.resolve();
  #wakeScheduled = false;

  /** Wakes once after every attempt finishing in this tick released its slot (one claim transaction for all). */
  #wakeSoon(): void {
    if (this.#wakeScheduled) return;
    this.#wakeScheduled = true;
    setImmediate(() => {
      this.#wakeScheduled = false;
      this.wake();
    });
  }

  #launch(operation: Operation): void {
    const controller = new AbortController();
    const log = this.#log.child({
      operation: operation.id,
      kind: operation.kind,
      app: operation.app,
      sagaId: operation.sagaId,
    });
    const handler = this.#options.handlers.get(operation.kind);
    const done = (async () => {
      const db = this.#options.db;
      try {
        if (!handler) throw new Error(`no handler for kind ${operation.kind}`);
        const run = () =>
          handler.run({
            operation,
            signal: controller.signal,
            logger: log,
            stage: (stage, mutable) => {
              if (!recordStage(db, operation.id, this.owner, stage, mutable))
                throw new Error(`operation ${operation.id} is no longer held by this worker`);
            },
          });
        const receipts = this.#options.receipts;
        const result =
          receipts === undefined || CHECK_ONLY_KINDS.has(operation.kind)
            ? await run()
            : await receipts.guard({
                reservation: {
                  actor: 'operation-worker',
                  action: operation.kind,
                  target: operation.app === null ? 'platform' : `app:${operation.app}`,
                  refs: { operation: operation.id, attempt: String(operation.attempts) },
                },
                run,
                refsOf: () => ({ operation: operation.id }),
              });
        await this.#finish({ id: operation.id, status: 'succeeded', ...(result ? { result } : {}) });
      } catch (error) {
        if (controller.signal.aborted && this.#stopping) return;
        const message = error instanceof Error ? error.message : String(error);
        if (error instanceof RetryableOperationError) {
          const outcome = retryOperation(db, operation.id, this.owner, message, error.retryAfterMs);
          log.warn({ outcome, err: message }, 'operation attempt failed');
        } else {
          await this.#finish({ id: operation.id, status: 'failed', error: message });
          log.info({ err: message }, 'operation failed');
        }
      } finally {
        this.#running.delete(operation.id);
        const row = getOperation(db, operation.id);
        if (row && !this.#stopping) this.#notify(row);
        if (!this.#stopping) this.#wakeSoon();
      }
    })();
    this.#running.set(operation.id, { controller, done });
  }
}
