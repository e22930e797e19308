/**
 * Correlated recovery, inside an event's commit: an info event with an explicit correlation key
 * acknowledges the open warnings and criticals of its group it resolves (and a legacy capacity
 * warning it may adopt), as the system, naming itself as the resolver.
 */
import type { Db } from '../../store/database.js';
import type { EventRecord } from '../../domain/events/event-record.js';
import { explicitCorrelationKey } from '../../domain/events/correlation.js';
import { legacyWarningId, mayAdoptLegacyWarning, recoveryTargets } from '../../domain/events/incident-rules.js';
import {
  changeEventState,
  getEvent,
  publicEvent,
  unacknowledgedInGroup,
  type GroupScope,
  type NewEventRow,
} from '../../store/control/events.js';

/** Acknowledges what `row` resolves; the events it changed, as they now read. */
export function recoverCorrelated(db: Db, row: NewEventRow, nowMs: number): EventRecord[] {
  const key = explicitCorrelationKey(row.metadata);
  if (row.severity !== 'info' || key === undefined) return [];
  const scope: GroupScope = { source: row.source, app: row.app, environment: row.environment, correlationKey: key };
  const targets = recoveryTargets(
    { type: row.type, severity: row.severity, correlationKey: key, metadata: row.metadata },
    unacknowledgedInGroup(db, scope),
  );
  const legacyId = legacyWarningId(row.metadata);
  if (legacyId !== undefined && !targets.includes(legacyId)) {
    const warning = getEvent(db, legacyId, nowMs);
    if (
      warning &&
      warning.app === row.app &&
      mayAdoptLegacyWarning(
        { type: row.type, correlationKey: key, source: row.source, environment: row.environment },
        warning,
      )
    )
      targets.push(legacyId);
  }
  if (targets.length === 0) return [];
  changeEventState(db, targets, {
    kind: 'acknowledge',
    by: 'system',
    at: new Date(nowMs).toISOString(),
    note: `resolved by ${row.id} (${row.type})`,
    resolvedByEventId: row.id,
  });
  return targets.map((id) => publicEvent(getEvent(db, id, nowMs)!));
}
