/**
 * Incident actions: acknowledge, resolve, snooze or reopen every event of a group selected by
 * correlationKey or dedupeKey; resolve also records an `incident.resolved` event per group.
 */
import { NotFoundError, ValidationError } from '../../domain/errors.js';
import type { EmitResult, EventInput } from '../../domain/events/event-port.js';
import type { EventRecord } from '../../domain/events/event-record.js';
import type { Clock } from '../../domain/events/clock.js';
import type { IncidentAction } from '../../domain/events/incident-rules.js';
import type { Db } from '../../store/database.js';
import { timelineEvents, type GroupScope, type StateChange } from '../../store/control/events.js';
import { snoozeUntilMs } from './parse-snooze.js';

/** An incident action request, already schema-validated. */
export interface IncidentActionRequest {
  readonly action: IncidentAction;
  readonly correlationKey?: string;
  readonly dedupeKey?: string;
  readonly source?: string;
  readonly app?: string;
  readonly environment?: string;
  readonly by?: string;
  readonly note?: string;
  readonly until?: string;
  readonly duration?: string | number;
}

/** What an incident action did. */
export interface IncidentActionResult {
  action: IncidentAction;
  matched: number;
  changed: string[];
  resolutionEvents: string[];
}

/** What an incident action uses of the event service. */
export interface IncidentActionTarget {
  readonly db: Db;
  readonly clock: Clock;
  /** Applies a state change to the events, commits it and publishes it. */
  change(ids: readonly string[], change: StateChange): EventRecord[];
  emit(input: EventInput): Promise<EmitResult>;
}

/** Applies an incident action to a group selected by correlationKey or dedupeKey. */
export async function applyIncidentAction(
  events: IncidentActionTarget,
  req: IncidentActionRequest,
): Promise<IncidentActionResult> {
  if ((req.correlationKey === undefined) === (req.dedupeKey === undefined)) {
    throw new ValidationError('give exactly one of correlationKey or dedupeKey', {
      code: 'invalid_request',
      details: { fields: ['correlationKey', 'dedupeKey'] },
    });
  }
  const nowMs = events.clock.now();
  const untilMs = req.action === 'snooze' ? snoozeUntilMs(req, nowMs) : undefined;
  const timeline = timelineEvents(
    events.db,
    {
      correlationKey: req.correlationKey,
      dedupeKey: req.dedupeKey,
      source: req.source,
      app: req.app,
      environment: req.environment,
    },
    nowMs,
  );
  if (timeline.length === 0) {
    throw new NotFoundError(
      `no events match ${req.correlationKey !== undefined ? `correlationKey "${req.correlationKey}"` : `dedupeKey "${req.dedupeKey}"`}`,
      { code: 'incident_not_found' },
    );
  }
  const unacked = timeline.filter((e) => e.severity !== 'info' && e.state !== 'acknowledged').map((e) => e.id);
  let changed: string[] = [];
  const at = new Date(nowMs).toISOString();
  const by = req.by ?? 'operator';
  if (req.action === 'acknowledge' || req.action === 'resolve') {
    changed = unacked;
    if (changed.length > 0)
      events.change(changed, {
        kind: 'acknowledge',
        by,
        at,
        note: req.note ?? (req.action === 'resolve' ? 'resolved' : null),
        resolvedByEventId: null,
      });
  } else if (req.action === 'snooze') {
    changed = unacked;
    if (changed.length > 0) events.change(changed, { kind: 'snooze', untilMs: untilMs! });
  } else {
    changed = timeline.filter((e) => e.state !== 'open').map((e) => e.id);
    // Expired snoozes read as open but are still stored as snoozed: clear every event of the group.
    events.change(
      timeline.map((e) => e.id),
      { kind: 'open' },
    );
  }
  const resolutionEvents: string[] = [];
  if (req.action === 'resolve') {
    const scopes = new Map<string, GroupScope>();
    for (const e of timeline)
      scopes.set(JSON.stringify([e.source, e.app, e.environment, e.correlationKey]), {
        source: e.source,
        app: e.app,
        environment: e.environment,
        correlationKey: e.correlationKey,
      });
    for (const scope of scopes.values()) {
      const result = await events.emit({
        type: 'incident.resolved',
        severity: 'info',
        source: scope.source,
        app: scope.app || undefined,
        environment: scope.environment,
        title: `Incident ${scope.correlationKey} resolved`,
        body: req.note ?? `resolved by ${by}`,
        metadata: { correlationKey: scope.correlationKey, resolvedBy: by, resolvedEventIds: changed },
      });
      if (result.recorded) resolutionEvents.push(result.id);
    }
  }
  return { action: req.action, matched: timeline.length, changed, resolutionEvents };
}
