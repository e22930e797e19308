/**
 * Review handoff webhooks: a signed dry-run plan, opt-in synchronous delivery of a recorded digest
 * snapshot with a captured response and an append-only receipt, retry candidates, paced
 * recommendations, fatigue per target, and explicit retries that resolve a candidate on success.
 * Nothing is retried in the background. The signing secret is an argument of each call and is
 * never returned, logged or stored (docs/adr/0033-handoff-webhooks.md).
 */
import { ConflictError, NotFoundError, ValidationError } from '../../domain/errors.js';
import { type EscalationDigest } from '../../domain/knowledge/escalation-digest.js';
import { DEFAULT_REVIEW_THRESHOLDS } from '../../domain/knowledge/review-rules.js';
import {
  RETRY_FATIGUE_PRESETS,
  RETRY_PACING,
  recommendRetry,
  retryCandidates,
  retryFatigue,
  type CandidateScope,
  type DeliveryAttempt,
  type RetryCandidate,
} from '../../domain/knowledge/handoff-retry.js';
import type { DigestRow, ReceiptRow } from '../../store/knowledge/handoff-store.js';
import type { KnowledgeState, Namespace } from '../core/knowledge-state.js';
import { groupView, type DigestScope, type EscalationService } from './escalation-service.js';
import {
  ATTEMPT_HEADER,
  DELIVERY_HEADER,
  EVENT_HEADER,
  SIGNATURE_HEADER,
  sha256Hex,
  signBody,
  type WebhookClient,
} from '../../domain/knowledge/webhook-port.js';
import { isoTime } from '../core/time.js';
import { webhookDeliveryResult } from '../../domain/knowledge/knowledge-telemetry.js';

/** The event type of handoff payloads (header `x-svc-event`). */
export const HANDOFF_EVENT = 'review.handoff';

/** Default and largest delivery timeout. */
export const HANDOFF_TIMEOUT = { defaultMs: 5000, maxMs: 30_000 } as const;

/** Options of {@link HandoffService}. */
export interface HandoffOptions {
  /** Outbound webhooks through the outbound guard (its policy says whether private targets are allowed). */
  readonly webhooks: WebhookClient;
}

/** Arguments of plan and deliver. */
export interface HandoffRequest extends DigestScope {
  readonly targetUrl: string;
  readonly secret: string;
  readonly timeoutMs?: number | undefined;
}

/** The canonical payload bytes of a handoff of `digest` (same input, same bytes). */
export function handoffPayload(
  namespace: string,
  eventId: string | null,
  createdAt: number,
  scope: { owner: string | null; escalationLevel: string | null; escalationAfterHours: number },
  digest: EscalationDigest,
): string {
  return JSON.stringify({
    type: HANDOFF_EVENT,
    namespace,
    digest_event_id: eventId,
    created_at: isoTime(createdAt),
    owner: scope.owner,
    escalation_level: scope.escalationLevel,
    escalation_after_hours: scope.escalationAfterHours,
    total_escalated: digest.totalEscalated,
    note: digest.note,
    groups: digest.groups.map(groupView),
  });
}

function payloadOf(ns: Namespace, row: DigestRow): string {
  return handoffPayload(
    ns.name,
    row.event_id,
    row.created_at,
    { owner: row.owner, escalationLevel: row.escalation_level, escalationAfterHours: row.escalation_after_hours },
    JSON.parse(row.digest) as EscalationDigest,
  );
}

function checkSecret(secret: string): void {
  if (secret.length < 8 || secret.length > 512)
    throw new ValidationError('secret: must be 8-512 characters', {
      code: 'invalid_request',
      details: { field: 'secret' },
    });
}

function timeoutOf(ms: number | undefined): number {
  const value = ms ?? HANDOFF_TIMEOUT.defaultMs;
  if (!Number.isInteger(value) || value < 1 || value > HANDOFF_TIMEOUT.maxMs)
    throw new ValidationError(`timeout_ms: must be a whole number of milliseconds from 1 to ${HANDOFF_TIMEOUT.maxMs}`, {
      code: 'invalid_request',
    });
  return value;
}

function attemptOf(r: ReceiptRow): DeliveryAttempt {
  return {
    digestEventId: r.digest_event_id,
    targetUrl: r.target_url,
    success: r.success === 1,
    statusCode: r.status_code,
    payloadSha256: r.payload_sha256,
    error: r.error,
    txTime: r.tx_time,
  };
}

/** REST form of a receipt. */
export function receiptView(r: ReceiptRow) {
  return {
    digest_event_id: r.digest_event_id,
    target_url: r.target_url,
    attempt: r.attempt,
    success: r.success === 1,
    status_code: r.status_code,
    payload_sha256: r.payload_sha256,
    response_sha256: r.response_sha256,
    error: r.error,
    duration_ms: r.duration_ms,
    tx_time: isoTime(r.tx_time),
  };
}

/** Plans, delivers and retries handoff webhooks. */
export class HandoffService {
  readonly #core: KnowledgeState;
  readonly #escalations: EscalationService;
  readonly #webhooks: WebhookClient;

  constructor(core: KnowledgeState, escalations: EscalationService, options: HandoffOptions) {
    this.#core = core;
    this.#escalations = escalations;
    this.#webhooks = options.webhooks;
  }

  #check(url: string) {
    return this.#webhooks.checkTarget(url);
  }

  /** Dry run: the payload that would be sent now, its hash and signature. Sends nothing, records nothing. */
  async plan(tenant: string, nsName: string, request: HandoffRequest) {
    const core = this.#core;
    const ns = core.namespace(tenant, nsName);
    checkSecret(request.secret);
    const target = await this.#check(request.targetUrl);
    const now = core.now();
    const digest = this.#escalations.build(ns, request, now);
    const payload = handoffPayload(
      ns.name,
      null,
      now,
      {
        owner: request.owner ?? null,
        escalationLevel: request.escalationLevel ?? null,
        escalationAfterHours: request.escalationAfterHours ?? DEFAULT_REVIEW_THRESHOLDS.escalationAfterHours,
      },
      digest,
    );
    return {
      target_url: target.url.toString(),
      dry_run: true,
      payload_sha256: sha256Hex(payload),
      signature: signBody(request.secret, payload),
      max_attempts: RETRY_PACING.maxAttempts,
      signature_header: SIGNATURE_HEADER,
      total_escalated: digest.totalEscalated,
      payload: JSON.parse(payload) as unknown,
    };
  }

  /**
   * Delivers a handoff when `execute` is true: records a digest snapshot (kind handoff), posts it
   * signed, records a receipt. With `execute` false it answers the dry run without sending.
   */
  async deliver(tenant: string, nsName: string, request: HandoffRequest & { execute: boolean }) {
    const core = this.#core;
    const ns = core.namespace(tenant, nsName);
    checkSecret(request.secret);
    const timeoutMs = timeoutOf(request.timeoutMs);
    const target = await this.#check(request.targetUrl);
    if (!request.execute) {
      const plan = await this.plan(tenant, nsName, request);
      return {
        target_url: plan.target_url,
        dry_run: true,
        executed: false,
        status_code: null,
        response_body: null,
        error: null,
        payload_sha256: plan.payload_sha256,
        digest_event_id: null,
        receipt: null,
      };
    }
    const row = this.#escalations.record(ns, request, undefined, 'handoff');
    const receipt = await this.#send(ns, row, target.url.toString(), request.secret, timeoutMs, 1);
    return {
      target_url: receipt.target_url,
      dry_run: false,
      executed: true,
      status_code: receipt.status_code,
      response_body: receipt.response_body,
      error: receipt.error,
      payload_sha256: receipt.payload_sha256,
      digest_event_id: row.event_id,
      receipt: receiptView(receipt.row),
    };
  }

  async #send(ns: Namespace, row: DigestRow, targetUrl: string, secret: string, timeoutMs: number, attempt: number) {
    const core = this.#core;
    const target = await this.#check(targetUrl);
    const payload = payloadOf(ns, row);
    const outcome = await this.#webhooks.postJson(
      target,
      payload,
      {
        [SIGNATURE_HEADER]: signBody(secret, payload),
        [EVENT_HEADER]: HANDOFF_EVENT,
        [DELIVERY_HEADER]: row.event_id,
        [ATTEMPT_HEADER]: String(attempt),
      },
      timeoutMs,
    );
    core.telemetry.webhookDelivery(webhookDeliveryResult(outcome.success, attempt, RETRY_PACING.maxAttempts));
    const receipt = core.nodes.transaction(() =>
      core.handoffs.insertReceipt({
        ns_id: ns.id,
        digest_event_id: row.event_id,
        target_url: targetUrl,
        attempt,
        success: outcome.success ? 1 : 0,
        status_code: outcome.statusCode,
        payload_sha256: sha256Hex(payload),
        response_sha256: outcome.responseSha256,
        error: outcome.error,
        duration_ms: outcome.durationMs,
        tx_time: core.nextTx(),
      }),
    );
    return {
      row: receipt,
      target_url: targetUrl,
      status_code: outcome.statusCode,
      response_body: outcome.responseBody,
      error: outcome.error,
      payload_sha256: receipt.payload_sha256,
    };
  }

  /** Receipts, oldest first. */
  receipts(tenant: string, nsName: string, limit = 1000, offset = 0) {
    const ns = this.#core.namespace(tenant, nsName);
    return this.#core.handoffs.receipts(ns.id, limit, offset).map(receiptView);
  }

  #candidates(ns: Namespace): RetryCandidate[] {
    return retryCandidates(this.#core.handoffs.allReceipts(ns.id).map(attemptOf));
  }

  /** Unresolved failed deliveries. */
  retryCandidates(tenant: string, nsName: string) {
    const ns = this.#core.namespace(tenant, nsName);
    return this.#candidates(ns).map(candidateView);
  }

  /** Pacing recommendations for every candidate at now. */
  retryRecommendations(tenant: string, nsName: string) {
    const core = this.#core;
    const ns = core.namespace(tenant, nsName);
    const now = core.now();
    return this.#candidates(ns).map((c) => {
      const r = recommendRetry(c, now);
      return {
        digest_event_id: r.digestEventId,
        target_url: r.targetUrl,
        attempts: r.attempts,
        recommended_after: isoTime(r.recommendedAfter),
        delay_seconds: r.delaySeconds,
        ready: r.ready,
        reason: r.reason,
      };
    });
  }

  /** Fatigue per target, optionally narrowed by a preset, an owner and an escalation level (additive). */
  retryFatigue(
    tenant: string,
    nsName: string,
    filter: { preset?: string | undefined; owner?: string | undefined; escalationLevel?: string | undefined },
  ) {
    const core = this.#core;
    const ns = core.namespace(tenant, nsName);
    const preset =
      filter.preset === undefined ? undefined : RETRY_FATIGUE_PRESETS.find((p) => p.name === filter.preset);
    if (filter.preset !== undefined && !preset) {
      throw new ValidationError(
        `preset: "${filter.preset.slice(0, 64)}" is not one of ${RETRY_FATIGUE_PRESETS.map((p) => p.name).join(', ')}`,
        { code: 'invalid_request' },
      );
    }
    const owner = filter.owner ?? preset?.owner;
    const level = filter.escalationLevel ?? preset?.escalation_level;
    const scopes = new Map<string, CandidateScope>();
    const scope = (c: RetryCandidate): CandidateScope => {
      let s = scopes.get(c.digestEventId);
      if (!s) {
        const row = core.handoffs.digest(ns.id, c.digestEventId);
        const groups = row ? (JSON.parse(row.digest) as EscalationDigest).groups : [];
        s = {
          owners: [...new Set(groups.map((g) => g.owner))].sort(),
          escalationLevels: [...new Set(groups.map((g) => g.escalationLevel as string))].sort(),
        };
        scopes.set(c.digestEventId, s);
      }
      return s;
    };
    const candidates = this.#candidates(ns).filter(
      (c) =>
        (owner === undefined || scope(c).owners.includes(owner)) &&
        (level === undefined || scope(c).escalationLevels.includes(level)),
    );
    return {
      preset: preset?.name ?? null,
      owner: owner ?? null,
      escalation_level: level ?? null,
      presets: RETRY_FATIGUE_PRESETS,
      targets: retryFatigue(candidates, scope, core.now()).map((f) => ({
        target_url: f.targetUrl,
        candidates: f.candidates,
        total_attempts: f.totalAttempts,
        ready: f.ready,
        waiting: f.waiting,
        status_families: f.statusFamilies,
        owners: f.owners,
        escalation_levels: f.escalationLevels.map((e) => ({ escalation_level: e.escalationLevel, count: e.count })),
        last_status_code: f.lastStatusCode,
        last_error: f.lastError,
      })),
    };
  }

  /** Retries one candidate explicitly (execute must be true): resends the recorded payload and records a new receipt. */
  async retry(
    tenant: string,
    nsName: string,
    request: {
      digestEventId: string;
      targetUrl: string;
      secret: string;
      execute: boolean;
      timeoutMs?: number | undefined;
    },
  ) {
    const core = this.#core;
    const ns = core.namespace(tenant, nsName);
    if (request.execute !== true)
      throw new ValidationError('execute: must be true to retry a delivery (retries are explicit and always send)', {
        code: 'execute_required',
      });
    checkSecret(request.secret);
    const timeoutMs = timeoutOf(request.timeoutMs);
    const candidate = this.#candidates(ns).find(
      (c) => c.digestEventId === request.digestEventId && c.targetUrl === request.targetUrl,
    );
    if (!candidate)
      throw new NotFoundError(
        `no unresolved failed delivery of digest ${request.digestEventId} to ${request.targetUrl}`,
        { code: 'retry_candidate_not_found' },
      );
    const row = core.handoffs.digest(ns.id, candidate.digestEventId);
    if (!row) throw new NotFoundError(`digest ${candidate.digestEventId} does not exist`, { code: 'digest_not_found' });
    if (sha256Hex(payloadOf(ns, row)) !== candidate.payloadSha256)
      throw new ConflictError(`digest ${row.event_id} no longer renders the payload that failed`, {
        code: 'payload_changed',
      });
    const receipt = await this.#send(ns, row, candidate.targetUrl, request.secret, timeoutMs, candidate.attempts + 1);
    return {
      target_url: receipt.target_url,
      dry_run: false,
      executed: true,
      status_code: receipt.status_code,
      response_body: receipt.response_body,
      error: receipt.error,
      payload_sha256: receipt.payload_sha256,
      digest_event_id: row.event_id,
      resolved: receipt.row.success === 1,
      receipt: receiptView(receipt.row),
    };
  }
}

function candidateView(c: RetryCandidate) {
  return {
    digest_event_id: c.digestEventId,
    target_url: c.targetUrl,
    attempts: c.attempts,
    last_status_code: c.lastStatusCode,
    payload_sha256: c.payloadSha256,
    last_error: c.lastError,
    last_attempt_at: isoTime(c.lastAttemptAt),
  };
}
