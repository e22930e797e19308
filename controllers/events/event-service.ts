/**
 * Event service: records events durably (dedupe, correlated recovery, outbox rows in one
 * transaction), serves queries and applies operator state changes and incident actions.
 *
 * Emits are grouped: the emits queued while the previous group's fdatasync runs (or in one event-loop
 * tick when none runs) commit in one transaction, and each emit's promise resolves only after that
 * commit is on disk (docs/adr/0070-event-store-and-ingest.md, 0192, 0194).
 */
import type { Db } from '../../store/database.js';
import type { Logger } from '../../platform/logger.js';
import { NotFoundError, UnavailableError } from '../../domain/errors.js';
import { WalDurability } from '../../store/knowledge/wal-durability.js';
import type { CheckpointStats } from '../../store/knowledge/wal-checkpointer.js';
import type { EmitResult, EventEmitterPort, EventInput } from '../../domain/events/event-port.js';
import { DEDUPE_WINDOW_MS, type EventRecord } from '../../domain/events/event-record.js';
import { RecentDedupeKeys } from './recent-dedupe-keys.js';
import type { Clock } from '../../domain/events/clock.js';
import {
  changeEventState,
  dedupeSeenMs,
  getEvent,
  insertEvent,
  listEvents,
  publicEvent,
  pruneDedupe,
  recentDedupeKeys,
  timelineEvents,
  type ActiveGroup,
  type EventFilter,
  type NewEventRow,
  type StateChange,
  type TimelineSelector,
} from '../../store/control/events.js';
import { enqueueDeliveries } from '../../store/control/event-outbox.js';
import { snoozeUntilMs } from './parse-snooze.js';
import { normalizeEvent, recordOf } from './event-rows.js';
import { ActiveGroupsView } from './active-groups-view.js';
import { recoverCorrelated } from './correlated-recovery.js';
import { applyIncidentAction, type IncidentActionRequest, type IncidentActionResult } from './incident-actions.js';

/** What changed after a commit, for the live stream, metrics and the dispatcher. */
export interface EventChange {
  readonly kind: 'recorded' | 'updated';
  readonly event: EventRecord;
}

export interface EventServiceOptions {
  readonly db: Db;
  readonly clock: Clock;
  /** Source name of this platform's own events. @default svc-control-plane */
  readonly source: string;
  /** Environment of events that name none (`SVC_EVENT_ENVIRONMENT` or `--event-environment`, else `SVC_ENVIRONMENT`). */
  readonly environment: string;
  /**
   * Host id stamped on every event as `metadata.hostId` unless the event names its own
   * (`SVC_HOST_ID` or `--host-id`, else the persisted short hostname). @default not stamped
   */
  readonly hostId?: string;
  readonly logger: Logger;
  /** Outbox targets for a recorded event (the sink, matching channels). */
  readonly deliveryTargets?: (event: NewEventRow) => readonly string[];
  /**
   * Dedupe keys of the last hour kept in memory at most (the newest); older ones are found in
   * control.db by the commit, which decides. @default 100000 (docs/adr/0212)
   */
  readonly dedupeKeysInMemory?: number;
}

interface Pending {
  readonly row: NewEventRow;
  readonly resolve: (result: EmitResult) => void;
  readonly reject: (error: unknown) => void;
}

/** A committed batch waiting for the fdatasync that makes it durable. */
interface Committed {
  readonly batch: readonly Pending[];
  readonly results: readonly EmitResult[];
  readonly changes: readonly EventChange[];
  readonly nowMs: number;
}

/** Emits queued during an fdatasync that commit without waiting for it to end. */
const MAX_DEFERRED = 1024;

/** The event services' core. */
export class EventService implements EventEmitterPort {
  private readonly db: Db;
  private readonly clock: Clock;
  private readonly log: Logger;
  private queue: Pending[] = [];
  private flushScheduled = false;
  /** Group commit (ADR 0192): a batch commits without an fsync, and one fdatasync off the event loop makes it durable. */
  private readonly durability: WalDurability;
  /** fdatasyncs running (0 or 1). */
  private syncing = 0;
  /** Batches committed and waiting for the next fdatasync. */
  private committed: Committed[] = [];
  /** The dedupe window's fast path (docs/adr/0212); the commit's read of control.db decides. */
  private readonly seen: RecentDedupeKeys;
  private readonly listeners = new Set<(changes: readonly EventChange[]) => void>();
  private lastPruneMs = 0;

  /** Unresolved incident groups, kept up to date incrementally. */
  private readonly activeView: ActiveGroupsView;

  constructor(private readonly options: EventServiceOptions) {
    this.db = options.db;
    this.activeView = new ActiveGroupsView(this.db);
    this.clock = options.clock;
    this.log = options.logger;
    // WAL checkpoints run in a worker thread once the WAL passes 2 MiB (docs/adr/0166, 0209): SQLite's
    // automatic one ran inside the group commit that crossed 1,000 pages, on the event loop.
    this.durability = new WalDurability(this.db, { checkpointsInWorker: true });
    this.seen = new RecentDedupeKeys(options.dedupeKeysInMemory);
    for (const { key, seenMs } of recentDedupeKeys(this.db, this.clock.now() - DEDUPE_WINDOW_MS, this.seen.cap))
      this.seen.remember(key, { seenMs });
  }

  /** The source name of the platform's own events. */
  get source(): string {
    return this.options.source;
  }

  get environment(): string {
    return this.options.environment;
  }

  /** Calls `listener` after every commit with the events recorded or changed by it. */
  subscribe(listener: (changes: readonly EventChange[]) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Like {@link emit}, answering the recorded event itself (for `POST /api/events`). */
  async emitRecord(
    input: EventInput,
  ): Promise<{ recorded: true; event: EventRecord } | { recorded: false; reason: 'duplicate' }> {
    const row = normalizeEvent(input, this.options, this.clock);
    const result = await this.emitRow(row);
    return result.recorded ? { recorded: true, event: recordOf(row) } : result;
  }

  /** Records an event unless its dedupeKey was recorded in the last hour; resolves after commit. */
  async emit(input: EventInput): Promise<EmitResult> {
    return this.emitRow(normalizeEvent(input, this.options, this.clock));
  }

  private async emitRow(row: NewEventRow): Promise<EmitResult> {
    const key = row.dedupeKey;
    if (key !== null) {
      const entry = this.seen.recent(key, this.clock.now());
      if (entry) {
        if (entry.pending) {
          try {
            await entry.pending;
          } catch {
            // the first emit failed and forgot the key: try again as a fresh event
            return this.emitRow(row);
          }
        }
        return { recorded: false, reason: 'duplicate' };
      }
    }
    const promise = new Promise<EmitResult>((resolve, reject) => {
      this.queue.push({ row, resolve, reject });
    });
    if (key !== null) this.seen.remember(key, { seenMs: this.clock.now(), pending: promise });
    this.scheduleFlush();
    return promise;
  }

  /**
   * Asks for a commit of the queue. While an fdatasync of the WAL runs, the queue waits for it to
   * end and commits then, as one transaction: every emit queued meanwhile would wait for the next
   * fdatasync anyway, and one transaction writes each page it touches (table, index and group pages
   * shared by the batch) into the WAL once instead of once per event-loop tick (ADR 0194). A queue
   * of {@link MAX_DEFERRED} emits commits without waiting, so no single transaction grows unbounded
   * under a slow disk.
   */
  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    if (this.syncing > 0 && this.queue.length < MAX_DEFERRED) return;
    this.flushScheduled = true;
    // Under sustained ingest the WAL restarts only if commits pause for one checkpoint of the worker
    // (docs/adr/0205): the queue waits for it; the event loop does not.
    const gate = this.durability.restartGate();
    if (gate === undefined) setImmediate(() => this.flush());
    else this.flushAfter(gate);
  }

  /** Flushes once `gate` (a checkpoint that lets the WAL restart) has resolved. */
  private flushAfter(gate: Promise<void>): void {
    this.flushScheduled = true;
    void gate.then(() => setImmediate(() => this.flush()));
  }

  /** Commits the queue (if any), then starts an fdatasync unless one runs. */
  private flush(): void {
    this.flushScheduled = false;
    this.commitQueue();
    this.startSync();
  }

  /** Commits every queued emit in one transaction; the batch waits for the next fdatasync to be answered. */
  private commitQueue(): void {
    const batch = this.queue;
    this.queue = [];
    if (batch.length === 0) return;
    const nowMs = this.clock.now();
    const changes: EventChange[] = [];
    let results: EmitResult[];
    try {
      results = this.durability.commitUnsynced(() => batch.map((p) => this.record(p.row, nowMs, changes)));
    } catch (error) {
      for (const p of batch) {
        if (p.row.dedupeKey !== null) this.seen.forget(p.row.dedupeKey);
        p.reject(error);
      }
      this.log.error({ err: error, events: batch.length }, 'event batch failed to commit');
      return;
    }
    this.committed.push({ batch, results, changes, nowMs });
  }

  /**
   * One fdatasync at a time (each holds a thread of libuv's pool, which spec reads and the
   * scheduler's files share) covering every batch committed before it starts. The batch is answered
   * once its WAL frames are on disk; the event loop reads and parses the next requests meanwhile
   * (ADR 0192).
   */
  private startSync(): void {
    if (this.syncing > 0 || this.committed.length === 0) return;
    const covered = this.committed;
    this.committed = [];
    this.syncing += 1;
    void this.durability
      .sync()
      .then(
        () => undefined,
        (error: unknown) => error ?? new Error('fdatasync failed'),
      )
      .then((failure) => {
        this.syncing -= 1;
        // The emits queued during this flush commit now and the next flush starts at once, before
        // this one's callers are answered, so the disk works while they are.
        this.flushScheduled = false;
        const gate = this.durability.restartGate();
        if (gate === undefined) {
          this.commitQueue();
          this.startSync();
        } else this.flushAfter(gate);
        // The WAL descriptor is held only while a flush runs (the database may close after).
        if (this.syncing === 0) this.durability.close();
        for (const done of covered) this.answer(done, failure);
      });
  }

  /** Answers a batch after its fdatasync: resolved, or a retryable 503 when the flush failed. */
  private answer(done: Committed, failure: unknown): void {
    const { batch, results, changes, nowMs } = done;
    if (failure === undefined) {
      batch.forEach((p, i) => {
        if (p.row.dedupeKey !== null) this.seen.settled(p.row.dedupeKey);
        p.resolve(results[i]!);
      });
      this.prune(nowMs);
      this.publish(changes);
      return;
    }
    // Committed but maybe not on disk: the caller may retry (the dedupe key makes a retry safe).
    this.log.error({ err: failure, events: batch.length }, 'event batch not flushed to disk');
    const error = new UnavailableError('the event was written but not flushed to disk; retry', {
      code: 'sync_failed',
      cause: failure,
    });
    // The keys are forgotten so that a retry, or a duplicate that waited for this emit, goes to the
    // commit, whose read of control.db answers it (a kept key would hold a rejected emit forever).
    for (const p of batch) {
      if (p.row.dedupeKey !== null) this.seen.forget(p.row.dedupeKey);
      p.reject(error);
    }
    this.publish(changes);
  }

  /** Inside the transaction: dedupe against the durable window, insert, queue deliveries, recover. */
  private record(row: NewEventRow, nowMs: number, changes: EventChange[]): EmitResult {
    if (row.dedupeKey !== null) {
      const seenMs = dedupeSeenMs(this.db, row.dedupeKey);
      if (seenMs !== undefined && nowMs - seenMs < DEDUPE_WINDOW_MS) return { recorded: false, reason: 'duplicate' };
    }
    insertEvent(this.db, row);
    const targets = this.options.deliveryTargets?.(row) ?? [];
    if (targets.length > 0) enqueueDeliveries(this.db, row.id, targets, nowMs);
    changes.push({ kind: 'recorded', event: recordOf(row) });
    for (const event of recoverCorrelated(this.db, row, nowMs)) changes.push({ kind: 'updated', event });
    return { recorded: true, id: row.id };
  }

  private read(id: string, nowMs: number): EventRecord {
    return publicEvent(getEvent(this.db, id, nowMs)!);
  }

  /**
   * Once a minute, or when the keys held pass the cap, forgets old keys (docs/adr/0212): a walk from
   * the oldest that stops at the first key kept, so a commit never pays for the keys it keeps.
   */
  private prune(nowMs: number): void {
    const due = nowMs - this.lastPruneMs >= 60_000;
    if (!due && !this.seen.overCap()) return;
    if (due) {
      this.lastPruneMs = nowMs;
      pruneDedupe(this.db, nowMs - DEDUPE_WINDOW_MS);
    }
    this.seen.prune(nowMs);
  }

  /** Dedupe keys held in memory (at most `dedupeKeysInMemory`, beside the emits in flight). */
  dedupeKeysHeld(): number {
    return this.seen.size;
  }

  private publish(changes: readonly EventChange[]): void {
    if (changes.length === 0) return;
    for (const { event } of changes) {
      const scope = {
        source: event.source,
        app: event.app,
        environment: event.environment,
        correlationKey: event.correlationKey,
      };
      this.activeView.touch(scope);
    }
    for (const listener of this.listeners) {
      try {
        listener(changes);
      } catch (error) {
        this.log.error({ err: error }, 'event listener failed');
      }
    }
  }

  /** Resolves when every emit queued so far has committed or failed. */
  async flushed(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (this.queue.length > 0 || this.flushScheduled || this.syncing > 0 || this.committed.length > 0)
      await this.flushed();
  }

  /** Waits for every queued emit, then stops the checkpoint worker (before the database closes). */
  async close(): Promise<void> {
    await this.flushed();
    await this.durability.stopCheckpoints();
    this.durability.close();
  }

  /** Resolves once no WAL checkpoint runs in the checkpoint worker. */
  checkpointsIdle(): Promise<void> {
    return this.durability.checkpointsIdle();
  }

  /** The WAL checkpoints of the event commits (docs/adr/0209). */
  checkpointStats(): CheckpointStats | undefined {
    return this.durability.checkpointStats();
  }

  // ---- reads ----

  get(id: string): EventRecord {
    const event = getEvent(this.db, id, this.clock.now());
    if (!event) throw new NotFoundError(`event ${id} does not exist`, { code: 'event_not_found', details: { id } });
    return publicEvent(event);
  }

  list(filter: EventFilter): { events: EventRecord[]; total: number; limit: number; offset: number } {
    const page = listEvents(this.db, filter, this.clock.now());
    return { events: page.events.map(publicEvent), total: page.total, limit: filter.limit, offset: filter.offset };
  }

  correlated(sel: TimelineSelector & { correlationKey: string }): EventRecord[] {
    return timelineEvents(this.db, sel, this.clock.now()).map(publicEvent);
  }

  /**
   * Unresolved incident groups, most recently seen first. Served from the incrementally maintained
   * view: after a commit only the touched groups are re-read; after a snooze end, all of them.
   */
  active(): ActiveGroup[] {
    return this.activeView.list(this.clock.now());
  }

  // ---- state changes ----

  private change(ids: readonly string[], change: StateChange): EventRecord[] {
    const nowMs = this.clock.now();
    const updated = this.db.transaction(() => {
      changeEventState(this.db, ids, change);
      return ids.map((id) => this.read(id, nowMs));
    })();
    this.publish(updated.map((event) => ({ kind: 'updated' as const, event })));
    return updated;
  }

  /** Acknowledges one event, recording operator and note. */
  acknowledge(id: string, args: { by?: string; note?: string }): EventRecord {
    this.get(id);
    return this.change([id], {
      kind: 'acknowledge',
      by: args.by ?? 'operator',
      at: new Date(this.clock.now()).toISOString(),
      note: args.note ?? null,
      resolvedByEventId: null,
    })[0]!;
  }

  /** Snoozes one event until a time or for a duration. */
  snooze(id: string, args: { until?: string; duration?: string | number }): EventRecord {
    this.get(id);
    return this.change([id], { kind: 'snooze', untilMs: snoozeUntilMs(args, this.clock.now()) })[0]!;
  }

  /** Reopens one event, clearing acknowledgement and snooze. */
  reopen(id: string): EventRecord {
    this.get(id);
    return this.change([id], { kind: 'open' })[0]!;
  }

  /** Applies an incident action to a group selected by correlationKey or dedupeKey. */
  async incidentAction(req: IncidentActionRequest): Promise<IncidentActionResult> {
    return applyIncidentAction(
      {
        db: this.db,
        clock: this.clock,
        change: (ids, change) => this.change(ids, change),
        emit: (input) => this.emit(input),
      },
      req,
    );
  }
}
