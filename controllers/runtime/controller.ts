/**
 * Controller runtime: runs one level-based `reconcile(key)` over a work queue with a few workers,
 * backoff on failure, and a periodic resync that re-enqueues every known key.
 */
import type { Logger } from '../../platform/logger.js';
import { TerminalReconcileError } from '../errors.js';
import { WorkQueue, type BackoffOptions } from './work-queue.js';

/** What a reconcile asks for next. */
export interface ReconcileResult {
  /** Reconcile this key again after this long (polling observed state). */
  readonly requeueAfterMs?: number;
}

/** One controller's reconcile logic. It re-reads desired and observed state on every call. */
export interface Reconciler {
  readonly name: string;
  reconcile(key: string): Promise<ReconcileResult | void>;
  /** Every key the controller should look at on a resync. */
  listKeys(): Promise<readonly string[]> | readonly string[];
}

export interface ControllerOptions extends BackoffOptions {
  /** Parallel workers; one key never runs on two at once. @default 2 */
  readonly workers?: number;
  /** Period of the full resync; 0 disables it. @default 30000 */
  readonly resyncMs?: number;
}

/** A running controller. */
export class Controller {
  readonly queue: WorkQueue;
  private readonly workers: number;
  private readonly resyncMs: number;
  private resyncTimer: NodeJS.Timeout | undefined;
  private running: Promise<void>[] = [];
  /** Reconciles finished, by outcome (for metrics and tests). */
  readonly counts = { ok: 0, failed: 0, terminal: 0 };
  private readonly listeners = new Set<(key: string, error?: unknown) => void>();

  constructor(
    private readonly reconciler: Reconciler,
    private readonly logger: Logger,
    options: ControllerOptions = {},
  ) {
    this.queue = new WorkQueue(options);
    this.workers = options.workers ?? 2;
    this.resyncMs = options.resyncMs ?? 30_000;
  }

  /** Starts the workers and the resync loop, and enqueues every key once. */
  async start(): Promise<void> {
    for (let i = 0; i < this.workers; i += 1) this.running.push(this.work());
    await this.resync();
    if (this.resyncMs > 0) {
      this.resyncTimer = setInterval(
        () => void this.resync().catch((err: unknown) => this.logger.error({ err }, 'resync failed')),
        this.resyncMs,
      );
      this.resyncTimer.unref();
    }
  }

  /** Enqueues `key` for reconciliation. */
  enqueue(key: string): void {
    this.queue.add(key);
  }

  /** Enqueues every key the reconciler lists. */
  async resync(): Promise<void> {
    for (const key of await this.reconciler.listKeys()) this.queue.add(key);
  }

  /** Resolves when no key is queued or being reconciled. */
  whenIdle(): Promise<void> {
    return this.queue.whenIdle();
  }

  /** Calls `listener` after every reconcile of any key (with the error when it failed); returns an unsubscribe. */
  onReconciled(listener: (key: string, error?: unknown) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Stops workers after their current key. */
  async stop(): Promise<void> {
    if (this.resyncTimer) clearInterval(this.resyncTimer);
    this.queue.shutDown();
    await Promise.all(this.running);
    this.running = [];
  }

  private async work(): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      const log = this.logger.child({ controller: this.reconciler.name, key });
      let failure: unknown;
      try {
        const result = await this.reconciler.reconcile(key);
        this.queue.forget(key);
        this.counts.ok += 1;
        if (result?.requeueAfterMs !== undefined) this.queue.addAfter(key, result.requeueAfterMs);
      } catch (error) {
        failure = error;
        if (error instanceof TerminalReconcileError) {
          this.counts.terminal += 1;
          this.queue.forget(key);
          log.error({ err: error }, 'reconcile failed terminally; waiting for the key to change');
        } else {
          this.counts.failed += 1;
          const delay = this.queue.addRateLimited(key);
          log.warn(
            { err: error, retryInMs: delay, failures: this.queue.failuresOf(key) },
            'reconcile failed; retrying',
          );
        }
      } finally {
        this.queue.done(key);
      }
      for (const listener of this.listeners) listener(key, failure);
    }
  }
}
