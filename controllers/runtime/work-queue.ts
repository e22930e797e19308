/**
 * A controller work queue: keys (app names) waiting to be reconciled.
 *
 * Like client-go's workqueue: a key is queued at most once; a key being processed is never handed
 * to a second worker, and if it is added meanwhile it is marked dirty and queued again when the
 * first run finishes. Delayed adds (`addAfter`) serve backoff and `requeueAfterMs`.
 */

/** Per-key exponential backoff for failed reconciles. */
export interface BackoffOptions {
  /** First retry delay. @default 50 */
  readonly baseMs?: number;
  /** Ceiling of the delay. @default 30000 */
  readonly maxMs?: number;
}

/** Queue of keys with per-key exclusivity and delayed adds. */
export class WorkQueue {
  private readonly queue: string[] = [];
  private readonly queued = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly dirty = new Set<string>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly failures = new Map<string, number>();
  private readonly waiters: ((key: string | undefined) => void)[] = [];
  private readonly idleWaiters: (() => void)[] = [];
  private shuttingDown = false;
  private readonly baseMs: number;
  private readonly maxMs: number;

  constructor(options: BackoffOptions = {}) {
    this.baseMs = options.baseMs ?? 50;
    this.maxMs = options.maxMs ?? 30_000;
  }

  /** Queues `key` now (no-op if already queued; marks dirty if being processed). */
  add(key: string): void {
    if (this.shuttingDown) return;
    const timer = this.timers.get(key);
    if (timer) {
      clearTimeout(timer);
      this.timers.delete(key);
    }
    if (this.processing.has(key)) {
      this.dirty.add(key);
      return;
    }
    if (this.queued.has(key)) return;
    const waiter = this.waiters.shift();
    if (waiter) {
      this.processing.add(key);
      waiter(key);
      return;
    }
    this.queued.add(key);
    this.queue.push(key);
  }

  /** Queues `key` after `delayMs`, unless an earlier add happens first. */
  addAfter(key: string, delayMs: number): void {
    if (this.shuttingDown) return;
    if (delayMs <= 0) return this.add(key);
    if (this.timers.has(key) || this.queued.has(key)) return;
    const timer = setTimeout(() => {
      this.timers.delete(key);
      this.add(key);
    }, delayMs);
    this.timers.set(key, timer);
  }

  /** Queues `key` after its backoff delay and counts the failure. */
  addRateLimited(key: string): number {
    const failures = (this.failures.get(key) ?? 0) + 1;
    this.failures.set(key, failures);
    const delay = Math.min(this.maxMs, this.baseMs * 2 ** (failures - 1));
    this.addAfter(key, delay);
    return delay;
  }

  /** Clears the failure count of `key` after a successful reconcile. */
  forget(key: string): void {
    this.failures.delete(key);
  }

  /** Failures counted for `key` since its last success. */
  failuresOf(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  /** Waits for the next key; resolves undefined when the queue shuts down. */
  async get(): Promise<string | undefined> {
    if (this.shuttingDown) return undefined;
    const key = this.queue.shift();
    if (key !== undefined) {
      this.queued.delete(key);
      this.processing.add(key);
      return key;
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Marks `key` finished; a key added while it ran is queued again. */
  done(key: string): void {
    this.processing.delete(key);
    if (this.dirty.delete(key)) this.add(key);
    this.checkIdle();
  }

  /** Keys queued or in flight (delayed keys excluded). */
  get depth(): number {
    return this.queue.length + this.processing.size;
  }

  /** Resolves when nothing is queued or processing (delayed adds may still be pending). */
  whenIdle(): Promise<void> {
    if (this.depth === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Stops handing out keys and cancels delayed adds. */
  shutDown(): void {
    this.shuttingDown = true;
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    for (const waiter of this.waiters.splice(0)) waiter(undefined);
    this.queue.length = 0;
    this.queued.clear();
    this.checkIdle();
  }

  private checkIdle(): void {
    if (this.depth !== 0) return;
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }
}
