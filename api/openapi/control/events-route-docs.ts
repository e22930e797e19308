/**
 * Route entries of the control plane's events, incidents, notification channels and metrics.
 */
import {
  ACK_SCHEMA,
  CREATE_CHANNEL_SCHEMA,
  CREATE_EVENT_SCHEMA,
  INCIDENT_ACTION_SCHEMA,
  OPEN_SCHEMA,
  RECONCILE_SCHEMA,
  SNOOZE_SCHEMA,
  TEST_EVENT_SCHEMA,
} from '../../control/events/events-schemas.js';
import type { RouteDocGroup } from '../route-doc.js';

const limitOffset = [
  { name: 'limit', description: 'At most this many (≤ 200).', schema: { type: 'string', pattern: '^\\d+$' } },
  { name: 'offset', description: 'Skip this many.', schema: { type: 'string', pattern: '^\\d+$' } },
];

export const EVENTS_ROUTE_DOCS: RouteDocGroup = {
  tag: 'events',
  description: 'Recorded events, their correlation into incidents, operator actions on them, sinks and alert rules.',
  routes: {
    'GET /api/events': {
      summary: 'Events, newest first, filtered by app, type and severity',
      query: [
        { name: 'app', description: 'Only this app.' },
        { name: 'type', description: 'Only this event type.' },
        { name: 'severity', description: 'Only this severity.' },
        ...limitOffset,
      ],
      answer: { schema: 'EventPage' },
    },
    'POST /api/events': {
      summary: 'Records an event (201), or answers 200 `{ recorded: false, reason }` for a duplicate',
      body: { name: 'CreateEventRequest', schema: CREATE_EVENT_SCHEMA },
      answer: { status: 201, description: '`{ recorded: true, event }`, or `{ recorded: false, reason }` (200).' },
      errors: [413],
    },
    'GET /api/events/{id}': { summary: 'One event', answer: { schema: 'EventRecord' } },
    'GET /api/events/correlated': {
      summary: 'The timeline of one correlation key, oldest first',
      query: [
        { name: 'key', description: 'The correlation key.', required: true },
        { name: 'source', description: 'Only this source.' },
        { name: 'app', description: 'Only this app.' },
        { name: 'environment', description: 'Only this environment.' },
      ],
      answer: { schema: 'CorrelatedEvents' },
    },
    'GET /api/events/active': {
      summary: 'Unresolved incident groups',
      answer: { schema: 'ActiveIncidentsAnswer' },
    },
    'POST /api/events/{id}/ack': {
      summary: 'Acknowledges an event',
      body: { name: 'AckEventRequest', schema: ACK_SCHEMA, optional: true },
      answer: { schema: 'EventRecord' },
    },
    'POST /api/events/{id}/snooze': {
      summary: 'Snoozes an event for a duration or until a time',
      body: { name: 'SnoozeEventRequest', schema: SNOOZE_SCHEMA },
      answer: { schema: 'EventRecord' },
    },
    'POST /api/events/{id}/open': {
      summary: 'Reopens an event',
      body: { name: 'OpenEventRequest', schema: OPEN_SCHEMA, optional: true },
      answer: { schema: 'EventRecord' },
    },
    'POST /api/events/reconcile': {
      summary: 'Resolves events whose evidence is gone (a dry run unless `dryRun: false`)',
      body: { name: 'ReconcileEventsRequest', schema: RECONCILE_SCHEMA, optional: true },
      answer: { description: 'Per event: id, action, reason and evidence.' },
    },
    'GET /api/events/sinks': {
      summary: 'Configured event sinks and their delivery counts',
      answer: { schema: 'SinkList' },
    },
    'POST /api/events/test': {
      summary: 'Records a manual `event.test` event',
      body: { name: 'TestEventRequest', schema: TEST_EVENT_SCHEMA, optional: true },
      answer: { status: 201, description: 'The recorded event.' },
    },
    'GET /api/alerts/rules': {
      summary: 'The built-in alert rule catalogue and the event types',
      answer: { schema: 'AlertCatalog' },
    },
    'POST /api/incidents/action': {
      summary: 'Acknowledges, snoozes, reopens or resolves an incident group',
      body: { name: 'IncidentActionRequest', schema: INCIDENT_ACTION_SCHEMA },
      answer: { schema: 'IncidentActionAnswer' },
    },
  },
};

export const NOTIFICATIONS_ROUTE_DOCS: RouteDocGroup = {
  tag: 'notifications',
  description: 'Notification channels; tokens and user keys are never returned.',
  routes: {
    'GET /api/notifications/channels': {
      summary: 'Notification channels without their secrets',
      answer: { schema: 'ChannelList' },
    },
    'POST /api/notifications/channels': {
      summary: 'Adds a notification channel',
      body: { name: 'CreateChannelRequest', schema: CREATE_CHANNEL_SCHEMA },
      answer: { status: 201, schema: 'ChannelAnswer' },
    },
    'DELETE /api/notifications/channels/{id}': {
      summary: 'Removes a notification channel',
      answer: { status: 204, description: 'Removed.' },
    },
    'POST /api/notifications/channels/{id}/test': {
      summary: 'Sends a test notification through one channel',
      answer: { schema: 'ChannelTestAnswer' },
    },
  },
};

export const METRICS_ROUTE_DOCS: RouteDocGroup = {
  tag: 'metrics',
  description: 'Prometheus text exposition of the control plane, read at scrape time.',
  routes: {
    'GET /metrics': {
      summary: 'Metrics in the Prometheus text format',
      answer: { contentType: 'text/plain', schema: { type: 'string' }, description: 'Prometheus text exposition.' },
    },
    'GET /api/metrics': {
      summary: 'Metrics in the Prometheus text format (API path)',
      answer: { contentType: 'text/plain', schema: { type: 'string' }, description: 'Prometheus text exposition.' },
    },
  },
};
