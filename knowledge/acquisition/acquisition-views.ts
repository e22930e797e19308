/**
 * REST (snake_case) forms of acquisition plans, tasks, receipts and candidates.
 */
import type { AcquisitionPlan, AcquisitionTask } from '../../domain/knowledge/acquisition-plan.js';
import type { ConnectorRetryCandidate } from '../../domain/knowledge/acquisition-retry.js';
import type { AcquisitionCandidateRow, AcquisitionReceiptRow } from '../../store/knowledge/acquisition-store.js';
import { isoTime } from '../core/time.js';

/** REST (snake_case) form of a task. */
export function taskView(t: AcquisitionTask) {
  return {
    id: t.id,
    type: t.type,
    priority: t.priority,
    cost: t.cost,
    gap_id: t.gapId,
    description: t.description,
    prompt: t.prompt,
    related_node_ids: t.relatedNodeIds,
    nearest_topics: t.nearestTopics,
  };
}

/** REST form of a plan. */
export function planView(p: AcquisitionPlan) {
  return {
    namespace: p.namespace,
    coverage_score: p.coverageScore,
    total_nodes: p.totalNodes,
    budget: p.budget,
    budget_used: p.budgetUsed,
    deferred: p.deferred,
    tasks: p.tasks.map(taskView),
  };
}

/** REST form of a receipt (no token: it is never stored). */
export function acquisitionReceiptView(r: AcquisitionReceiptRow) {
  return {
    receipt_id: r.receipt_id,
    task_id: r.task_id,
    task_type: r.task_type,
    idempotency_key: r.idempotency_key,
    attempt: r.attempt,
    connector_url: r.connector_url,
    outcome: r.outcome,
    retry_class: r.retry_class,
    status_code: r.status_code,
    error: r.error,
    evidence_count: r.evidence_count,
    review_before_admission: r.review_before_admission === 1,
    request_sha256: r.request_sha256,
    response_sha256: r.response_sha256,
    duration_ms: r.duration_ms,
    tx_time: isoTime(r.tx_time),
  };
}

/** REST form of a candidate. */
export function candidateView(c: AcquisitionCandidateRow) {
  return {
    id: c.candidate_id,
    task_id: c.task_id,
    task_type: c.task_type,
    receipt_id: c.receipt_id,
    idempotency_key: c.idempotency_key,
    review_required: c.review_required === 1,
    content: c.content,
    source_id: c.source_id,
    labels: JSON.parse(c.labels) as string[],
    properties: JSON.parse(c.properties) as Record<string, unknown>,
    confidence: c.confidence,
    evidence_url: c.evidence_url,
    status: c.status,
    node_id: c.node_id,
    actor: c.actor,
    note: c.note,
    decided_at: c.decided_at === null ? null : isoTime(c.decided_at),
    created_at: isoTime(c.created_at),
  };
}

/** REST form of an unresolved failed execution. */
export function retryCandidateView(c: ConnectorRetryCandidate) {
  return {
    idempotency_key: c.digestEventId,
    task_id: c.taskId,
    connector_url: c.targetUrl,
    attempts: c.attempts,
    last_status_code: c.lastStatusCode,
    retry_class: c.retryClass,
    request_sha256: c.payloadSha256,
    last_error: c.lastError,
    last_attempt_at: isoTime(c.lastAttemptAt),
  };
}
