/**
 * Event routes: record, list, read, correlate, active incidents, per-event state changes,
 * reconcile, sinks, the manual test event and the alert rule catalogue.
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import { compileValidator } from '../../../domain/json-schema.js';
import { ValidationError } from '../../../domain/errors.js';
import { ALERT_RULES, EVENT_TYPES } from '../../../domain/events/event-catalog.js';
import { EVENT_PAGE_LIMIT } from '../../../domain/events/event-record.js';
import type { Severity } from '../../../domain/events/event-port.js';
import type { EventRecord } from '../../../domain/events/event-record.js';
import type { EventServices } from '../../../controllers/events/event-services.js';
import type { ReconcileRequest } from '../../../controllers/events/reconcile-events.js';
import { ACK_SCHEMA, OPEN_SCHEMA, RECONCILE_SCHEMA, SNOOZE_SCHEMA, TEST_EVENT_SCHEMA } from './events-schemas.js';
import { recordEvent } from './record-event.js';

const validateAck = compileValidator<{ operator?: string; by?: string; note?: string }>(ACK_SCHEMA);
const validateSnooze = compileValidator<{ duration?: string | number; until?: string }>(SNOOZE_SCHEMA);
const validateOpen = compileValidator<{ operator?: string; by?: string }>(OPEN_SCHEMA);
const validateReconcile = compileValidator<ReconcileRequest>(RECONCILE_SCHEMA);
const validateTest = compileValidator<{ app?: string; severity?: Severity; title?: string }>(TEST_EVENT_SCHEMA);

/** An unresolved incident group as `GET /api/events/active` shows it. */
export interface ActiveIncidentView {
  readonly correlationKey: string;
  readonly source: string;
  readonly app: string;
  readonly environment: string;
  /** The highest severity among its open events. */
  readonly severity: Severity;
  readonly eventCount: number;
  readonly firstSeen: string;
  readonly lastSeen: string;
  /** The newest open warning or critical of the group. */
  readonly representative: EventRecord;
}

/** The answer of `GET /api/events/active`. */
export interface ActiveIncidents {
  readonly incidents: readonly ActiveIncidentView[];
}

/** The request body, or `{}` when none was sent. */
export function bodyOf(ctx: Context): unknown {
  const body = (ctx.request as unknown as { body?: unknown }).body;
  return body === undefined || (typeof body === 'string' && body === '') ? {} : body;
}

/** A single-valued query parameter. */
export function queryParam(ctx: Context, name: string): string | undefined {
  const value = ctx.query[name];
  if (Array.isArray(value))
    throw new ValidationError(`${name}: give it once`, { code: 'invalid_request', details: { field: name } });
  return value === undefined || value === '' ? undefined : value;
}

function nonNegativeInt(ctx: Context, name: string, fallback: number): number {
  const raw = queryParam(ctx, name);
  if (raw === undefined) return fallback;
  if (!/^\d{1,9}$/.test(raw))
    throw new ValidationError(`${name}: "${raw}" is not a whole number`, {
      code: 'invalid_request',
      details: { field: name },
    });
  return Number(raw);
}

/** Event routes over a running event services. */
export function eventsRoutes(services: EventServices): Router {
  const router = new Router();
  const { events } = services;

  // The service caches the active view per change; serialize each cached view once.
  const serialized = new WeakMap<object, string>();
  router.get('/api/events/active', (ctx) => {
    const groups = events.active();
    let text = serialized.get(groups);
    if (text === undefined) {
      const answer: ActiveIncidents = {
        incidents: groups.map((g) => ({
          correlationKey: g.correlationKey,
          source: g.source,
          app: g.app,
          environment: g.environment,
          severity: g.severity,
          eventCount: g.eventCount,
          firstSeen: g.firstSeen,
          lastSeen: g.lastSeen,
          representative: (({ seq: _seq, ...rest }) => rest)(g.representative),
        })),
      };
      text = JSON.stringify(answer);
      serialized.set(groups, text);
    }
    ctx.type = 'application/json';
    ctx.body = text;
  });
  router.get('/api/events/correlated', (ctx) => {
    const key = queryParam(ctx, 'key');
    if (key === undefined)
      throw new ValidationError('key: is required', { code: 'invalid_request', details: { field: 'key' } });
    ctx.body = {
      correlationKey: key,
      events: events.correlated({
        correlationKey: key,
        source: queryParam(ctx, 'source'),
        app: queryParam(ctx, 'app'),
        environment: queryParam(ctx, 'environment'),
      }),
    };
  });
  router.get('/api/events/sinks', (ctx) => {
    ctx.body = { sinks: services.sinks() };
  });
  router.post('/api/events/reconcile', async (ctx) => {
    ctx.body = await services.reconcile(validateReconcile(bodyOf(ctx)));
  });
  router.post('/api/events/test', async (ctx) => {
    const body = validateTest(bodyOf(ctx));
    const result = await events.emit({
      type: 'event.test',
      severity: body.severity ?? 'info',
      app: body.app,
      title: body.title ?? 'Test event',
      body: 'Manual test event from POST /api/events/test',
      metadata: { manual: true },
    });
    ctx.status = 201;
    ctx.body = result.recorded ? { recorded: true, event: events.get(result.id) } : result;
  });
  router.get('/api/events', (ctx) => {
    const severity = queryParam(ctx, 'severity');
    if (severity !== undefined && !['info', 'warning', 'critical'].includes(severity)) {
      throw new ValidationError(`severity: "${severity}" is not one of info, warning, critical`, {
        code: 'invalid_request',
        details: { field: 'severity' },
      });
    }
    const limit = Math.min(nonNegativeInt(ctx, 'limit', 50), EVENT_PAGE_LIMIT);
    if (limit === 0)
      throw new ValidationError('limit: must be at least 1', { code: 'invalid_request', details: { field: 'limit' } });
    ctx.body = events.list({
      app: queryParam(ctx, 'app'),
      type: queryParam(ctx, 'type'),
      severity: severity as Severity | undefined,
      limit,
      offset: nonNegativeInt(ctx, 'offset', 0),
    });
  });
  // The same handler answers on the ingest fast path before Koa (ADR 0200).
  router.post('/api/events', async (ctx) => {
    const answer = await recordEvent(events, bodyOf(ctx));
    ctx.status = answer.status;
    ctx.body = answer.body;
  });
  router.get('/api/events/:id', (ctx) => {
    ctx.body = events.get(ctx.params.id!);
  });
  router.post('/api/events/:id/ack', (ctx) => {
    const body = validateAck(bodyOf(ctx));
    ctx.body = events.acknowledge(ctx.params.id!, { by: body.operator ?? body.by, note: body.note });
  });
  router.post('/api/events/:id/snooze', (ctx) => {
    ctx.body = events.snooze(ctx.params.id!, validateSnooze(bodyOf(ctx)));
  });
  router.post('/api/events/:id/open', (ctx) => {
    validateOpen(bodyOf(ctx));
    ctx.body = events.reopen(ctx.params.id!);
  });
  router.get('/api/alerts/rules', (ctx) => {
    ctx.body = { rules: ALERT_RULES, eventTypes: EVENT_TYPES };
  });
  return router;
}
