/**
 * Event outbox store: one delivery row per event and target (the signed sink or a notification
 * channel), written in the event's transaction and marked delivered only after the target accepted it.
 */
import type { Db } from '../database.js';
import { cachedStatement } from '../statement-cache.js';

/** A due delivery with the event's JSON. */
export interface OutboxEntry {
  readonly seq: number;
  readonly eventId: string;
  readonly target: string;
  readonly attempts: number;
}

/** Target name of the signed sink. */
export const SINK_TARGET = 'sink';
/** Target name of a notification channel. */
export const channelTarget = (channelId: string): string => `channel:${channelId}`;

/** Queues deliveries of `eventId` to `targets`, due now. */
export function enqueueDeliveries(db: Db, eventId: string, targets: readonly string[], nowMs: number): void {
  const insert = cachedStatement(db, 'INSERT INTO event_outbox (event_id, target, next_attempt_ms) VALUES (?, ?, ?)');
  for (const target of targets) insert.run(eventId, target, nowMs);
}

/** Pending deliveries due at `nowMs`, oldest first, leaving out targets in `exclude` (paused after a failure). */
export function dueDeliveries(db: Db, nowMs: number, limit: number, exclude: readonly string[] = []): OutboxEntry[] {
  const notIn = exclude.length > 0 ? `AND target NOT IN (${exclude.map(() => '?').join(', ')})` : '';
  return cachedStatement(
    db,
    `SELECT seq, event_id AS eventId, target, attempts FROM event_outbox
                     WHERE status = 'pending' AND next_attempt_ms <= ? ${notIn} ORDER BY seq LIMIT ?`,
  ).all(nowMs, ...exclude, limit) as OutboxEntry[];
}

/** When the next pending delivery is due (ms), or undefined when none is pending. */
export function nextDueMs(db: Db): number | undefined {
  const row = cachedStatement(
    db,
    `SELECT MIN(next_attempt_ms) AS due FROM event_outbox WHERE status = 'pending'`,
  ).get() as {
    due: number | null;
  };
  return row.due ?? undefined;
}

/** Marks a delivery accepted by its target. */
export function markDelivered(db: Db, seq: number, at: string): void {
  db.prepare(
    `UPDATE event_outbox SET status = 'delivered', delivered_at = ?, attempts = attempts + 1, last_error = NULL WHERE seq = ?`,
  ).run(at, seq);
}

/** Records a failed attempt and when to try again, or gives up (`failed`) when `retryAtMs` is undefined. */
export function markAttemptFailed(db: Db, seq: number, error: string, retryAtMs: number | undefined): void {
  if (retryAtMs === undefined) {
    db.prepare(`UPDATE event_outbox SET status = 'failed', attempts = attempts + 1, last_error = ? WHERE seq = ?`).run(
      error.slice(0, 500),
      seq,
    );
  } else {
    db.prepare(
      `UPDATE event_outbox SET attempts = attempts + 1, last_error = ?, next_attempt_ms = ? WHERE seq = ?`,
    ).run(error.slice(0, 500), retryAtMs, seq);
  }
}

/** Delivery counts per target and status, plus the latest error per target. */
export function deliveryStats(
  db: Db,
): { target: string; pending: number; delivered: number; failed: number; lastError: string | null }[] {
  const rows = db
    .prepare(
      `SELECT target,
                             SUM(status = 'pending') AS pending, SUM(status = 'delivered') AS delivered, SUM(status = 'failed') AS failed,
                             (SELECT last_error FROM event_outbox o2 WHERE o2.target = o.target AND o2.last_error IS NOT NULL ORDER BY seq DESC LIMIT 1) AS lastError
                           FROM event_outbox o GROUP BY target`,
    )
    .all() as { target: string; pending: number; delivered: number; failed: number; lastError: string | null }[];
  return rows;
}

/** Drops pending deliveries to a removed target. */
export function dropTarget(db: Db, target: string): void {
  db.prepare(`DELETE FROM event_outbox WHERE target = ? AND status = 'pending'`).run(target);
}

/** The earliest due time of pending deliveries per target. */
export function nextDuePerTarget(db: Db): { target: string; due: number }[] {
  return cachedStatement(
    db,
    `SELECT target, MIN(next_attempt_ms) AS due FROM event_outbox WHERE status = 'pending' GROUP BY target`,
  ).all() as { target: string; due: number }[];
}
