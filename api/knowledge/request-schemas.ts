/**
 * JSON Schemas of the knowledge store's REST request bodies, compiled once with ajv.
 */
import { compileValidator } from '../../domain/json-schema.js';
import { MEM_TYPES, NAMESPACE_MODES } from '../../domain/knowledge/modes.js';
import type { WriteRequest, RetrieveRequest, RetractRequest, SourceLabelRequest, EdgeRequest, IngestRequest } from '../../knowledge/index.js';

const timestamp = { type: 'string', minLength: 1, maxLength: 64 } as const;
const vector = { type: 'array', minItems: 1, maxItems: 4096, items: { type: 'number' } } as const;
const sourceId = { type: 'string', minLength: 1, maxLength: 256 } as const;
const label = { type: 'string', minLength: 1, maxLength: 128 } as const;
const uuid = { type: 'string', pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$' } as const;
const edgeType = { type: 'string', pattern: '^[a-z][a-z0-9_]{0,63}$' } as const;
const weight = { type: 'number', minimum: 0, maximum: 1 } as const;
const ids = { type: 'array', maxItems: 1000, items: sourceId } as const;

/** `POST /write`. */
export const validateWrite = compileValidator<WriteRequest>({
  type: 'object',
  additionalProperties: false,
  required: ['content', 'source_id'],
  properties: {
    mode: { enum: NAMESPACE_MODES },
    content: { type: 'string', minLength: 1, maxLength: 200_000 },
    source_id: sourceId,
    labels: { type: 'array', maxItems: 100, items: label },
    properties: { type: 'object' },
    vector,
    model_id: { type: 'string', maxLength: 256 },
    confidence: { type: 'number', minimum: 0, maximum: 1 },
    valid_from: timestamp,
    mem_type: { enum: MEM_TYPES },
    dedup: { type: 'boolean' },
    skip_dedup: { type: 'boolean' },
    edges: { type: 'array', maxItems: 100, items: { type: 'object', additionalProperties: false, required: ['to', 'type'], properties: { to: uuid, type: edgeType, weight } } },
    request_id: { type: 'string', minLength: 1, maxLength: 128 },
  },
}, 'write request');

/** `POST /retrieve`. */
export const validateRetrieve = compileValidator<RetrieveRequest>({
  type: 'object',
  additionalProperties: false,
  properties: {
    vector,
    vectors: { type: 'array', minItems: 1, maxItems: 16, items: vector },
    text: { type: 'string', maxLength: 10_000 },
    seed_ids: { type: 'array', maxItems: 100, items: uuid },
    top_k: { type: 'integer', minimum: 1, maximum: 1000 },
    candidate_k: { type: 'integer', minimum: 1, maximum: 10_000 },
    rerank_k: { type: 'integer', minimum: 0, maximum: 10_000 },
    labels: { type: 'array', maxItems: 100, items: label },
    score_params: {
      type: 'object',
      additionalProperties: false,
      properties: {
        similarity_weight: { type: 'number', minimum: 0, maximum: 100 },
        confidence_weight: { type: 'number', minimum: 0, maximum: 100 },
        recency_weight: { type: 'number', minimum: 0, maximum: 100 },
        utility_weight: { type: 'number', minimum: 0, maximum: 100 },
      },
    },
    as_of: timestamp,
    valid_at: timestamp,
    known_at: timestamp,
    include_source_ids: ids,
    exclude_source_ids: ids,
    include_retracted: { type: 'boolean' },
  },
}, 'retrieve request');

/** `POST /nodes/{id}/retract-source`. */
export const validateRetract = compileValidator<RetractRequest>({
  type: 'object',
  additionalProperties: false,
  required: ['source_id', 'reason'],
  properties: { source_id: sourceId, reason: { type: 'string', minLength: 1, maxLength: 2000 }, effective_at: timestamp },
}, 'retract-source request');

/** `POST /sources/label`. */
export const validateSourceLabel = compileValidator<SourceLabelRequest>({
  type: 'object',
  additionalProperties: false,
  required: ['source_id'],
  properties: {
    source_id: sourceId,
    labels: { type: 'array', maxItems: 100, items: label },
    credibility: { type: 'number', minimum: 0, maximum: 1 },
    reason: { type: 'string', maxLength: 2000 },
  },
}, 'source label request');

/** `POST /nodes/{id}/edges`. */
export const validateEdge = compileValidator<EdgeRequest>({
  type: 'object',
  additionalProperties: false,
  required: ['to', 'type'],
  properties: { to: uuid, type: edgeType, weight },
}, 'edge request');

/** `POST /recovery/reconcile`. */
export const validateReconcile = compileValidator<{ execute?: boolean; limit?: number }>({
  type: 'object',
  additionalProperties: false,
  properties: { execute: { type: 'boolean' }, limit: { type: 'integer', minimum: 1, maximum: 10_000 } },
}, 'reconcile request');

/** `POST /rank/explain` (and the admin form, which also names the namespace). */
export const validateExplainRank = compileValidator<{ namespace?: string; node_id: string; other_node_id: string; text?: string; vector?: number[]; score_params?: RetrieveRequest['score_params'] }>({
  type: 'object',
  additionalProperties: false,
  required: ['node_id', 'other_node_id'],
  properties: {
    namespace: { type: 'string', minLength: 1, maxLength: 128 },
    node_id: uuid,
    other_node_id: uuid,
    text: { type: 'string', maxLength: 10_000 },
    vector,
    score_params: {
      type: 'object',
      additionalProperties: false,
      properties: {
        similarity_weight: { type: 'number', minimum: 0, maximum: 100 },
        confidence_weight: { type: 'number', minimum: 0, maximum: 100 },
        recency_weight: { type: 'number', minimum: 0, maximum: 100 },
        utility_weight: { type: 'number', minimum: 0, maximum: 100 },
      },
    },
  },
}, 'explain-rank request');

const acquisitionBudget = { type: 'integer', minimum: 0, maximum: 1000 } as const;
const maxGaps = { type: 'integer', minimum: 1, maximum: 500 } as const;

/** `POST /gaps` (every field optional). */
export const validateGaps = compileValidator<{ low_confidence_threshold?: number; stale_after_hours?: number; min_topic_nodes?: number; top_k?: number; max_gaps?: number }>({
  type: 'object',
  additionalProperties: false,
  properties: {
    low_confidence_threshold: { type: 'number', minimum: 0, maximum: 1 },
    stale_after_hours: { type: 'number', exclusiveMinimum: 0, maximum: 876_000 },
    min_topic_nodes: { type: 'integer', minimum: 1, maximum: 1000 },
    top_k: { type: 'integer', minimum: 1, maximum: 50 },
    max_gaps: maxGaps,
  },
}, 'gaps request');

/** `POST /acquisition/plan`. */
export const validateAcquisitionPlan = compileValidator<{ budget?: number; max_gaps?: number }>({
  type: 'object',
  additionalProperties: false,
  properties: { budget: acquisitionBudget, max_gaps: maxGaps },
}, 'acquisition plan request');

/** `POST /acquisition/execute`: the connector token is used for the call only. */
export const validateAcquisitionExecute = compileValidator<{
  execute?: boolean; review_before_admission?: boolean; task_ids?: string[]; budget?: number; max_gaps?: number; source_id?: string;
  connector: { url: string; token?: string; timeout_ms?: number };
}>({
  type: 'object',
  additionalProperties: false,
  required: ['connector'],
  properties: {
    execute: { type: 'boolean' },
    review_before_admission: { type: 'boolean' },
    task_ids: { type: 'array', minItems: 1, maxItems: 100, items: { type: 'string', pattern: '^acq_[a-z]+_[0-9a-f]{16}$' } },
    budget: acquisitionBudget,
    max_gaps: maxGaps,
    source_id: sourceId,
    connector: {
      type: 'object',
      additionalProperties: false,
      required: ['url'],
      properties: {
        url: { type: 'string', minLength: 1, maxLength: 2048 },
        token: { type: 'string', minLength: 1, maxLength: 4096 },
        timeout_ms: { type: 'integer', minimum: 1, maximum: 60_000 },
      },
    },
  },
}, 'acquisition execute request');

/** `POST /acquisition/review/candidates/{id}/approve|reject` (the body is optional). */
export const validateCandidateDecision = compileValidator<{ actor?: string; note?: string }>({
  type: 'object',
  additionalProperties: false,
  properties: { actor: { type: 'string', minLength: 1, maxLength: 128 }, note: { type: 'string', minLength: 1, maxLength: 4000 } },
}, 'candidate decision');

/** `POST /ingest`. */
export const validateIngest = compileValidator<IngestRequest>({
  type: 'object',
  additionalProperties: false,
  required: ['text', 'source_id'],
  properties: {
    text: { type: 'string', minLength: 1, maxLength: 100_000 },
    source_id: sourceId,
    labels: { type: 'array', maxItems: 100, items: label },
    properties: { type: 'object' },
    confidence: { type: 'number', minimum: 0, maximum: 1 },
    mem_type: { enum: MEM_TYPES },
    max_claims: { type: 'integer', minimum: 1, maximum: 200 },
  },
}, 'ingest request');
