/**
 * Event record: one operational event as stored and served, and how its state reads at a given time.
 */
import type { Severity } from './event-port.js';

/** Stored state of an event; a snooze whose time has passed reads as open without a write. */
export const EventState = { open: 'open', acknowledged: 'acknowledged', snoozed: 'snoozed' } as const;
export type EventState = (typeof EventState)[keyof typeof EventState];

/** Who acknowledged an event and why; never holds secret values. */
export interface Acknowledgement {
  readonly by: string;
  readonly at: string;
  readonly note: string | null;
  /** The info event whose correlated recovery acknowledged this one. */
  readonly resolvedByEventId: string | null;
}

/** An event as the API serves it. */
export interface EventRecord {
  readonly id: string;
  readonly source: string;
  readonly app: string;
  readonly environment: string;
  readonly type: string;
  readonly severity: Severity;
  readonly state: EventState;
  readonly title: string;
  readonly body: string;
  readonly dedupeKey: string | null;
  readonly occurredAt: string;
  readonly snoozedUntil: string | null;
  readonly metadata: Readonly<Record<string, unknown>>;
  /** The key the event is grouped by: metadata.correlationKey, else dedupeKey, else the id. */
  readonly correlationKey: string;
  readonly acknowledgement: Acknowledgement | null;
  readonly recordedAt: string;
}

/** The state an event reads as at `nowMs`: a snooze in the past reads as open. */
export function effectiveState(state: EventState, snoozedUntilMs: number | null, nowMs: number): EventState {
  if (state === EventState.snoozed && (snoozedUntilMs === null || snoozedUntilMs <= nowMs)) return EventState.open;
  return state;
}

/** True for severities that make an incident (warning and critical). */
export function isAlerting(severity: Severity): boolean {
  return severity !== 'info';
}

/** Dedupe window: a dedupeKey recorded within this many milliseconds drops the new event. */
export const DEDUPE_WINDOW_MS = 60 * 60 * 1000;

/** Largest page of `GET /api/events`. */
export const EVENT_PAGE_LIMIT = 200;

const ID_ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

/**
 * A new event id `evt_<suffix>`: 10 characters of millisecond time (so ids sort by creation) then
 * 16 characters from `randomBytes` (at least 10 bytes).
 */
export function newEventId(nowMs: number, randomBytes: Uint8Array): string {
  const time = idTime(nowMs);
  let rand = '';
  for (let i = 0; i < 16; i++) rand += ID_ALPHABET[(randomBytes[i % randomBytes.length] ?? 0) % 32]!;
  return `evt_${time}${rand}`;
}

function idTime(ms: number): string {
  let time = '';
  let t = Math.max(0, Math.floor(ms));
  for (let i = 0; i < 10; i++) {
    time = ID_ALPHABET[t % 32]! + time;
    t = Math.floor(t / 32);
  }
  return time;
}

/** The least id an event made at or after `ms` can have (ids sort by their time, then by their random part). */
export function eventIdFloor(ms: number): string {
  return `evt_${idTime(ms)}`;
}
