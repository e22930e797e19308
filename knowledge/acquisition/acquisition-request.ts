/**
 * The request of an acquisition execution: the connector it calls, the limits it sets, and how the
 * evidence a connector returns is filtered, attributed and staged as candidates
 * (docs/adr/0035-knowledge-acquisition.md).
 */
import { createHash } from 'node:crypto';
import { ValidationError } from '../../domain/errors.js';
import type { AcquisitionTask } from '../../domain/knowledge/acquisition-plan.js';
import { canonicalContent } from '../../domain/knowledge/fingerprint.js';
import type { AcquisitionCandidateRow } from '../../store/knowledge/acquisition-store.js';
import type { Namespace } from '../core/knowledge-state.js';
import { CONNECTOR_TIMEOUT, type Evidence } from './acquisition-connector.js';

/** The connector of one execute call; the token and headers are used for the call only. */
export interface ConnectorTarget {
  /** Connector URL; optional only for a preview of a named (origin-form) connector. */
  readonly url?: string | undefined;
  readonly token?: string | undefined;
  readonly timeoutMs?: number | undefined;
  /** The origin's connector id and type (`search`, `crawler`): sent in the body, default source of evidence. */
  readonly id?: string | undefined;
  readonly type?: string | undefined;
  /** Extra request headers (may carry credentials): sent, never returned, logged or stored. */
  readonly headers?: Readonly<Record<string, string>> | undefined;
  /** Labels added to every candidate from this connector. */
  readonly defaultLabels?: readonly string[] | undefined;
}

/** Arguments of {@link AcquisitionService.execute}. */
export interface ExecuteRequest {
  readonly execute: boolean;
  readonly connector: ConnectorTarget;
  readonly reviewBeforeAdmission: boolean;
  readonly taskIds?: readonly string[] | undefined;
  readonly budget?: number | undefined;
  readonly maxGaps?: number | undefined;
  /** Source of evidence that names none. @default acquisition */
  readonly sourceId?: string | undefined;
  /** Gap detection knobs of the recomputed plan (topics per gap, sparsity threshold). */
  readonly gapOptions?: PlanGapOptions | undefined;
  /** Keep only evidence whose source (its own, else the default) is listed. @default every source */
  readonly allowedSourceIds?: readonly string[] | undefined;
  /** Most evidence items kept per connector call (after the source filter). @default 100 */
  readonly maxResults?: number | undefined;
  /** Attempts per task in this call while failures are retryable. @default 1 */
  readonly maxAttempts?: number | undefined;
}

/** Gap detection knobs a plan may pass on (the origin's `top_k` and `min_gap_size`). */
export interface PlanGapOptions {
  readonly topK?: number | undefined;
  readonly maxDensity?: number | undefined;
}

/** Source id of evidence without its own. */
export const DEFAULT_EVIDENCE_SOURCE = 'acquisition';

export function timeoutOf(ms: number | undefined): number {
  const value = ms ?? CONNECTOR_TIMEOUT.defaultMs;
  if (!Number.isInteger(value) || value < 1 || value > CONNECTOR_TIMEOUT.maxMs)
    throw new ValidationError(
      `connector.timeout_ms: must be a whole number of milliseconds from 1 to ${CONNECTOR_TIMEOUT.maxMs}`,
      { code: 'invalid_request' },
    );
  return value;
}

/** Source of a piece of evidence: its own, else the request's, else the connector id, else `acquisition`. */
export function evidenceSource(e: Evidence, request: ExecuteRequest): string {
  return e.source_id ?? request.sourceId ?? request.connector.id ?? DEFAULT_EVIDENCE_SOURCE;
}

/** Evidence kept from one call: allowed sources only, at most `maxResults` items. */
export function keepEvidence(
  evidence: readonly Evidence[],
  request: ExecuteRequest,
  connector: ConnectorTarget,
): Evidence[] {
  const allowed =
    request.allowedSourceIds && request.allowedSourceIds.length > 0 ? new Set(request.allowedSourceIds) : undefined;
  const kept = evidence.filter(
    (e) => allowed === undefined || allowed.has(evidenceSource(e, { ...request, connector })),
  );
  return kept.slice(0, request.maxResults ?? kept.length);
}

/** The origin's connector request fields, sent alongside ours to named connectors. */
export function originFields(task: AcquisitionTask, connector: ConnectorTarget, request: ExecuteRequest) {
  return {
    task_id: task.id,
    task_type: task.type,
    query: task.nearestTopics.length > 0 ? task.nearestTopics.join(' ') : task.description,
    prompt: task.prompt,
    allowed_source_ids: [...(request.allowedSourceIds ?? [])],
    max_results: request.maxResults ?? null,
    connector_id: connector.id,
    connector_type: connector.type ?? null,
  };
}

/** The staged candidate of one piece of evidence; its id is stable for the namespace, execution, index and content. */
export function candidateRow(
  ns: Namespace,
  task: AcquisitionTask,
  key: string,
  receiptId: string,
  index: number,
  e: Evidence,
  request: ExecuteRequest,
  tx: number,
): Omit<AcquisitionCandidateRow, 'id'> {
  const id = `cand_${createHash('sha256')
    .update(`${ns.id}\u0000${key}\u0000${index}\u0000${canonicalContent(e.content)}`)
    .digest('hex')
    .slice(0, 24)}`;
  return {
    candidate_id: id,
    ns_id: ns.id,
    task_id: task.id,
    task_type: task.type,
    receipt_id: receiptId,
    idempotency_key: key,
    review_required: request.reviewBeforeAdmission ? 1 : 0,
    content: e.content,
    source_id: evidenceSource(e, request),
    labels: JSON.stringify(
      [...new Set([...(e.labels ?? []), ...(request.connector.defaultLabels ?? []), ...task.nearestTopics])]
        .sort()
        .slice(0, 100),
    ),
    properties: JSON.stringify(e.properties ?? {}),
    confidence: e.confidence ?? null,
    evidence_url: e.url ?? null,
    status: 'staged',
    node_id: null,
    actor: null,
    note: null,
    decided_at: null,
    created_at: tx,
  };
}
