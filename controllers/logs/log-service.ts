/**
 * Log service: the app log store behind the capture sink, reads with filters, live followers, and
 * the store's background work (word indexing and the size and age bounds) run in bounded steps.
 */
import type { Logger } from 'pino';
import { NotFoundError } from '../../domain/errors.js';
import {
  matchesLogFilter,
  type CaptureOffset,
  type CapturedLine,
  type LogFilter,
  type LogLine,
  type LogQuery,
  type LogSink,
  type LogStream,
} from '../../domain/logs/index.js';
import type { LogStore } from '../../store/logs/log-store.js';

/** What a follower receives: stored lines in capture order. */
export type LogListener = (lines: readonly LogLine[]) => void;

export interface LogServiceOptions {
  readonly store: LogStore;
  /** True when the app is known (404 otherwise). */
  readonly appExists: (app: string) => boolean;
  readonly logger: Logger;
  /** How often age pruning runs besides after appends. @default 60s */
  readonly pruneIntervalMs?: number;
}

/** Serves captured app logs and feeds followers. */
export class LogService implements LogSink {
  readonly #store: LogStore;
  readonly #options: LogServiceOptions;
  readonly #listeners = new Set<{ filter: LogFilter; listener: LogListener }>();
  #housekeeping: NodeJS.Timeout | undefined;
  readonly #timer: NodeJS.Timeout;
  #closed = false;

  constructor(options: LogServiceOptions) {
    this.#store = options.store;
    this.#options = options;
    this.#timer = setInterval(() => this.#scheduleHousekeeping(), options.pruneIntervalMs ?? 60_000);
    this.#timer.unref();
    this.#scheduleHousekeeping();
  }

  append(lines: readonly CapturedLine[], offsets: readonly CaptureOffset[]): void {
    if (this.#closed) return;
    const stored = this.#store.append(lines, offsets);
    if (stored.length > 0) {
      for (const { filter, listener } of this.#listeners) {
        const matching = stored.filter((line) => matchesLogFilter(line, filter));
        if (matching.length === 0) continue;
        try {
          listener(matching);
        } catch (error) {
          this.#options.logger.warn({ err: error }, 'log follower failed');
        }
      }
    }
    this.#scheduleHousekeeping();
  }

  offsetOf(allocation: string, stream: LogStream): number | undefined {
    return this.#store.offsetOf(allocation, stream);
  }

  /** The newest `limit` lines matching `query`, oldest first; 404 for an unknown app. */
  read(query: LogQuery): LogLine[] {
    this.assertApp(query.app);
    return this.#store.query(query);
  }

  /**
   * Sends the newest `backlog` matching lines, then every new matching line, to `listener` until
   * the returned function is called. Follows the app, not an allocation: lines of allocations that
   * a redeploy starts arrive the same way.
   */
  follow(filter: LogFilter, backlog: number, listener: LogListener): () => void {
    this.assertApp(filter.app);
    // Reads and appends run on this thread: nothing lands between the backlog and the subscription.
    const entry = { filter: { ...filter, until: undefined }, listener };
    const initial = backlog > 0 ? this.#store.query({ ...filter, limit: backlog }) : [];
    this.#listeners.add(entry);
    if (initial.length > 0) listener(initial);
    return () => this.#listeners.delete(entry);
  }

  /** Throws NotFoundError unless `app` is known. */
  assertApp(app: string): void {
    if (!this.#options.appExists(app))
      throw new NotFoundError(`app ${app} not found`, { code: 'app_not_found', details: { app } });
  }

  /** Followers now attached. */
  followers(): number {
    return this.#listeners.size;
  }

  close(): void {
    this.#closed = true;
    clearInterval(this.#timer);
    // A timeout, never an immediate: clearImmediate on a timeout corrupts Node's immediate queue
    // counts, and the event loop then spins in processImmediate for good.
    if (this.#housekeeping !== undefined) clearTimeout(this.#housekeeping);
    this.#listeners.clear();
  }

  /** Runs indexing and pruning a step at a time, yielding the event loop between steps. */
  #scheduleHousekeeping(): void {
    if (this.#housekeeping !== undefined || this.#closed) return;
    this.#housekeeping = setTimeout(() => {
      this.#housekeeping = undefined;
      if (this.#closed) return;
      let more = false;
      try {
        more = this.#store.pruneStep();
        more = this.#store.indexStep() || more;
      } catch (error) {
        this.#options.logger.error({ err: error }, 'log store housekeeping failed');
        return;
      }
      if (more) this.#scheduleHousekeeping();
    }, 5);
  }
}
