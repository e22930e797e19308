/**
 * The acquisition connector protocol: posts one task as JSON, through the webhook port (the HTTP
 * adapter is platform/outbound/webhook-client.ts), to a connector URL checked like every
 * knowledge webhook (public addresses only unless SVC_KNOWLEDGE_ALLOW_PRIVATE_TARGETS, pinned
 * address, no redirects, a timeout), and reads the evidence it answers. The bearer token is held
 * only for the call: never returned, logged or stored (docs/adr/0035-knowledge-acquisition.md).
 *
 * Contract: `POST <url>` with headers `content-type: application/json`, `idempotency-key`,
 * `x-svc-event: knowledge.acquisition.task`, `x-svc-delivery` (the idempotency key),
 * `x-svc-attempt` and, when a token is given, `authorization: Bearer <token>`; body
 * `{type, namespace, idempotency_key, task: {id, type, priority, description, prompt,
 * related_node_ids, nearest_topics}}`. A 2xx answer carries `{evidence: [{content, source_id?,
 * url?, confidence?, labels?, properties?}]}` (at most 100 items, body at most 64 KiB).
 *
 * Connectors named in the origin's multi-connector form (`connectors: [{id, type, endpoint,
 * headers, ...}]`) also get the origin's fields in the same body (`task_id, task_type, query,
 * prompt, allowed_source_ids, max_results, connector_id, connector_type`), their configured
 * headers (held for the call like the token), and may answer the origin's item list instead:
 * `{items: [{title?, url?, snippet?, content?, source_id?, labels?, confidence?, metadata?}]}` or
 * a bare array of such items (docs/adr/0036-origin-wire-compatibility.md).
 */
import { compileValidator } from '../../domain/json-schema.js';
import { classifyAttempt, type RetryClass } from '../../domain/knowledge/acquisition-retry.js';
import {
  ATTEMPT_HEADER,
  DELIVERY_HEADER,
  EVENT_HEADER,
  type CheckedTarget,
  type WebhookClient,
} from '../../domain/knowledge/webhook-port.js';

/** Event type of connector requests (header `x-svc-event`). */
export const ACQUISITION_EVENT = 'knowledge.acquisition.task';

/** Default and largest connector timeout. */
export const CONNECTOR_TIMEOUT = { defaultMs: 10_000, maxMs: 60_000 } as const;

/** One piece of evidence a connector returned. */
export interface Evidence {
  readonly content: string;
  readonly source_id?: string;
  readonly url?: string;
  readonly confidence?: number;
  readonly labels?: string[];
  readonly properties?: Record<string, unknown>;
}

/** One item of the origin's connector answer. */
interface OriginItem {
  readonly title?: string;
  readonly url?: string;
  readonly snippet?: string;
  readonly content?: string;
  readonly source_id?: string;
  readonly labels?: string[];
  readonly confidence?: number;
  readonly metadata?: Record<string, string>;
}

const originItem = {
  type: 'object',
  properties: {
    title: { type: 'string', maxLength: 20_000 },
    url: { type: 'string', maxLength: 2048 },
    snippet: { type: 'string', maxLength: 200_000 },
    content: { type: 'string', maxLength: 200_000 },
    source_id: { type: 'string', maxLength: 256 },
    labels: { type: 'array', maxItems: 100, items: { type: 'string', minLength: 1, maxLength: 128 } },
    confidence: { type: 'number', minimum: 0, maximum: 1 },
    metadata: { type: 'object', additionalProperties: { type: 'string' } },
  },
} as const;

const validateOriginAnswer = compileValidator<{ items: OriginItem[] } | OriginItem[]>(
  {
    oneOf: [
      {
        type: 'object',
        required: ['items'],
        properties: { items: { type: 'array', maxItems: 100, items: originItem } },
      },
      { type: 'array', maxItems: 100, items: originItem },
    ],
  },
  'connector answer',
);

/** Evidence from origin items: content, else snippet, else title; items with none are dropped. */
function originEvidence(items: readonly OriginItem[]): Evidence[] {
  const out: Evidence[] = [];
  for (const item of items) {
    const content = [item.content, item.snippet, item.title].map((v) => v?.trim() ?? '').find((v) => v !== '');
    if (content === undefined) continue;
    const sourceId = item.source_id?.trim();
    out.push({
      content,
      ...(sourceId ? { source_id: sourceId } : {}),
      ...(item.url ? { url: item.url } : {}),
      ...(item.confidence !== undefined && item.confidence > 0 ? { confidence: item.confidence } : {}),
      ...(item.labels && item.labels.length > 0 ? { labels: [...new Set(item.labels)] } : {}),
      ...(item.metadata || item.title
        ? {
            properties: {
              ...(item.title ? { title: item.title } : {}),
              ...(item.metadata ? { metadata: item.metadata } : {}),
            },
          }
        : {}),
    });
  }
  return out;
}

const validateAnswer = compileValidator<{ evidence: Evidence[] }>(
  {
    type: 'object',
    required: ['evidence'],
    properties: {
      evidence: {
        type: 'array',
        maxItems: 100,
        items: {
          type: 'object',
          required: ['content'],
          properties: {
            content: { type: 'string', minLength: 1, maxLength: 200_000 },
            source_id: { type: 'string', minLength: 1, maxLength: 256 },
            url: { type: 'string', maxLength: 2048 },
            confidence: { type: 'number', minimum: 0, maximum: 1 },
            labels: { type: 'array', maxItems: 100, items: { type: 'string', minLength: 1, maxLength: 128 } },
            properties: { type: 'object' },
          },
        },
      },
    },
  },
  'connector answer',
);

/** What one connector call produced. */
export interface ConnectorOutcome {
  readonly success: boolean;
  readonly retryClass: RetryClass;
  readonly statusCode: number | null;
  readonly error: string | null;
  readonly evidence: readonly Evidence[];
  readonly responseSha256: string | null;
  readonly durationMs: number;
}

/** Posts `body` to the connector through `webhooks` (the outbound guard's client) and classifies the answer. */
export async function callConnector(
  webhooks: WebhookClient,
  target: CheckedTarget,
  body: string,
  call: {
    idempotencyKey: string;
    attempt: number;
    token?: string | undefined;
    headers?: Readonly<Record<string, string>> | undefined;
    timeoutMs: number;
  },
): Promise<ConnectorOutcome> {
  const headers: Record<string, string> = {
    // Configured connector headers first: the protocol headers below always win.
    ...Object.fromEntries(Object.entries(call.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v])),
    'idempotency-key': call.idempotencyKey,
    [EVENT_HEADER]: ACQUISITION_EVENT,
    [DELIVERY_HEADER]: call.idempotencyKey,
    [ATTEMPT_HEADER]: String(call.attempt),
  };
  if (call.token !== undefined) headers.authorization = `Bearer ${call.token}`;
  const sent = await webhooks.postJson(target, body, headers, call.timeoutMs);
  const base = { statusCode: sent.statusCode, responseSha256: sent.responseSha256, durationMs: sent.durationMs };
  if (!sent.success) {
    return {
      ...base,
      success: false,
      retryClass: classifyAttempt(sent.statusCode, false),
      error: sent.error === null ? null : redact(sent.error, [call.token, ...Object.values(call.headers ?? {})]),
      evidence: [],
    };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(sent.responseBody ?? '');
  } catch {
    return {
      ...base,
      success: false,
      retryClass: 'permanent',
      error: 'connector answered 2xx with a body that is not JSON (or longer than 64 KiB)',
      evidence: [],
    };
  }
  if (
    Array.isArray(parsed) ||
    (typeof parsed === 'object' && parsed !== null && 'items' in parsed && !('evidence' in parsed))
  ) {
    const originProblems = validateOriginAnswer.check(parsed);
    if (originProblems.length > 0) {
      return {
        ...base,
        success: false,
        retryClass: 'permanent',
        error: `connector answer breaks the item contract: ${originProblems
          .slice(0, 3)
          .map((p) => p.message)
          .join('; ')}`,
        evidence: [],
      };
    }
    return {
      ...base,
      success: true,
      retryClass: 'none',
      error: null,
      evidence: originEvidence(
        Array.isArray(parsed) ? (parsed as OriginItem[]) : (parsed as { items: OriginItem[] }).items,
      ),
    };
  }
  const problems = validateAnswer.check(parsed);
  if (problems.length > 0) {
    return {
      ...base,
      success: false,
      retryClass: 'permanent',
      error: `connector answer breaks the evidence contract: ${problems
        .slice(0, 3)
        .map((p) => p.message)
        .join('; ')}`,
      evidence: [],
    };
  }
  return {
    ...base,
    success: true,
    retryClass: 'none',
    error: null,
    evidence: (parsed as { evidence: Evidence[] }).evidence,
  };
}

/** Replaces every secret (token, header values) found in `text`. */
function redact(text: string, secrets: readonly (string | undefined)[]): string {
  let out = text;
  for (const secret of secrets)
    if (secret !== undefined && secret.length >= 4) out = out.split(secret).join('<redacted>');
  return out;
}
