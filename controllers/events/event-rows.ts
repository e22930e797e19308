/**
 * The row of a new event: an emit's input checked and filled with this platform's defaults (id,
 * source, environment, host id, correlation key), and the record a just-recorded row reads as.
 */
import { randomBytes } from 'node:crypto';
import { ValidationError } from '../../domain/errors.js';
import type { EventInput } from '../../domain/events/event-port.js';
import { newEventId, type EventRecord } from '../../domain/events/event-record.js';
import type { Clock } from '../../domain/events/clock.js';
import { groupKeyOf } from '../../domain/events/correlation.js';
import type { NewEventRow } from '../../store/control/events.js';

/** What an event gets when it names none: this platform's source and environment, and its host id. */
export interface EventDefaults {
  readonly source: string;
  readonly environment: string;
  readonly hostId?: string;
}

const SEVERITIES = new Set(['info', 'warning', 'critical']);

// Random bytes of event ids, drawn 4 KiB at a time: one getrandom call per 256 events instead of
// one per event (4 % of the HTTP ingest path's CPU, ADR 0192).
let randomPool = Buffer.alloc(0);
let randomAt = 0;
function idRandom(): Uint8Array {
  if (randomAt + 16 > randomPool.length) {
    randomPool = randomBytes(4096);
    randomAt = 0;
  }
  randomAt += 16;
  return randomPool.subarray(randomAt - 16, randomAt);
}

/** An emit's input checked and filled in: a ValidationError names the first broken field. */
export function normalizeEvent(input: EventInput, defaults: EventDefaults, clock: Clock): NewEventRow {
  if (typeof input.type !== 'string' || input.type.trim() === '')
    throw new ValidationError('type: must be a non-empty string', { code: 'invalid_request' });
  if (!SEVERITIES.has(input.severity))
    throw new ValidationError(`severity: "${String(input.severity)}" is not one of info, warning, critical`, {
      code: 'invalid_request',
    });
  if (typeof input.title !== 'string' || input.title === '')
    throw new ValidationError('title: must be a non-empty string', { code: 'invalid_request' });
  const nowMs = clock.now();
  const recordedAt = new Date(nowMs).toISOString();
  let occurredAt = recordedAt;
  if (input.occurredAt !== undefined) {
    const ms = Date.parse(input.occurredAt);
    if (Number.isNaN(ms))
      throw new ValidationError(`occurredAt: "${input.occurredAt}" is not an ISO 8601 timestamp`, {
        code: 'invalid_request',
      });
    occurredAt = new Date(ms).toISOString();
  }
  const id = newEventId(nowMs, idRandom());
  const metadata: Record<string, unknown> = { ...(input.metadata ?? {}) };
  // The event correlation keys of this host: an event from elsewhere keeps the host it names.
  if (defaults.hostId !== undefined && (typeof metadata.hostId !== 'string' || metadata.hostId === ''))
    metadata.hostId = defaults.hostId;
  const dedupeKey = input.dedupeKey === undefined || input.dedupeKey === '' ? null : input.dedupeKey;
  return {
    id,
    source: input.source ?? defaults.source,
    app: input.app ?? '',
    environment: input.environment ?? defaults.environment,
    type: input.type,
    severity: input.severity,
    title: input.title,
    body: input.body ?? '',
    dedupeKey,
    occurredAt,
    metadata,
    correlationKey: groupKeyOf(metadata, dedupeKey, id),
    recordedAt,
  };
}

/** A just-recorded event as the API shows it (open, unacknowledged), built without a read. */
export function recordOf(row: NewEventRow): EventRecord {
  return {
    id: row.id,
    source: row.source,
    app: row.app,
    environment: row.environment,
    type: row.type,
    severity: row.severity,
    state: 'open',
    title: row.title,
    body: row.body,
    dedupeKey: row.dedupeKey,
    occurredAt: row.occurredAt,
    snoozedUntil: null,
    metadata: row.metadata,
    correlationKey: row.correlationKey,
    acknowledgement: null,
    recordedAt: row.recordedAt,
  };
}
