/**
 * Events store: SQL for event records, the dedupe window and incident groups in control.db.
 * Callers wrap multi-statement work in `db.transaction`.
 */
import type { Db } from '../database.js';
import { cachedStatement } from '../statement-cache.js';
import { effectiveState, eventIdFloor, type EventRecord, type EventState } from '../../domain/events/event-record.js';
import type { Severity } from '../../domain/events/event-port.js';

/** A fully formed event ready to insert. */
export interface NewEventRow {
  readonly id: string;
  readonly source: string;
  readonly app: string;
  readonly environment: string;
  readonly type: string;
  readonly severity: Severity;
  readonly title: string;
  readonly body: string;
  readonly dedupeKey: string | null;
  readonly occurredAt: string;
  readonly metadata: Readonly<Record<string, unknown>>;
  readonly correlationKey: string;
  readonly recordedAt: string;
}

/** The scope of an incident group. */
export interface GroupScope {
  readonly source: string;
  readonly app: string;
  readonly environment: string;
  readonly correlationKey: string;
}

interface EventRow {
  seq: number;
  id: string;
  source: string;
  app: string;
  environment: string;
  type: string;
  severity: Severity;
  state: EventState;
  title: string;
  body: string;
  dedupe_key: string | null;
  occurred_at: string;
  metadata_json: string;
  correlation_key: string;
  snoozed_until_ms: number | null;
  acknowledged_by: string | null;
  acknowledged_at: string | null;
  acknowledgement_note: string | null;
  resolved_by_event_id: string | null;
  recorded_at: string;
}

/** A stored event with its insertion sequence (later events have larger sequences). */
export interface StoredEvent extends EventRecord {
  readonly seq: number;
}

function toRecord(row: EventRow, nowMs: number): StoredEvent {
  const state = effectiveState(row.state, row.snoozed_until_ms, nowMs);
  return {
    seq: row.seq,
    id: row.id,
    source: row.source,
    app: row.app,
    environment: row.environment,
    type: row.type,
    severity: row.severity,
    state,
    title: row.title,
    body: row.body,
    dedupeKey: row.dedupe_key,
    occurredAt: row.occurred_at,
    snoozedUntil:
      state === 'snoozed' && row.snoozed_until_ms !== null ? new Date(row.snoozed_until_ms).toISOString() : null,
    metadata: JSON.parse(row.metadata_json) as Record<string, unknown>,
    correlationKey: row.correlation_key,
    acknowledgement:
      row.state === 'acknowledged' && row.acknowledged_by !== null
        ? {
            by: row.acknowledged_by,
            at: row.acknowledged_at ?? row.recorded_at,
            note: row.acknowledgement_note,
            resolvedByEventId: row.resolved_by_event_id,
          }
        : null,
    recordedAt: row.recorded_at,
  };
}

/** Removes the `seq` bookkeeping field for API answers. */
export function publicEvent(event: StoredEvent): EventRecord {
  const { seq: _seq, ...rest } = event;
  return rest;
}

const stmt = cachedStatement;

/** Inserts an event and counts it in its incident group. */
export function insertEvent(db: Db, e: NewEventRow): void {
  stmt(
    db,
    `INSERT INTO events (id, source, app, environment, type, severity, title, body, dedupe_key, occurred_at, metadata_json, correlation_key, recorded_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    e.id,
    e.source,
    e.app,
    e.environment,
    e.type,
    e.severity,
    e.title,
    e.body,
    e.dedupeKey,
    e.occurredAt,
    JSON.stringify(e.metadata),
    e.correlationKey,
    e.recordedAt,
  );
  const alerting = e.severity === 'info' ? 0 : 1;
  stmt(
    db,
    `INSERT INTO incident_groups (source, app, environment, correlation_key, event_count, unacknowledged_count, first_seen, last_seen)
            VALUES (?, ?, ?, ?, 1, ?, ?, ?)
            ON CONFLICT (source, app, environment, correlation_key) DO UPDATE SET
              event_count = event_count + 1,
              unacknowledged_count = unacknowledged_count + excluded.unacknowledged_count,
              first_seen = min(first_seen, excluded.first_seen),
              last_seen = max(last_seen, excluded.last_seen)`,
  ).run(e.source, e.app, e.environment, e.correlationKey, alerting, e.occurredAt, e.occurredAt);
}

/**
 * When an event with dedupe key `key` was last recorded (ms), or undefined. The durable dedupe window
 * is the events table itself, through `events_dedupe_key` (ADR 0204): `event_dedupe` is no longer
 * written, which spared two b-tree writes per event.
 */
export function dedupeSeenMs(db: Db, key: string): number | undefined {
  const row = stmt(db, 'SELECT recorded_at FROM events WHERE dedupe_key = ? ORDER BY seq DESC LIMIT 1').get(key) as
    { recorded_at: string } | undefined;
  return row === undefined ? undefined : Date.parse(row.recorded_at);
}

/**
 * Dedupe keys of events recorded at or after `sinceMs`, the newest `limit` of them, oldest first, to
 * warm the in-memory map at start: a range of the id index, since an id begins with its recording time
 * (`eventIdFloor`).
 */
export function recentDedupeKeys(
  db: Db,
  sinceMs: number,
  limit = Number.MAX_SAFE_INTEGER,
): { key: string; seenMs: number }[] {
  return (
    stmt(
      db,
      'SELECT dedupe_key AS key, recorded_at AS recordedAt FROM events WHERE id >= ? AND dedupe_key IS NOT NULL ORDER BY id DESC LIMIT ?',
    ).all(eventIdFloor(sinceMs), limit) as { key: string; recordedAt: string }[]
  )
    .reverse()
    .map((r) => ({ key: r.key, seenMs: Date.parse(r.recordedAt) }))
    .filter((r) => r.seenMs >= sinceMs);
}

/**
 * Forgets rows of the former dedupe table older than `beforeMs` (written by releases before ADR 0204;
 * kept, and read by them after a rollback).
 */
export function pruneDedupe(db: Db, beforeMs: number): number {
  return stmt(db, 'DELETE FROM event_dedupe WHERE seen_ms < ?').run(beforeMs).changes;
}

/** One event by id. */
export function getEvent(db: Db, id: string, nowMs: number): StoredEvent | undefined {
  const row = stmt(db, 'SELECT * FROM events WHERE id = ?').get(id) as EventRow | undefined;
  return row ? toRecord(row, nowMs) : undefined;
}

/** Filter of `GET /api/events`. */
export interface EventFilter {
  readonly app?: string;
  readonly type?: string;
  readonly severity?: Severity;
  readonly limit: number;
  readonly offset: number;
}

/** A page of events, newest first, and the total matching. */
export function listEvents(db: Db, filter: EventFilter, nowMs: number): { events: StoredEvent[]; total: number } {
  const where: string[] = [];
  const args: unknown[] = [];
  if (filter.app !== undefined) {
    where.push('app = ?');
    args.push(filter.app);
  }
  if (filter.type !== undefined) {
    where.push('type = ?');
    args.push(filter.type);
  }
  if (filter.severity !== undefined) {
    where.push('severity = ?');
    args.push(filter.severity);
  }
  const clause = where.length > 0 ? `WHERE ${where.join(' AND ')}` : '';
  const rows = db
    .prepare(`SELECT * FROM events ${clause} ORDER BY seq DESC LIMIT ? OFFSET ?`)
    .all(...args, filter.limit, filter.offset) as EventRow[];
  const total = (db.prepare(`SELECT COUNT(*) AS n FROM events ${clause}`).get(...args) as { n: number }).n;
  return { events: rows.map((r) => toRecord(r, nowMs)), total };
}

/** Selection of `GET /api/events/correlated` and incident actions. */
export interface TimelineSelector {
  readonly correlationKey?: string;
  readonly dedupeKey?: string;
  readonly source?: string;
  readonly app?: string;
  readonly environment?: string;
}

function selectorClause(sel: TimelineSelector): { clause: string; args: unknown[] } {
  const where: string[] = [];
  const args: unknown[] = [];
  if (sel.correlationKey !== undefined) {
    where.push('correlation_key = ?');
    args.push(sel.correlationKey);
  }
  if (sel.dedupeKey !== undefined) {
    where.push('dedupe_key = ?');
    args.push(sel.dedupeKey);
  }
  if (sel.source !== undefined) {
    where.push('source = ?');
    args.push(sel.source);
  }
  if (sel.app !== undefined) {
    where.push('app = ?');
    args.push(sel.app);
  }
  if (sel.environment !== undefined) {
    where.push('environment = ?');
    args.push(sel.environment);
  }
  return { clause: where.join(' AND ') || '1', args };
}

/** The events of a timeline, oldest first. */
export function timelineEvents(db: Db, sel: TimelineSelector, nowMs: number, limit = 10_000): StoredEvent[] {
  const { clause, args } = selectorClause(sel);
  return (
    db.prepare(`SELECT * FROM events WHERE ${clause} ORDER BY seq ASC LIMIT ?`).all(...args, limit) as EventRow[]
  ).map((r) => toRecord(r, nowMs));
}

/** Not-acknowledged warnings and criticals of one incident group, oldest first. */
export function unacknowledgedInGroup(db: Db, scope: GroupScope): { id: string; type: string; seq: number }[] {
  return stmt(
    db,
    `SELECT id, type, seq FROM events WHERE source = ? AND app = ? AND environment = ? AND correlation_key = ?
                   AND severity IN ('warning', 'critical') AND state <> 'acknowledged' ORDER BY seq`,
  ).all(scope.source, scope.app, scope.environment, scope.correlationKey) as {
    id: string;
    type: string;
    seq: number;
  }[];
}

/** A state change applied to events. */
export type StateChange =
  | {
      readonly kind: 'acknowledge';
      readonly by: string;
      readonly at: string;
      readonly note: string | null;
      readonly resolvedByEventId: string | null;
    }
  | { readonly kind: 'snooze'; readonly untilMs: number }
  | { readonly kind: 'open' };

/** Applies `change` to the events `ids` (body and metadata never change) and refreshes their groups. */
export function changeEventState(db: Db, ids: readonly string[], change: StateChange): number {
  let changed = 0;
  const scopes = new Map<string, GroupScope>();
  for (const id of ids) {
    let result;
    if (change.kind === 'acknowledge') {
      result = stmt(
        db,
        `UPDATE events SET state = 'acknowledged', snoozed_until_ms = NULL, acknowledged_by = ?, acknowledged_at = ?, acknowledgement_note = ?, resolved_by_event_id = ? WHERE id = ?`,
      ).run(change.by, change.at, change.note, change.resolvedByEventId, id);
    } else if (change.kind === 'snooze') {
      result = stmt(
        db,
        `UPDATE events SET state = 'snoozed', snoozed_until_ms = ?, acknowledged_by = NULL, acknowledged_at = NULL, acknowledgement_note = NULL, resolved_by_event_id = NULL WHERE id = ?`,
      ).run(change.untilMs, id);
    } else {
      result = stmt(
        db,
        `UPDATE events SET state = 'open', snoozed_until_ms = NULL, acknowledged_by = NULL, acknowledged_at = NULL, acknowledgement_note = NULL, resolved_by_event_id = NULL WHERE id = ?`,
      ).run(id);
    }
    changed += result.changes;
    const scope = stmt(
      db,
      'SELECT source, app, environment, correlation_key AS correlationKey FROM events WHERE id = ?',
    ).get(id) as GroupScope | undefined;
    if (scope) scopes.set(JSON.stringify(scope), scope);
  }
  for (const scope of scopes.values()) refreshGroup(db, scope);
  return changed;
}

/** Recounts the not-acknowledged warnings and criticals of a group. */
export function refreshGroup(db: Db, scope: GroupScope): void {
  stmt(
    db,
    `UPDATE incident_groups SET unacknowledged_count = (
              SELECT COUNT(*) FROM events WHERE source = @source AND app = @app AND environment = @environment AND correlation_key = @correlationKey
              AND severity IN ('warning', 'critical') AND state <> 'acknowledged')
            WHERE source = @source AND app = @app AND environment = @environment AND correlation_key = @correlationKey`,
  ).run({ source: scope.source, app: scope.app, environment: scope.environment, correlationKey: scope.correlationKey });
}

/** An unresolved incident group of `GET /api/events/active`. */
export interface ActiveGroup extends GroupScope {
  readonly severity: Severity;
  readonly eventCount: number;
  readonly firstSeen: string;
  readonly lastSeen: string;
  readonly representative: StoredEvent;
}

/**
 * Groups with at least one warning or critical that reads as open at `nowMs`, most recently seen
 * first; the representative is the newest such event.
 */
export function activeGroups(db: Db, nowMs: number): ActiveGroup[] {
  const groups = stmt(
    db,
    `SELECT source, app, environment, correlation_key AS correlationKey, event_count AS eventCount, first_seen AS firstSeen, last_seen AS lastSeen
                           FROM incident_groups WHERE unacknowledged_count > 0 ORDER BY last_seen DESC`,
  ).all() as GroupRow[];
  const out: ActiveGroup[] = [];
  for (const g of groups) {
    const group = withRepresentative(db, g, nowMs);
    if (group) out.push(group);
  }
  return out;
}

type GroupRow = GroupScope & { eventCount: number; firstSeen: string; lastSeen: string };

function withRepresentative(db: Db, g: GroupRow, nowMs: number): ActiveGroup | undefined {
  const row = stmt(
    db,
    `SELECT * FROM events WHERE source = ? AND app = ? AND environment = ? AND correlation_key = ?
                        AND severity IN ('warning', 'critical') AND state <> 'acknowledged'
                        AND (state = 'open' OR snoozed_until_ms IS NULL OR snoozed_until_ms <= ?)
                        ORDER BY seq DESC LIMIT 1`,
  ).get(g.source, g.app, g.environment, g.correlationKey, nowMs) as EventRow | undefined;
  return row ? { ...g, severity: row.severity, representative: toRecord(row, nowMs) } : undefined;
}

/** One group as the active view shows it, or undefined when it is resolved (or unknown). */
export function activeGroupOf(db: Db, scope: GroupScope, nowMs: number): ActiveGroup | undefined {
  const g = stmt(
    db,
    `SELECT source, app, environment, correlation_key AS correlationKey, event_count AS eventCount, first_seen AS firstSeen, last_seen AS lastSeen
                      FROM incident_groups WHERE source = ? AND app = ? AND environment = ? AND correlation_key = ? AND unacknowledged_count > 0`,
  ).get(scope.source, scope.app, scope.environment, scope.correlationKey) as GroupRow | undefined;
  return g ? withRepresentative(db, g, nowMs) : undefined;
}

/** Warnings and criticals that read as open at `nowMs`, oldest first (for reconcile). */
export function openAlertingEvents(db: Db, nowMs: number, options: { app?: string; limit: number }): StoredEvent[] {
  const rows = db
    .prepare(
      `SELECT * FROM events WHERE severity IN ('warning', 'critical') AND state <> 'acknowledged'
                           AND (state = 'open' OR snoozed_until_ms IS NULL OR snoozed_until_ms <= ?)
                           ${options.app !== undefined ? 'AND app = ?' : ''} ORDER BY seq ASC LIMIT ?`,
    )
    .all(...(options.app !== undefined ? [nowMs, options.app, options.limit] : [nowMs, options.limit])) as EventRow[];
  return rows.map((r) => toRecord(r, nowMs));
}

/** Ids of events of `type` recorded after `afterSeq`, narrowed by the given fields. */
export function laterEventIds(
  db: Db,
  afterSeq: number,
  sel: { type: string; app?: string; source?: string; environment?: string; correlationKey?: string },
): string[] {
  const { clause, args } = selectorClause({
    app: sel.app,
    source: sel.source,
    environment: sel.environment,
    correlationKey: sel.correlationKey,
  });
  return (
    db
      .prepare(`SELECT id FROM events WHERE ${clause} AND type = ? AND seq > ? ORDER BY seq LIMIT 20`)
      .all(...args, sel.type, afterSeq) as { id: string }[]
  ).map((r) => r.id);
}

/** Number of stored events. */
export function countEvents(db: Db): number {
  return (stmt(db, 'SELECT COUNT(*) AS n FROM events').get() as { n: number }).n;
}

/** The earliest snooze end after `nowMs` (when a cached active view stops being valid). */
export function nextSnoozeEndMs(db: Db, nowMs: number): number | undefined {
  const row = stmt(
    db,
    `SELECT MIN(snoozed_until_ms) AS until FROM events WHERE state = 'snoozed' AND snoozed_until_ms > ?`,
  ).get(nowMs) as { until: number | null };
  return row.until ?? undefined;
}

/** Not-acknowledged capacity warnings on the legacy global key from `source` (any environment). */
export function openLegacyCapacityWarnings(db: Db, source: string, nowMs: number): StoredEvent[] {
  const rows = stmt(
    db,
    `SELECT * FROM events WHERE correlation_key = 'svc-host:minimum-capacity' AND type = 'service.capacity.below_minimum'
                         AND source = ? AND severity IN ('warning', 'critical') AND state <> 'acknowledged' ORDER BY seq`,
  ).all(source) as EventRow[];
  return rows.map((r) => toRecord(r, nowMs));
}
