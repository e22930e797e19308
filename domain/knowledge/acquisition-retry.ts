/**
 * Retry rules of acquisition connector executions: how an attempt's outcome is classified, which
 * failed executions are unresolved, and when to retry them. Candidates and pacing reuse the
 * handoff webhook rules (`handoff-retry.ts`); permanent failures are never "ready"
 * (docs/adr/0035-knowledge-acquisition.md).
 */
import {
  recommendRetry,
  retryCandidates,
  type DeliveryAttempt,
  type RetryCandidate,
  type RetryRecommendation,
} from './handoff-retry.js';

/** Retry classification of one connector attempt. */
export const RETRY_CLASSES = ['none', 'retryable', 'permanent'] as const;
export type RetryClass = (typeof RETRY_CLASSES)[number];

/**
 * `none` for success; `retryable` for no response (network error, timeout), 408, 425, 429 and
 * 5xx; `permanent` for every other status (other 4xx, redirects, which are never followed) and
 * for a 2xx whose body breaks the evidence contract.
 */
export function classifyAttempt(statusCode: number | null, success: boolean): RetryClass {
  if (success) return 'none';
  if (statusCode === null) return 'retryable';
  if (statusCode >= 500 || statusCode === 408 || statusCode === 425 || statusCode === 429) return 'retryable';
  return 'permanent';
}

/** One connector attempt as the retry rules see it. */
export interface ConnectorAttempt {
  readonly idempotencyKey: string;
  readonly taskId: string;
  readonly connectorUrl: string;
  readonly success: boolean;
  readonly retryClass: RetryClass;
  readonly statusCode: number | null;
  readonly requestSha256: string;
  readonly error: string | null;
  readonly txTime: number;
}

/** An unresolved failed execution: the latest attempt of its idempotency key and connector failed. */
export interface ConnectorRetryCandidate extends RetryCandidate {
  readonly taskId: string;
  readonly retryClass: RetryClass;
}

/** Unresolved failed executions, oldest latest attempt first. */
export function connectorRetryCandidates(attempts: readonly ConnectorAttempt[]): ConnectorRetryCandidate[] {
  const last = new Map<string, ConnectorAttempt>();
  const key = (digest: string, url: string) => `${digest}\u0000${url}`;
  for (const a of attempts) last.set(key(a.idempotencyKey, a.connectorUrl), a);
  const delivery: DeliveryAttempt[] = attempts.map((a) => ({
    digestEventId: a.idempotencyKey,
    targetUrl: a.connectorUrl,
    success: a.success,
    statusCode: a.statusCode,
    payloadSha256: a.requestSha256,
    error: a.error,
    txTime: a.txTime,
  }));
  return retryCandidates(delivery).map((c) => {
    const l = last.get(key(c.digestEventId, c.targetUrl))!;
    return { ...c, taskId: l.taskId, retryClass: l.retryClass };
  });
}

/** Pacing of a candidate at `now`: the handoff pacing, except that permanent failures are never ready. */
export function recommendConnectorRetry(
  candidate: ConnectorRetryCandidate,
  now: number,
): RetryRecommendation & { readonly taskId: string; readonly retryClass: RetryClass } {
  const r = recommendRetry(candidate, now);
  if (candidate.retryClass !== 'permanent') return { ...r, taskId: candidate.taskId, retryClass: candidate.retryClass };
  return {
    ...r,
    taskId: candidate.taskId,
    retryClass: candidate.retryClass,
    ready: false,
    reason: `permanent failure (${candidate.lastStatusCode === null ? (candidate.lastError ?? 'error') : `answered ${candidate.lastStatusCode}`}): the same request would fail again; fix the task or the connector, then execute it again`,
  };
}
