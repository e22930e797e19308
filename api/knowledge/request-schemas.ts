/**
 * JSON Schemas of the knowledge store's REST request bodies, compiled once with ajv.
 */
import { compileValidator } from '../../domain/json-schema.js';
import { MEM_TYPES, NAMESPACE_MODES, type NamespaceMode } from '../../domain/knowledge/modes.js';
import type {
  WriteRequest,
  RetrieveRequest,
  RetractRequest,
  SourceLabelRequest,
  EdgeRequest,
  IngestRequest,
} from '../../knowledge/index.js';

const timestamp = { type: 'string', minLength: 1, maxLength: 64 } as const;
const vector = { type: 'array', minItems: 1, maxItems: 4096, items: { type: 'number' } } as const;
const sourceId = { type: 'string', minLength: 1, maxLength: 256 } as const;
const label = { type: 'string', minLength: 1, maxLength: 128 } as const;
const uuid = {
  type: 'string',
  pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$',
} as const;
const edgeType = { type: 'string', pattern: '^[a-z][a-z0-9_]{0,63}$' } as const;
const weight = { type: 'number', minimum: 0, maximum: 1 } as const;
const ids = { type: 'array', maxItems: 1000, items: sourceId } as const;
/** The namespace mode the origin's clients send on every body (docs/adr/0036). */
const mode = { enum: NAMESPACE_MODES } as const;
const weightValue = { type: 'number', minimum: 0, maximum: 100 } as const;
/** Ranking overrides; `decay_alpha` (recency decay per hour) and all-zero weights follow the origin: 0 means the default. */
const scoreParams = {
  type: 'object',
  additionalProperties: false,
  properties: {
    similarity_weight: weightValue,
    confidence_weight: weightValue,
    recency_weight: weightValue,
    utility_weight: weightValue,
    decay_alpha: { type: 'number', minimum: 0, maximum: 1000 },
  },
} as const;
/** The origin's sparsity threshold of gap detection: keep gaps whose density is below it. */
const minGapSize = { type: 'number', exclusiveMinimum: 0, maximum: 1 } as const;

/** `POST /write`. */
export const validateWrite = compileValidator<WriteRequest>(
  {
    type: 'object',
    additionalProperties: false,
    required: ['content', 'source_id'],
    properties: {
      mode,
      // Empty content is a vector-only write (the origin's SDKs send content: ''); it then needs a vector.
      content: { type: 'string', maxLength: 200_000 },
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
      edges: {
        type: 'array',
        maxItems: 100,
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['to', 'type'],
          properties: { to: uuid, type: edgeType, weight },
        },
      },
      request_id: { type: 'string', minLength: 1, maxLength: 128 },
    },
  },
  'write request',
);

/** `POST /retrieve`. */
export const validateRetrieve = compileValidator<RetrieveRequest>(
  {
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
      score_params: scoreParams,
      as_of: timestamp,
      valid_at: timestamp,
      known_at: timestamp,
      include_source_ids: ids,
      exclude_source_ids: ids,
      include_retracted: { type: 'boolean' },
    },
  },
  'retrieve request',
);

/** `POST /nodes/{id}/retract-source`. */
export const validateRetract = compileValidator<RetractRequest>(
  {
    type: 'object',
    additionalProperties: false,
    required: ['source_id', 'reason'],
    properties: {
      source_id: sourceId,
      reason: { type: 'string', minLength: 1, maxLength: 2000 },
      effective_at: timestamp,
    },
  },
  'retract-source request',
);

/** `POST /sources/label`: `external_id` (the origin's name) is an alias of `source_id`; one of them is required. */
export const validateSourceLabel = compileValidator<
  Omit<SourceLabelRequest, 'source_id'> & { source_id?: string; external_id?: string; mode?: NamespaceMode }
>(
  {
    type: 'object',
    additionalProperties: false,
    anyOf: [{ required: ['source_id'] }, { required: ['external_id'] }],
    properties: {
      mode,
      source_id: sourceId,
      external_id: sourceId,
      labels: { type: 'array', maxItems: 100, items: label },
      credibility: { type: 'number', minimum: 0, maximum: 1 },
      reason: { type: 'string', maxLength: 2000 },
    },
  },
  'source label request',
);

/** `POST /nodes/{id}/edges`. */
export const validateEdge = compileValidator<EdgeRequest>(
  {
    type: 'object',
    additionalProperties: false,
    required: ['to', 'type'],
    properties: { to: uuid, type: edgeType, weight },
  },
  'edge request',
);

/** `POST /recovery/reconcile`. */
export const validateReconcile = compileValidator<{ mode?: NamespaceMode; execute?: boolean; limit?: number }>(
  {
    type: 'object',
    additionalProperties: false,
    properties: { mode, execute: { type: 'boolean' }, limit: { type: 'integer', minimum: 1, maximum: 10_000 } },
  },
  'reconcile request',
);

/** `POST /rank/explain` (and the admin form, which also names the namespace). */
export const validateExplainRank = compileValidator<{
  namespace?: string;
  mode?: NamespaceMode;
  node_id: string;
  other_node_id: string;
  text?: string;
  vector?: number[];
  score_params?: RetrieveRequest['score_params'];
  as_of?: string;
  max_depth?: number;
}>(
  {
    type: 'object',
    additionalProperties: false,
    required: ['node_id', 'other_node_id'],
    properties: {
      namespace: { type: 'string', minLength: 1, maxLength: 128 },
      mode,
      node_id: uuid,
      other_node_id: uuid,
      text: { type: 'string', maxLength: 10_000 },
      vector,
      score_params: scoreParams,
      as_of: timestamp,
      // 0 is the origin's "unset".
      max_depth: { type: 'integer', minimum: 0, maximum: 5 },
    },
  },
  'explain-rank request',
);

const acquisitionBudget = { type: 'integer', minimum: 0, maximum: 1000 } as const;
const maxGaps = { type: 'integer', minimum: 1, maximum: 500 } as const;

/** `POST /gaps` (every field optional). */
export const validateGaps = compileValidator<{
  mode?: NamespaceMode;
  low_confidence_threshold?: number;
  stale_after_hours?: number;
  min_topic_nodes?: number;
  top_k?: number;
  max_gaps?: number;
  min_gap_size?: number;
}>(
  {
    type: 'object',
    additionalProperties: false,
    properties: {
      mode,
      min_gap_size: minGapSize,
      low_confidence_threshold: { type: 'number', minimum: 0, maximum: 1 },
      stale_after_hours: { type: 'number', exclusiveMinimum: 0, maximum: 876_000 },
      min_topic_nodes: { type: 'integer', minimum: 1, maximum: 1000 },
      top_k: { type: 'integer', minimum: 1, maximum: 50 },
      max_gaps: maxGaps,
    },
  },
  'gaps request',
);

/** `POST /acquisition/plan` (`top_k` and `min_gap_size` tune the gap detection behind the plan). */
export const validateAcquisitionPlan = compileValidator<{
  mode?: NamespaceMode;
  budget?: number;
  max_gaps?: number;
  top_k?: number;
  min_gap_size?: number;
}>(
  {
    type: 'object',
    additionalProperties: false,
    properties: {
      mode,
      budget: acquisitionBudget,
      max_gaps: maxGaps,
      top_k: { type: 'integer', minimum: 1, maximum: 50 },
      min_gap_size: minGapSize,
    },
  },
  'acquisition plan request',
);

/** One connector of the origin's multi-connector form; `headers` are sent, never echoed. */
export interface OriginConnector {
  readonly id: string;
  readonly type: 'search' | 'crawler';
  readonly endpoint?: string;
  readonly allowed_source_ids?: string[] | null;
  readonly default_labels?: string[] | null;
  readonly headers?: Record<string, string> | null;
}

/** Body of `POST /acquisition/execute`: our single `connector`, the origin's `connectors` list, or a configured `connector_id`. */
export interface AcquisitionExecuteBody {
  readonly mode?: NamespaceMode;
  readonly execute?: boolean;
  readonly review_before_admission?: boolean;
  readonly task_ids?: string[];
  readonly budget?: number;
  readonly max_gaps?: number;
  readonly top_k?: number;
  readonly min_gap_size?: number;
  readonly source_id?: string;
  readonly allowed_source_ids?: string[];
  readonly max_results?: number;
  readonly max_attempts?: number;
  readonly connector?: { url: string; token?: string; timeout_ms?: number };
  readonly connectors?: OriginConnector[];
  /** A connector configured on the server (SVC_KNOWLEDGE_ACQUISITION_CONNECTORS), by id. */
  readonly connector_id?: string;
}

/** Ids of server-configured acquisition connectors (platform/config-knowledge-acquisition.ts checks the same). */
export const CONNECTOR_ID_PATTERN = '^[a-z0-9][a-z0-9_-]{0,62}$';

/** Header names a connector may not set: the transport's and the protocol's own. */
export const RESERVED_CONNECTOR_HEADERS = [
  'host',
  'content-length',
  'content-type',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'proxy-authorization',
  'idempotency-key',
  'x-svc-event',
  'x-svc-delivery',
  'x-svc-attempt',
  'user-agent',
] as const;

const nullableLabels = { type: ['array', 'null'], maxItems: 100, items: label } as const;
const nullableSources = { type: ['array', 'null'], maxItems: 1000, items: sourceId } as const;

/** `POST /acquisition/execute`: the connector token and headers are used for the call only. */
export const validateAcquisitionExecute = compileValidator<AcquisitionExecuteBody>(
  {
    type: 'object',
    additionalProperties: false,
    oneOf: [{ required: ['connector'] }, { required: ['connectors'] }, { required: ['connector_id'] }],
    properties: {
      mode,
      execute: { type: 'boolean' },
      review_before_admission: { type: 'boolean' },
      task_ids: {
        type: 'array',
        minItems: 1,
        maxItems: 100,
        items: { type: 'string', pattern: '^acq_[a-z]+_[0-9a-f]{16}$' },
      },
      budget: acquisitionBudget,
      max_gaps: maxGaps,
      top_k: { type: 'integer', minimum: 1, maximum: 50 },
      min_gap_size: minGapSize,
      source_id: sourceId,
      allowed_source_ids: ids,
      max_results: { type: 'integer', minimum: 1, maximum: 100 },
      max_attempts: { type: 'integer', minimum: 1, maximum: 5 },
      connector_id: { type: 'string', pattern: CONNECTOR_ID_PATTERN },
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
      connectors: {
        type: 'array',
        minItems: 1,
        maxItems: 10,
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['id', 'type'],
          properties: {
            id: { type: 'string', pattern: '^\\S(.{0,126}\\S)?$' },
            type: { enum: ['search', 'crawler'] },
            // The origin's SDKs send endpoint: undefined or '' for preview-only connectors.
            endpoint: { type: 'string', maxLength: 2048 },
            allowed_source_ids: nullableSources,
            default_labels: nullableLabels,
            headers: {
              type: ['object', 'null'],
              maxProperties: 32,
              propertyNames: { pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$" },
              additionalProperties: { type: 'string', maxLength: 4096, pattern: '^[^\\r\\n\\u0000]*$' },
            },
          },
        },
      },
    },
  },
  'acquisition execute request',
);

/** `POST /acquisition/review/candidates/{id}/approve|reject` (the body is optional). */
export const validateCandidateDecision = compileValidator<{ mode?: NamespaceMode; actor?: string; note?: string }>(
  {
    type: 'object',
    additionalProperties: false,
    // The origin's Python SDK sends actor: '' and note: '' when none is given: empty means absent.
    properties: { mode, actor: { type: 'string', maxLength: 128 }, note: { type: 'string', maxLength: 4000 } },
  },
  'candidate decision',
);

/** `POST /ingest`. */
export const validateIngest = compileValidator<IngestRequest & { mode?: NamespaceMode }>(
  {
    type: 'object',
    additionalProperties: false,
    required: ['text', 'source_id'],
    properties: {
      mode,
      text: { type: 'string', minLength: 1, maxLength: 100_000 },
      source_id: sourceId,
      labels: { type: 'array', maxItems: 100, items: label },
      properties: { type: 'object' },
      confidence: { type: 'number', minimum: 0, maximum: 1 },
      mem_type: { enum: MEM_TYPES },
      max_claims: { type: 'integer', minimum: 1, maximum: 200 },
    },
  },
  'ingest request',
);
