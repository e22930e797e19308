/**
 * Event dispatcher: drains the durable outbox to the signed sink and notification channels,
 * asynchronously after commit, with per-target backoff. A delivery is marked delivered only
 * after its target answered 2xx, so a restart resends only what was not acknowledged, and a sink
 * outage loses nothing (sink deliveries retry until they succeed).
 */
import type { Db } from '../../store/database.js';
import type { Logger } from '../../platform/logger.js';
import type { Clock } from '../../domain/events/clock.js';
import { getEvent, publicEvent } from '../../store/control/events.js';
import {
  SINK_TARGET,
  dueDeliveries,
  markAttemptFailed,
  markDelivered,
  nextDueMs,
  nextDuePerTarget,
  type OutboxEntry,
} from '../../store/control/event-outbox.js';
import { getChannel } from '../../store/control/notification-channels.js';
import { deliverToSink, type SinkConfig } from '../../platform/notifications/event-sink.js';
import { notifyChannel } from '../../platform/notifications/notifier.js';
import type { OutboundPolicy } from '../../platform/outbound/outbound-guard.js';
import type { DeliveryResult } from '../../platform/notifications/outbound-request.js';

export interface EventDispatcherOptions {
  readonly db: Db;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly sink: SinkConfig | undefined;
  readonly outbound: OutboundPolicy;
  /** First retry delay, doubled per attempt. @default 500 */
  readonly retryBaseMs?: number;
  /** Longest retry delay. @default 60000 */
  readonly retryMaxMs?: number;
  /** Attempts per channel delivery before giving up (the sink never gives up). @default 8 */
  readonly channelAttempts?: number;
  /** Rows claimed per pass. @default 200 */
  readonly batchSize?: number;
}

/** Drains the outbox; `kick()` after each commit, a timer for retries. */
export class EventDispatcher {
  private running = false;
  private again = false;
  private closed = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly blockedUntil = new Map<string, number>();
  private idleWaiters: (() => void)[] = [];

  constructor(private readonly options: EventDispatcherOptions) {}

  /** Starts delivering what a previous process left pending. */
  start(): void {
    this.kick();
  }

  /** Asks for a pass soon (after a commit). */
  kick(): void {
    if (this.closed) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    setImmediate(() => void this.run());
  }

  private async run(): Promise<void> {
    try {
      do {
        this.again = false;
        await this.pass();
      } while (this.again && !this.closed);
    } catch (error) {
      this.options.logger.error({ err: error }, 'event dispatch pass failed');
    } finally {
      this.running = false;
      this.schedule();
    }
  }

  private schedule(): void {
    if (this.closed) return;
    clearTimeout(this.timer);
    const perTarget = nextDuePerTarget(this.options.db);
    if (perTarget.length === 0) {
      for (const resolve of this.idleWaiters.splice(0)) resolve();
      return;
    }
    const at = Math.min(...perTarget.map((t) => Math.max(t.due, this.blockedUntil.get(t.target) ?? 0)));
    const delay = Math.max(5, at - this.options.clock.now());
    this.timer = setTimeout(() => this.kick(), Math.min(delay, 60_000));
    this.timer.unref();
  }

  /** One pass: every due row, targets in parallel, each target's rows in order. */
  private async pass(): Promise<void> {
    // Closed between the kick and this pass: the database may be closed too.
    if (this.closed) return;
    const nowMs = this.options.clock.now();
    const blocked = [...this.blockedUntil.entries()].filter(([, until]) => until > nowMs).map(([target]) => target);
    const due = dueDeliveries(this.options.db, nowMs, this.options.batchSize ?? 200, blocked);
    const byTarget = new Map<string, OutboxEntry[]>();
    for (const entry of due) {
      const list = byTarget.get(entry.target) ?? [];
      list.push(entry);
      byTarget.set(entry.target, list);
    }
    await Promise.all([...byTarget.entries()].map(([target, entries]) => this.deliverTarget(target, entries)));
    if (due.length === (this.options.batchSize ?? 200)) this.again = true;
  }

  private async deliverTarget(target: string, entries: readonly OutboxEntry[]): Promise<void> {
    for (const entry of entries) {
      if (this.closed) return;
      const result = await this.deliver(entry);
      // Closed meanwhile (the database may be closed too): the row stays pending for the next start.
      if (this.closed) return;
      const nowMs = this.options.clock.now();
      if (result.ok) {
        markDelivered(this.options.db, entry.seq, new Date(nowMs).toISOString());
        this.blockedUntil.delete(target);
        continue;
      }
      const attempts = entry.attempts + 1;
      const giveUp = target !== SINK_TARGET && attempts >= (this.options.channelAttempts ?? 8);
      const delay = Math.min(
        (this.options.retryBaseMs ?? 500) * 2 ** Math.min(attempts - 1, 20),
        this.options.retryMaxMs ?? 60_000,
      );
      markAttemptFailed(
        this.options.db,
        entry.seq,
        result.error ?? `HTTP ${result.status}`,
        giveUp ? undefined : nowMs + delay,
      );
      this.options.logger.warn(
        { target, eventId: entry.eventId, attempts, error: result.error, giveUp },
        'event delivery failed',
      );
      // The target is down: leave its later rows for the retry instead of hammering it.
      this.blockedUntil.set(target, nowMs + delay);
      return;
    }
  }

  private async deliver(entry: OutboxEntry): Promise<DeliveryResult> {
    const stored = getEvent(this.options.db, entry.eventId, this.options.clock.now());
    if (!stored) return { ok: false, status: 0, error: 'event missing' };
    const event = publicEvent(stored);
    if (entry.target === SINK_TARGET) {
      if (!this.options.sink) return { ok: false, status: 0, error: 'no sink configured' };
      return deliverToSink(this.options.sink, event, new Date(this.options.clock.now()));
    }
    const channel = getChannel(this.options.db, entry.target.slice('channel:'.length));
    if (!channel) return { ok: true, status: 0 };
    return notifyChannel(channel, event, this.options.outbound);
  }

  /** Resolves when no delivery is pending (tests). */
  whenIdle(): Promise<void> {
    if (!this.running && nextDueMs(this.options.db) === undefined) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Stops delivering; pending rows stay for the next start. */
  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }
}
