/**
 * Feedback on claims: validate, refute, useful and stale. Each action is recorded as a durable
 * pending intent first and applied in one transaction that writes the node's next version, the
 * source's new credibility and trust point, the per-node counters and the append-only feedback
 * event, and deletes the intent (docs/adr/0030-feedback-update-rules.md).
 */
import { ConflictError, isCallerError, UnavailableError } from '../../domain/errors.js';
import { applyFeedback, changesCredibility, type FeedbackAction } from '../../domain/knowledge/feedback-rules.js';
import { DEFAULT_SOURCE_CREDIBILITY } from '../../domain/knowledge/modes.js';
import type { FeedbackEventRow, NodeFeedbackRow } from '../../store/knowledge/feedback-store.js';
import type { IntentRow } from '../../store/knowledge/rows.js';
import type { KnowledgeState, Namespace } from '../core/knowledge-state.js';
import type { ApplyOutcome, WriteService } from '../write/write-service.js';
import { isoTime, parseTime } from '../core/time.js';

/** Optional body of the feedback endpoints. */
export interface FeedbackRequest {
  readonly reason?: string;
  /** `useful` only: recall quality 0-5 (SM-2 grade) scaling the utility step. */
  readonly quality?: number;
}

/** What a feedback intent stores (`request` is what `/recovery/pending` shows). */
export interface FeedbackIntentPayload {
  readonly request: {
    readonly node_id: string;
    readonly action: FeedbackAction;
    readonly reason?: string;
    readonly quality?: number;
  };
}

/** The result of one feedback action (REST form; GraphQL picks nodeId, action, confidence, sourceCredibility). */
export interface FeedbackResult {
  readonly event_id: string;
  readonly node_id: string;
  readonly node_version: number;
  readonly action: FeedbackAction;
  readonly confidence: number;
  readonly utility: number;
  readonly source_id: string;
  readonly source_credibility: number;
  readonly recall_count: number;
  readonly last_recalled_at: string | null;
  readonly explanation: string;
  readonly tx_time: string | null;
}

/** Records feedback and lists feedback events. */
export class FeedbackService {
  readonly #core: KnowledgeState;
  readonly #writes: WriteService;

  constructor(core: KnowledgeState, writes: WriteService) {
    this.#core = core;
    this.#writes = writes;
  }

  /** Applies one feedback action to a live node; durable before it returns. */
  async record(
    tenant: string,
    nsName: string,
    nodeId: string,
    action: FeedbackAction,
    request: FeedbackRequest = {},
  ): Promise<FeedbackResult> {
    const core = this.#core;
    const ns = core.namespace(tenant, nsName);
    const node = core.nodeIn(ns, nodeId);
    const now = core.now();
    const live = core.nodes.visible(node.id, now, now);
    if (!live || live.retracted === 1)
      throw new ConflictError(`node ${node.id} has no live version valid now; feedback applies to live claims`, {
        code: 'node_not_live',
      });
    const intent: IntentRow = {
      id: core.newId(),
      ns_id: ns.id,
      kind: 'feedback',
      node_id: node.id,
      request_id: null,
      payload: JSON.stringify({
        request: {
          node_id: node.id,
          action,
          ...(request.reason !== undefined ? { reason: request.reason } : {}),
          ...(request.quality !== undefined && action === 'useful' ? { quality: request.quality } : {}),
        },
      } satisfies FeedbackIntentPayload),
      created_at: core.nextTx(),
      attempts: 0,
      last_error: null,
    };
    core.intents.insert(intent);
    let outcome: ApplyOutcome;
    try {
      outcome = this.apply(ns, intent, false);
    } catch (error) {
      if (isCallerError(error)) {
        core.intents.remove(intent.id);
        throw error;
      }
      core.intents.recordFailure(intent.id, error instanceof Error ? error.message : String(error));
      throw new UnavailableError(
        'the feedback did not complete; it is recorded as a pending intent: inspect GET /recovery/pending and reconcile before resubmitting',
        {
          code: 'write_pending',
          details: { pending_intent_id: intent.id },
          cause: error,
        },
      );
    }
    if (outcome.kind !== 'applied') {
      core.intents.remove(intent.id);
      throw new ConflictError(
        outcome.kind === 'conflict' ? outcome.reason : `feedback on node ${node.id} was already applied`,
        { code: 'feedback_conflict' },
      );
    }
    return this.#result(intent.id);
  }

  /**
   * Applies a feedback intent in one transaction that deletes it. With `replay`, a node changed
   * after the intent was recorded is a conflict: uncertain feedback is not re-applied blindly.
   */
  apply(ns: Namespace, intent: IntentRow, replay: boolean): ApplyOutcome {
    const core = this.#core;
    const { request } = JSON.parse(intent.payload) as FeedbackIntentPayload;
    const indexOps: (() => void)[] = [];
    const outcome = core.nodes.transaction((): ApplyOutcome => {
      if (!core.intents.get(intent.id)) return { kind: 'already_applied', nodeId: request.node_id };
      const now = core.now();
      const live = core.nodes.visible(request.node_id, now, now);
      if (!live || live.retracted === 1)
        return {
          kind: 'conflict',
          reason: `node ${request.node_id} has no live version valid now`,
          nodeId: request.node_id,
        };
      if (replay && live.tx_from > intent.created_at) {
        return {
          kind: 'conflict',
          reason: `node ${request.node_id} changed after this feedback was recorded; review it before applying the feedback again`,
          nodeId: request.node_id,
        };
      }
      const first = core.nodes.history(request.node_id)[0];
      const support = core.nodes.support(live.vid);
      const sourceId = (first ? core.nodes.support(first.vid)[0] : undefined) ?? support[0] ?? 'unknown';
      const sourceRow = core.sources.get(ns.id, sourceId);
      const credibility = sourceRow?.credibility ?? DEFAULT_SOURCE_CREDIBILITY;
      const next = applyFeedback(
        request.action,
        { confidence: live.confidence, utility: live.utility, credibility },
        request.quality,
      );
      const tx = core.nextTx();
      let version = live.version;
      if (next.confidence !== live.confidence || next.utility !== live.utility) {
        version = this.#writes.supersede(
          live,
          { confidence: next.confidence, utility: next.utility, change: `feedback-${request.action}` },
          support,
          tx,
          indexOps,
        ).version;
      }
      if (changesCredibility(request.action) && next.credibility !== credibility) {
        core.sources.upsert({
          ns_id: ns.id,
          source_id: sourceId,
          credibility: next.credibility,
          labels: sourceRow?.labels ?? '[]',
          updated_at: tx,
        });
        core.sources.appendTrust(ns.id, {
          source_id: sourceId,
          node_id: request.node_id,
          action: request.action,
          credibility: next.credibility,
          previous: credibility,
          reason: request.reason ?? null,
          tx_time: tx,
        });
      }
      core.feedback.saveCounters(
        nextCounters(core.feedback.counters(request.node_id), ns.id, request.node_id, sourceId, request.action, tx),
      );
      core.feedback.insertEvent({
        event_id: intent.id,
        ns_id: ns.id,
        node_id: request.node_id,
        node_version: version,
        action: request.action,
        source_id: sourceId,
        source_credibility: next.credibility,
        previous_credibility: credibility,
        confidence: next.confidence,
        previous_confidence: live.confidence,
        utility: next.utility,
        reason: request.reason ?? null,
        tx_time: tx,
      });
      core.intents.remove(intent.id);
      return { kind: 'applied', result: { node_id: request.node_id, admitted: true } };
    });
    for (const op of indexOps) op();
    return outcome;
  }

  #result(eventId: string): FeedbackResult {
    const event = this.#core.feedback.event(eventId)!;
    const counters = this.#core.feedback.counters(event.node_id);
    const explanation = applyFeedback(event.action as FeedbackAction, {
      confidence: event.previous_confidence,
      utility: event.utility,
      credibility: event.previous_credibility,
    }).explanation;
    return {
      event_id: event.event_id,
      node_id: event.node_id,
      node_version: event.node_version,
      action: event.action as FeedbackAction,
      confidence: event.confidence,
      utility: event.utility,
      source_id: event.source_id,
      source_credibility: event.source_credibility,
      recall_count: counters?.recall_count ?? 0,
      last_recalled_at: counters?.last_recalled_at == null ? null : isoTime(counters.last_recalled_at),
      explanation,
      tx_time: isoTime(event.tx_time),
    };
  }

  /** Feedback events of a namespace after `after` (exclusive, ISO 8601), oldest first. */
  events(tenant: string, nsName: string, after?: string, limit = 1000) {
    const ns = this.#core.namespace(tenant, nsName);
    const since = parseTime('after', after) ?? -1;
    return this.#core.feedback.eventsAfter(ns.id, since, limit).map(eventView);
  }
}

/** The REST view of a feedback event. */
export function eventView(e: FeedbackEventRow) {
  return {
    event_id: e.event_id,
    node_id: e.node_id,
    node_version: e.node_version,
    action: e.action,
    source_id: e.source_id,
    source_credibility: e.source_credibility,
    previous_credibility: e.previous_credibility,
    confidence: e.confidence,
    utility: e.utility,
    reason: e.reason,
    tx_time: isoTime(e.tx_time),
  };
}

function nextCounters(
  prev: NodeFeedbackRow | undefined,
  nsId: number,
  nodeId: string,
  sourceId: string,
  action: FeedbackAction,
  tx: number,
): NodeFeedbackRow {
  const base: NodeFeedbackRow = prev ?? {
    node_id: nodeId,
    ns_id: nsId,
    source_id: sourceId,
    validations: 0,
    refutations: 0,
    useful: 0,
    stale: 0,
    recall_count: 0,
    last_recalled_at: null,
    first_refuted_at: null,
    last_refuted_at: null,
    first_stale_at: null,
    last_stale_at: null,
    last_action: action,
    last_event_at: tx,
    flagged: 0,
  };
  const next = {
    ...base,
    source_id: sourceId,
    last_action: action,
    last_event_at: tx,
    validations: base.validations + (action === 'validate' ? 1 : 0),
    refutations: base.refutations + (action === 'refute' ? 1 : 0),
    useful: base.useful + (action === 'useful' ? 1 : 0),
    stale: base.stale + (action === 'stale' ? 1 : 0),
    recall_count: base.recall_count + (action === 'useful' ? 1 : 0),
    last_recalled_at: action === 'useful' ? tx : base.last_recalled_at,
    first_refuted_at: action === 'refute' ? (base.first_refuted_at ?? tx) : base.first_refuted_at,
    last_refuted_at: action === 'refute' ? tx : base.last_refuted_at,
    first_stale_at: action === 'stale' ? (base.first_stale_at ?? tx) : base.first_stale_at,
    last_stale_at: action === 'stale' ? tx : base.last_stale_at,
  };
  return { ...next, flagged: next.refutations > 0 || next.stale > 0 ? 1 : 0 };
}
