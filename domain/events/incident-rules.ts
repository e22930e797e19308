/**
 * Incident rules: which open warnings and criticals a correlated info event acknowledges, and
 * when an incident group counts as resolved.
 */
import type { Severity } from './event-port.js';
import { EventState } from './event-record.js';
import { LEGACY_CAPACITY_KEY, isCapacityKey } from './correlation.js';

/** The event type that alone closes capacity warnings. */
export const CAPACITY_RECOVERED = 'service.capacity.recovered';
/** The capacity warning type. */
export const CAPACITY_BELOW_MINIMUM = 'service.capacity.below_minimum';

/** An info event being recorded, as the recovery rule sees it. */
export interface RecoveryEvent {
  readonly type: string;
  readonly severity: Severity;
  /** metadata.correlationKey; an event without one recovers nothing. */
  readonly correlationKey: string | undefined;
  readonly metadata: Readonly<Record<string, unknown>>;
}

/** An unacknowledged warning or critical of the same source, app, environment and key. */
export interface RecoveryCandidate {
  readonly id: string;
  readonly type: string;
}

/**
 * Ids among `candidates` (same source, app, environment and correlation key, not acknowledged) that
 * the info event `recovery` acknowledges. For capacity keys only `service.capacity.recovered`
 * closes, and a recovery on the legacy global key must name one exact `legacyCapacityWarningID`.
 */
export function recoveryTargets(recovery: RecoveryEvent, candidates: readonly RecoveryCandidate[]): string[] {
  if (recovery.severity !== 'info' || recovery.correlationKey === undefined) return [];
  const key = recovery.correlationKey;
  if (isCapacityKey(key)) {
    if (recovery.type !== CAPACITY_RECOVERED) return [];
    if (key === LEGACY_CAPACITY_KEY) {
      const named = legacyWarningId(recovery.metadata);
      const match = candidates.filter((c) => c.id === named && c.type === CAPACITY_BELOW_MINIMUM);
      return match.length === 1 ? [match[0]!.id] : [];
    }
  }
  return candidates.map((c) => c.id);
}

/** The legacy capacity warning id a recovery names, if any. */
export function legacyWarningId(metadata: Readonly<Record<string, unknown>>): string | undefined {
  const id = metadata.legacyCapacityWarningID;
  return typeof id === 'string' && id !== '' ? id : undefined;
}

/**
 * True when an identity-scoped capacity recovery may adopt (acknowledge) the named legacy warning:
 * the warning is a capacity warning on the legacy key, in the same source and environment, and not
 * acknowledged.
 */
export function mayAdoptLegacyWarning(
  recovery: {
    readonly type: string;
    readonly correlationKey: string | undefined;
    readonly source: string;
    readonly environment: string;
  },
  warning: {
    readonly type: string;
    readonly correlationKey: string;
    readonly source: string;
    readonly environment: string;
    readonly state: EventState;
  },
): boolean {
  return (
    recovery.type === CAPACITY_RECOVERED &&
    recovery.correlationKey !== undefined &&
    recovery.correlationKey !== LEGACY_CAPACITY_KEY &&
    isCapacityKey(recovery.correlationKey) &&
    warning.type === CAPACITY_BELOW_MINIMUM &&
    warning.correlationKey === LEGACY_CAPACITY_KEY &&
    warning.source === recovery.source &&
    warning.environment === recovery.environment &&
    warning.state !== EventState.acknowledged
  );
}

/** Incident actions of `POST /api/incidents/action`. */
export const IncidentAction = {
  acknowledge: 'acknowledge',
  snooze: 'snooze',
  open: 'open',
  resolve: 'resolve',
} as const;
export type IncidentAction = (typeof IncidentAction)[keyof typeof IncidentAction];

/** An incident is resolved when none of its warnings or criticals reads as open. */
export function isIncidentResolved(
  timeline: readonly { readonly severity: Severity; readonly effectiveState: EventState }[],
): boolean {
  return !timeline.some((e) => e.severity !== 'info' && e.effectiveState === EventState.open);
}
