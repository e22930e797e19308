/**
 * JSON Schemas of the feedback, review, handoff and review worker request bodies.
 */
import { compileValidator } from '../../domain/json-schema.js';
import { ESCALATION_LEVELS, REVIEW_ACTIONS, REVIEW_STATUSES } from '../../domain/knowledge/review-rules.js';
import { NAMESPACE_MODES, type NamespaceMode } from '../../domain/knowledge/modes.js';
import { MAX_RECALL_QUALITY } from '../../domain/knowledge/feedback-rules.js';
import type { FeedbackRequest, ReviewDecisionRequest, WorkerCycleRequest } from '../../knowledge/index.js';

const text = (max: number) => ({ type: 'string', minLength: 1, maxLength: max }) as const;
const nullableText = (max: number) => ({ type: ['string', 'null'], minLength: 1, maxLength: max }) as const;
const timestamp = { type: ['string', 'null'], minLength: 1, maxLength: 64 } as const;
const owner = { type: ['string', 'null'], minLength: 1, maxLength: 128 } as const;
const level = { enum: ESCALATION_LEVELS } as const;
const hours = { type: 'number', minimum: 0, maximum: 87_600 } as const;
const url = text(2048);
const secret = { type: 'string', minLength: 8, maxLength: 512 } as const;
const timeout = { type: 'integer', minimum: 1, maximum: 30_000 } as const;
/** The namespace mode the origin's clients send on every body (docs/adr/0036). */
const mode = { enum: NAMESPACE_MODES } as const;
type WithMode<T> = T & { mode?: NamespaceMode };

/** `POST /nodes/{id}/validate|refute|useful|stale` (the body is optional). */
export const validateFeedback = compileValidator<WithMode<FeedbackRequest>>(
  {
    type: 'object',
    additionalProperties: false,
    // `quality` is the origin's recall grade of `useful` (0 is its "unset"); an empty reason is absent.
    properties: {
      mode,
      reason: { type: 'string', maxLength: 2000 },
      quality: { type: 'integer', minimum: 0, maximum: MAX_RECALL_QUALITY },
    },
  },
  'feedback request',
);

/** `POST /review/decisions`. */
export const validateDecision = compileValidator<WithMode<ReviewDecisionRequest>>(
  {
    type: 'object',
    additionalProperties: false,
    required: ['review_id', 'status'],
    properties: {
      mode,
      review_id: text(200),
      status: { enum: REVIEW_STATUSES },
      owner,
      decision: nullableText(200),
      note: nullableText(4000),
      recheck_at: timestamp,
      actor: nullableText(128),
    },
  },
  'review decision',
);

/** `POST /review/escalation-digests`. */
export const validateDigestRequest = compileValidator<
  WithMode<{ escalation_after_hours?: number; note?: string; owner?: string; escalation_level?: string }>
>(
  {
    type: 'object',
    additionalProperties: false,
    properties: { mode, escalation_after_hours: hours, note: text(2000), owner: text(128), escalation_level: level },
  },
  'escalation digest request',
);

/** `POST /review/handoff-webhooks/plan`. */
export const validatePlan = compileValidator<
  WithMode<{
    target_url: string;
    secret: string;
    owner?: string;
    escalation_level?: string;
    escalation_after_hours?: number;
  }>
>(
  {
    type: 'object',
    additionalProperties: false,
    required: ['target_url', 'secret'],
    properties: {
      mode,
      target_url: url,
      secret,
      owner: text(128),
      escalation_level: level,
      escalation_after_hours: hours,
    },
  },
  'handoff plan request',
);

/** `POST /review/handoff-webhooks/deliver`. */
export const validateDeliver = compileValidator<
  WithMode<{
    target_url: string;
    secret: string;
    execute: boolean;
    owner?: string;
    escalation_level?: string;
    escalation_after_hours?: number;
    timeout_ms?: number;
  }>
>(
  {
    type: 'object',
    additionalProperties: false,
    required: ['target_url', 'secret', 'execute'],
    properties: {
      mode,
      target_url: url,
      secret,
      execute: { type: 'boolean' },
      owner: text(128),
      escalation_level: level,
      escalation_after_hours: hours,
      timeout_ms: timeout,
    },
  },
  'handoff delivery request',
);

/** `POST /review/handoff-webhooks/retry`. */
export const validateRetry = compileValidator<
  WithMode<{ digest_event_id: string; target_url: string; secret: string; execute: boolean; timeout_ms?: number }>
>(
  {
    type: 'object',
    additionalProperties: false,
    required: ['digest_event_id', 'target_url', 'secret', 'execute'],
    properties: {
      mode,
      digest_event_id: text(64),
      target_url: url,
      secret,
      execute: { type: 'boolean' },
      timeout_ms: timeout,
    },
  },
  'handoff retry request',
);

/** `POST /review/worker/cycle`: no webhook URL or secret is accepted here. */
export const validateWorkerCycle = compileValidator<WithMode<WorkerCycleRequest>>(
  {
    type: 'object',
    additionalProperties: false,
    properties: {
      mode,
      execute: { type: 'boolean' },
      limit: { type: 'integer', minimum: 1, maximum: 100 },
      evaluator: { enum: ['rules', 'webhook'] },
      allowed_actions: {
        type: 'array',
        maxItems: REVIEW_ACTIONS.length,
        uniqueItems: true,
        items: { enum: REVIEW_ACTIONS },
      },
    },
  },
  'review worker cycle request',
);
