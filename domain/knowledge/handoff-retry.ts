/**
 * Handoff webhook retries as pure rules: which failed deliveries are candidates, when each should
 * be retried (exponential pacing), and fatigue per target endpoint (docs/adr/0033).
 */

/** One delivery attempt as the rules see it. */
export interface DeliveryAttempt {
  readonly digestEventId: string;
  readonly targetUrl: string;
  readonly success: boolean;
  readonly statusCode: number | null;
  readonly payloadSha256: string;
  readonly error: string | null;
  readonly txTime: number;
}

/** An unresolved failed delivery: its latest attempt failed. */
export interface RetryCandidate {
  readonly digestEventId: string;
  readonly targetUrl: string;
  readonly attempts: number;
  readonly lastStatusCode: number | null;
  readonly payloadSha256: string;
  readonly lastError: string | null;
  readonly lastAttemptAt: number;
}

/** Pacing of the next retry of a candidate. */
export interface RetryRecommendation {
  readonly digestEventId: string;
  readonly targetUrl: string;
  readonly attempts: number;
  readonly recommendedAfter: number;
  readonly delaySeconds: number;
  readonly ready: boolean;
  readonly reason: string;
}

/** Exponential pacing: base delay doubled per attempt after the first, capped. */
export const RETRY_PACING = { baseSeconds: 60, maxSeconds: 6 * 3600, maxAttempts: 5 } as const;

/** Candidates: (digest, target) pairs whose latest attempt failed, in order of that attempt. */
export function retryCandidates(attempts: readonly DeliveryAttempt[]): RetryCandidate[] {
  const pairs = new Map<string, DeliveryAttempt[]>();
  for (const a of attempts) {
    const key = `${a.digestEventId}\u0000${a.targetUrl}`;
    const list = pairs.get(key) ?? [];
    list.push(a);
    pairs.set(key, list);
  }
  const out: RetryCandidate[] = [];
  for (const list of pairs.values()) {
    const last = list.at(-1)!;
    if (last.success) continue;
    out.push({
      digestEventId: last.digestEventId,
      targetUrl: last.targetUrl,
      attempts: list.length,
      lastStatusCode: last.statusCode,
      payloadSha256: last.payloadSha256,
      lastError: last.error,
      lastAttemptAt: last.txTime,
    });
  }
  return out.sort((a, b) => a.lastAttemptAt - b.lastAttemptAt);
}

/** Delay before retry number `attempts + 1`: base · 2^(attempts - 1), capped. */
export function retryDelaySeconds(attempts: number): number {
  return Math.min(RETRY_PACING.maxSeconds, RETRY_PACING.baseSeconds * 2 ** Math.max(0, Math.min(attempts - 1, 30)));
}

/** When to retry a candidate, seen at `now`. */
export function recommendRetry(candidate: RetryCandidate, now: number): RetryRecommendation {
  const delaySeconds = retryDelaySeconds(candidate.attempts);
  const recommendedAfter = candidate.lastAttemptAt + delaySeconds * 1000;
  const exhausted = candidate.attempts >= RETRY_PACING.maxAttempts;
  const ready = !exhausted && now >= recommendedAfter;
  const what =
    candidate.lastStatusCode === null
      ? `failed without a response (${candidate.lastError ?? 'error'})`
      : `answered ${candidate.lastStatusCode}`;
  return {
    digestEventId: candidate.digestEventId,
    targetUrl: candidate.targetUrl,
    attempts: candidate.attempts,
    recommendedAfter,
    delaySeconds,
    ready,
    reason: exhausted
      ? `${candidate.attempts} attempts reached the limit of ${RETRY_PACING.maxAttempts}; last ${what}; no automatic pacing, retry explicitly after checking the target`
      : `${candidate.attempts} attempt${candidate.attempts === 1 ? '' : 's'}; last ${what}; wait ${delaySeconds} s after it (${RETRY_PACING.baseSeconds} s doubled per attempt, at most ${RETRY_PACING.maxSeconds} s)${ready ? '; ready now' : ''}`,
  };
}

/** Status family of an attempt: `2xx`..`5xx`, or `network` without a response. */
export function statusFamily(statusCode: number | null): string {
  return statusCode === null ? 'network' : `${Math.floor(statusCode / 100)}xx`;
}

/** Owners and escalation levels a candidate's digest covers. */
export interface CandidateScope {
  readonly owners: readonly string[];
  readonly escalationLevels: readonly string[];
}

/** Fatigue of one target endpoint. */
export interface RetryFatigue {
  readonly targetUrl: string;
  readonly candidates: number;
  readonly totalAttempts: number;
  readonly ready: number;
  readonly waiting: number;
  readonly statusFamilies: { family: string; count: number }[];
  readonly owners: { owner: string; count: number }[];
  readonly escalationLevels: { escalationLevel: string; count: number }[];
  readonly lastStatusCode: number | null;
  readonly lastError: string | null;
}

function counted<K extends string>(values: readonly string[], key: K): ({ count: number } & Record<K, string>)[] {
  const m = new Map<string, number>();
  for (const v of values) m.set(v, (m.get(v) ?? 0) + 1);
  return [...m.entries()]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([v, count]) => ({ [key]: v, count }) as { count: number } & Record<K, string>);
}

/** Fatigue per target: candidates, attempts, pacing state and what failed, most attempts first. */
export function retryFatigue(
  candidates: readonly RetryCandidate[],
  scope: (c: RetryCandidate) => CandidateScope,
  now: number,
): RetryFatigue[] {
  const byTarget = new Map<string, RetryCandidate[]>();
  for (const c of candidates) byTarget.set(c.targetUrl, [...(byTarget.get(c.targetUrl) ?? []), c]);
  const out: RetryFatigue[] = [];
  for (const [targetUrl, list] of byTarget) {
    const ready = list.filter((c) => recommendRetry(c, now).ready).length;
    const last = [...list].sort((a, b) => a.lastAttemptAt - b.lastAttemptAt).at(-1)!;
    out.push({
      targetUrl,
      candidates: list.length,
      totalAttempts: list.reduce((n, c) => n + c.attempts, 0),
      ready,
      waiting: list.length - ready,
      statusFamilies: counted(
        list.map((c) => statusFamily(c.lastStatusCode)),
        'family',
      ),
      owners: counted(
        list.flatMap((c) => scope(c).owners),
        'owner',
      ),
      escalationLevels: counted(
        list.flatMap((c) => scope(c).escalationLevels),
        'escalationLevel',
      ),
      lastStatusCode: last.lastStatusCode,
      lastError: last.lastError,
    });
  }
  return out.sort((a, b) => b.totalAttempts - a.totalAttempts || a.targetUrl.localeCompare(b.targetUrl));
}

/** A named retry-fatigue filter (REST snake_case; no other properties). */
export interface RetryFatiguePreset {
  readonly name: string;
  readonly owner?: string;
  readonly escalation_level?: string;
  readonly description: string;
  readonly example_rest_query: string;
  readonly example_graphql: string;
}

/** The presets, in their stable order. */
export const RETRY_FATIGUE_PRESETS: readonly RetryFatiguePreset[] = [
  {
    name: 'review-overdue',
    escalation_level: 'review_overdue',
    description: 'Targets failing to receive handoffs of review items open or assigned past the escalation age.',
    example_rest_query: 'GET /v1/namespaces/{ns}/review/handoff-webhooks/retry-fatigue?preset=review-overdue',
    example_graphql:
      'reviewHandoffRetryFatigue(namespace: "{ns}", preset: "review-overdue") { targetUrl candidates totalAttempts ready waiting }',
  },
  {
    name: 'source-trust-anomaly',
    escalation_level: 'source_trust_anomaly',
    description: 'Targets failing to receive handoffs of source trust anomalies.',
    example_rest_query: 'GET /v1/namespaces/{ns}/review/handoff-webhooks/retry-fatigue?preset=source-trust-anomaly',
    example_graphql:
      'reviewHandoffRetryFatigue(namespace: "{ns}", preset: "source-trust-anomaly") { targetUrl candidates totalAttempts ready waiting }',
  },
  {
    name: 'unassigned-review-overdue',
    owner: 'unassigned',
    escalation_level: 'review_overdue',
    description: 'Targets failing to receive handoffs of overdue review items that nobody owns.',
    example_rest_query:
      'GET /v1/namespaces/{ns}/review/handoff-webhooks/retry-fatigue?preset=unassigned-review-overdue',
    example_graphql:
      'reviewHandoffRetryFatigue(namespace: "{ns}", preset: "unassigned-review-overdue") { targetUrl candidates totalAttempts ready waiting }',
  },
];
