/**
 * The review worker: one bounded cycle over open review items. An evaluator (the built-in rules,
 * or the server-configured webhook) proposes an action per item; actions outside
 * `allowed_actions` are skipped. A plan (execute false) changes nothing; an execution first
 * assigns the item to the worker, then applies the action and records the closing decision. A
 * failed action leaves the item assigned to the worker for manual inspection (with the feedback's
 * pending intent, when one was recorded). Every cycle leaves a durable run summary
 * (docs/adr/0034-review-worker.md).
 */
import { ConflictError, ValidationError } from '../../domain/errors.js';
import { REVIEW_ACTIONS, type ReviewAction, type ReviewItemState } from '../../domain/knowledge/review-rules.js';
import type { WorkerRunRow } from '../../store/knowledge/handoff-store.js';
import type { KnowledgeState } from '../core/knowledge-state.js';
import type { FeedbackService } from '../feedback/feedback-service.js';
import { ReviewService } from './review-service.js';
import {
  DELIVERY_HEADER,
  EVENT_HEADER,
  SIGNATURE_HEADER,
  signBody,
  type WebhookClient,
} from '../../domain/knowledge/webhook-port.js';
import { isoTime } from '../core/time.js';

/** Owner recorded on items the worker is working on. */
export const WORKER_OWNER = 'review-worker';
/** Largest cycle. */
export const WORKER_MAX_LIMIT = 100;
/** Actions allowed when the request names none: those that change no claim. */
export const DEFAULT_ALLOWED_ACTIONS: readonly ReviewAction[] = ['needs_evidence', 'snooze', 'resolve'];
/** How long the worker snoozes an item. */
export const WORKER_SNOOZE_MS = 7 * 24 * 3_600_000;

/** Body of `POST /review/worker/cycle`. */
export interface WorkerCycleRequest {
  readonly execute?: boolean;
  readonly limit?: number;
  readonly evaluator?: 'rules' | 'webhook';
  readonly allowed_actions?: readonly ReviewAction[];
}

/** Options of {@link ReviewWorker}: the server-configured evaluator webhook. */
export interface ReviewWorkerOptions {
  readonly webhookUrl?: string | undefined;
  readonly webhookSecret?: string | undefined;
  /** Outbound webhooks through the outbound guard. */
  readonly webhooks: WebhookClient;
  /** @default 10000 */
  readonly webhookTimeoutMs?: number;
}

/** One item's step in a cycle. */
export interface WorkerStep {
  review_id: string;
  type: string;
  node_id: string;
  action: string | null;
  outcome: 'planned' | 'applied' | 'skipped' | 'failed';
  detail?: string;
  feedback_event_id?: string;
}

const FEEDBACK_OF: Partial<Record<ReviewAction, 'validate' | 'refute' | 'stale'>> = {
  validate: 'validate',
  refute: 'refute',
  mark_stale: 'stale',
};

/** Runs review cycles. */
export class ReviewWorker {
  readonly #core: KnowledgeState;
  readonly #review: ReviewService;
  readonly #feedback: FeedbackService;
  readonly #options: ReviewWorkerOptions;

  constructor(core: KnowledgeState, review: ReviewService, feedback: FeedbackService, options: ReviewWorkerOptions) {
    this.#core = core;
    this.#review = review;
    this.#feedback = feedback;
    this.#options = options;
  }

  /** Plans or executes one cycle; always records a run summary. */
  async cycle(tenant: string, nsName: string, request: WorkerCycleRequest) {
    const core = this.#core;
    const ns = core.namespace(tenant, nsName);
    const execute = request.execute ?? false;
    const limit = request.limit ?? 20;
    if (!Number.isInteger(limit) || limit < 1 || limit > WORKER_MAX_LIMIT)
      throw new ValidationError(`limit: must be 1-${WORKER_MAX_LIMIT}`, { code: 'invalid_request' });
    const evaluator = request.evaluator ?? 'rules';
    if (
      evaluator === 'webhook' &&
      (this.#options.webhookUrl === undefined || this.#options.webhookSecret === undefined)
    ) {
      throw new ConflictError(
        'evaluator webhook: SVC_KNOWLEDGE_REVIEW_WEBHOOK_URL and SVC_KNOWLEDGE_REVIEW_WEBHOOK_SECRET are not configured',
        { code: 'evaluator_not_configured' },
      );
    }
    const allowed = new Set<string>(request.allowed_actions ?? DEFAULT_ALLOWED_ACTIONS);
    const runId = core.newId();
    const startedAt = core.nextTx();
    core.handoffs.insertRun({
      run_id: runId,
      ns_id: ns.id,
      execute: execute ? 1 : 0,
      evaluator,
      item_limit: limit,
      allowed_actions: JSON.stringify([...allowed].sort()),
      status: 'running',
      summary: '{}',
      started_at: startedAt,
      finished_at: null,
    });
    const now = core.now();
    const t = ReviewService.thresholds();
    const { items } = this.#review.select(ns, t, now, { status: 'open' }, limit);
    const steps: WorkerStep[] = [];
    let status = 'completed';
    let error: string | undefined;
    try {
      const proposals =
        evaluator === 'rules'
          ? new Map(items.map((i) => [i.id, { action: i.suggestedAction, note: `rules: ${i.reason}` }]))
          : await this.#askWebhook(ns.name, items);
      for (const item of items) {
        const proposal = proposals.get(item.id);
        const step: WorkerStep = {
          review_id: item.id,
          type: item.type,
          node_id: item.nodeId,
          action: proposal?.action ?? null,
          outcome: 'planned',
        };
        steps.push(step);
        if (!proposal || !(REVIEW_ACTIONS as readonly string[]).includes(proposal.action)) {
          step.outcome = 'skipped';
          step.detail = proposal ? `unknown action ${proposal.action.slice(0, 64)}` : 'the evaluator proposed nothing';
          continue;
        }
        if (!allowed.has(proposal.action)) {
          step.outcome = 'skipped';
          step.detail = `action ${proposal.action} is not in allowed_actions`;
          continue;
        }
        if (!execute) continue;
        await this.#apply(
          tenant,
          ns.name,
          item,
          proposal.action as ReviewAction,
          `review worker run ${runId}: ${proposal.note ?? ''}`.trim(),
          step,
        );
      }
      if (!execute) status = 'planned';
      else if (steps.some((s) => s.outcome === 'failed')) status = 'completed_with_failures';
    } catch (e) {
      status = 'failed';
      error = e instanceof Error ? e.message : String(e);
    }
    const count = (o: WorkerStep['outcome']) => steps.filter((s) => s.outcome === o).length;
    const summary = {
      considered: items.length,
      planned: count('planned'),
      applied: count('applied'),
      skipped: count('skipped'),
      failed: count('failed'),
      ...(error !== undefined ? { error } : {}),
      steps,
    };
    const finishedAt = core.nextTx();
    core.handoffs.finishRun(runId, status, JSON.stringify(summary), finishedAt);
    return runView({
      id: 0,
      run_id: runId,
      ns_id: ns.id,
      execute: execute ? 1 : 0,
      evaluator,
      item_limit: limit,
      allowed_actions: JSON.stringify([...allowed].sort()),
      status,
      summary: JSON.stringify(summary),
      started_at: startedAt,
      finished_at: finishedAt,
    });
  }

  async #apply(
    tenant: string,
    nsName: string,
    item: ReviewItemState,
    action: ReviewAction,
    note: string,
    step: WorkerStep,
  ): Promise<void> {
    const decide = (
      status: 'assigned' | 'snoozed' | 'resolved',
      owner: string | null,
      extra: { recheck_at?: string } = {},
    ) =>
      this.#review.decide(tenant, nsName, {
        review_id: item.id,
        status,
        owner,
        decision: action,
        note,
        actor: WORKER_OWNER,
        ...extra,
      });
    try {
      decide('assigned', WORKER_OWNER);
    } catch (e) {
      step.outcome = 'failed';
      step.detail = `could not assign: ${e instanceof Error ? e.message : String(e)}`;
      return;
    }
    try {
      const feedback = FEEDBACK_OF[action];
      if (feedback !== undefined) {
        const result = await this.#feedback.record(tenant, nsName, item.nodeId, feedback, { reason: note });
        step.feedback_event_id = result.event_id;
        decide('resolved', WORKER_OWNER);
      } else if (action === 'snooze') {
        decide('snoozed', WORKER_OWNER, { recheck_at: isoTime(this.#core.now() + WORKER_SNOOZE_MS)! });
      } else if (action === 'resolve') {
        decide('resolved', WORKER_OWNER);
      } else {
        // needs_evidence: hand the item back to people, unowned.
        decide('assigned', null);
      }
      step.outcome = 'applied';
    } catch (e) {
      // The item stays assigned to the worker: inspect it (and /recovery/pending) before reapplying.
      step.outcome = 'failed';
      step.detail = e instanceof Error ? e.message : String(e);
    }
  }

  async #askWebhook(
    namespace: string,
    items: readonly ReviewItemState[],
  ): Promise<Map<string, { action: string; note?: string }>> {
    const url = this.#options.webhookUrl!;
    const secret = this.#options.webhookSecret!;
    const target = await this.#options.webhooks.checkTarget(url);
    const body = JSON.stringify({
      type: 'review.evaluate',
      namespace,
      items: this.#review.views(items),
      allowed_actions: REVIEW_ACTIONS,
    });
    const outcome = await this.#options.webhooks.postJson(
      target,
      body,
      {
        [SIGNATURE_HEADER]: signBody(secret, body),
        [EVENT_HEADER]: 'review.evaluate',
        [DELIVERY_HEADER]: this.#core.newId(),
      },
      this.#options.webhookTimeoutMs ?? 10_000,
    );
    if (!outcome.success) throw new Error(`evaluator webhook failed: ${outcome.error ?? outcome.statusCode}`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(outcome.responseBody ?? '');
    } catch {
      throw new Error('evaluator webhook answered something other than JSON');
    }
    const decisions = (parsed as { decisions?: unknown }).decisions;
    if (!Array.isArray(decisions)) throw new Error('evaluator webhook answer lacks a decisions array');
    const out = new Map<string, { action: string; note?: string }>();
    for (const d of decisions as { review_id?: unknown; action?: unknown; note?: unknown }[]) {
      if (typeof d?.review_id === 'string' && typeof d.action === 'string')
        out.set(d.review_id, {
          action: d.action,
          ...(typeof d.note === 'string' ? { note: d.note.slice(0, 2000) } : {}),
        });
    }
    return out;
  }

  /** Run summaries, newest first. */
  runs(tenant: string, nsName: string, limit = 100, offset = 0) {
    const ns = this.#core.namespace(tenant, nsName);
    return this.#core.handoffs.runs(ns.id, limit, offset).map(runView);
  }
}

/** REST form of a run. */
export function runView(r: WorkerRunRow) {
  return {
    run_id: r.run_id,
    execute: r.execute === 1,
    evaluator: r.evaluator,
    limit: r.item_limit,
    allowed_actions: JSON.parse(r.allowed_actions) as string[],
    status: r.status,
    started_at: isoTime(r.started_at),
    finished_at: r.finished_at === null ? null : isoTime(r.finished_at),
    ...(JSON.parse(r.summary) as Record<string, unknown>),
  };
}
