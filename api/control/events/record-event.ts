/**
 * `POST /api/events`'s semantics, shared by the Koa route and the ingest fast path (ADR 0200): the
 * body is validated against the create schema, the event is emitted (answered only once its group
 * commit is durable, ADR 0192), and the answer is 201 with the recorded event or 200 for a dedupe
 * key already recorded.
 */
import { compileValidator } from '../../../domain/json-schema.js';
import type { EventInput } from '../../../domain/events/event-port.js';
import type { EventService } from '../../../controllers/events/event-service.js';
import { CREATE_EVENT_SCHEMA } from './events-schemas.js';

const validateCreate = compileValidator<EventInput>(CREATE_EVENT_SCHEMA);

/** The answer to one `POST /api/events`: its status and JSON body. */
export interface RecordEventAnswer {
  readonly status: 200 | 201;
  readonly body: object;
}

/** Validates `body` (throws a `ValidationError`) and records it; resolves once it is durable. */
export async function recordEvent(events: Pick<EventService, 'emitRecord'>, body: unknown): Promise<RecordEventAnswer> {
  const result = await events.emitRecord(validateCreate(body));
  return result.recorded
    ? { status: 201, body: result }
    : { status: 200, body: { recorded: false, reason: result.reason } };
}
