/**
 * JSON Schemas of the event services' request bodies.
 */
const key = { type: 'string', minLength: 1, maxLength: 512 } as const;
const name = { type: 'string', minLength: 1, maxLength: 200 } as const;
const severity = { enum: ['info', 'warning', 'critical'] } as const;
const duration = {
  anyOf: [
    { type: 'string', minLength: 1, maxLength: 32 },
    { type: 'number', exclusiveMinimum: 0 },
  ],
} as const;

/** `POST /api/events`. */
export const CREATE_EVENT_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['type', 'severity', 'title'],
  properties: {
    type: { type: 'string', minLength: 1, maxLength: 200, pattern: '^[a-z0-9_.-]+$' },
    severity,
    title: { type: 'string', minLength: 1, maxLength: 500 },
    body: { type: 'string', maxLength: 20_000 },
    app: { type: 'string', maxLength: 200 },
    source: name,
    environment: name,
    dedupeKey: key,
    occurredAt: { type: 'string', format: 'date-time' },
    metadata: { type: 'object', maxProperties: 100 },
  },
} as const;

/** `POST /api/events/{id}/ack`. */
export const ACK_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: { operator: name, by: name, note: { type: 'string', maxLength: 2000 } },
} as const;

/** `POST /api/events/{id}/snooze`. */
export const SNOOZE_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: { duration, until: { type: 'string', format: 'date-time' }, operator: name, by: name },
  oneOf: [{ required: ['duration'] }, { required: ['until'] }],
} as const;

/** `POST /api/events/{id}/open`. */
export const OPEN_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: { operator: name, by: name },
} as const;

/** `POST /api/incidents/action`. */
export const INCIDENT_ACTION_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['action'],
  properties: {
    action: { enum: ['acknowledge', 'snooze', 'open', 'resolve'] },
    correlationKey: key,
    dedupeKey: key,
    source: name,
    app: { type: 'string', maxLength: 200 },
    environment: name,
    by: name,
    note: { type: 'string', maxLength: 2000 },
    until: { type: 'string', format: 'date-time' },
    duration,
  },
  oneOf: [{ required: ['correlationKey'] }, { required: ['dedupeKey'] }],
} as const;

/** `POST /api/events/reconcile`. */
export const RECONCILE_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    app: { type: 'string', minLength: 1, maxLength: 200 },
    limit: { type: 'integer', minimum: 1, maximum: 1000 },
    dryRun: { type: 'boolean' },
    by: name,
  },
} as const;

/** `POST /api/events/test`. */
export const TEST_EVENT_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    app: { type: 'string', minLength: 1, maxLength: 200 },
    severity,
    title: { type: 'string', minLength: 1, maxLength: 500 },
  },
} as const;

/** `POST /api/notifications/channels`. */
export const CREATE_CHANNEL_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['provider', 'name', 'url'],
  properties: {
    provider: { enum: ['embed_webhook', 'topic_push', 'mobile_push', 'webhook'] },
    name,
    url: { type: 'string', minLength: 1, maxLength: 2000 },
    severities: { type: 'array', items: severity, maxItems: 3 },
    severityFilter: { type: 'array', items: severity, maxItems: 3 },
    token: { type: 'string', minLength: 1, maxLength: 500 },
    userKey: { type: 'string', minLength: 1, maxLength: 500 },
  },
} as const;
