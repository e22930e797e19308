/**
 * The claim review queue: derived from feedback counters, live low-confidence and contradicting
 * claims and source trust runs, combined with append-only decisions (the latest is effective),
 * escalated by age, filtered additively (docs/adr/0031, 0032).
 *
 * Signals are derived by a per-namespace {@link ReviewIndex}: built once from indexed reads, then
 * updated from what changed since (see bench/review.ts); decisions are merged at read time.
 */
import { NotFoundError, ValidationError } from '../../domain/errors.js';
import {
  DEFAULT_REVIEW_THRESHOLDS,
  REVIEW_TYPES,
  UNASSIGNED,
  compareReviewItems,
  effectiveStatus,
  escalationLevelOf,
  matchesSignal,
  reviewItemState,
  type DecisionState,
  type ReviewFilters,
  type ReviewItemState,
  type ReviewSignal,
  type ReviewStatus,
  type ReviewThresholds,
} from '../../domain/knowledge/review-rules.js';
import type { ReviewDecisionRow } from '../../store/knowledge/review-store.js';
import type { KnowledgeState, Namespace } from '../core/knowledge-state.js';
import { ReviewIndex } from './review-index.js';
import { isoTime, parseTime } from '../core/time.js';

/** Body of `POST /review/decisions`. */
export interface ReviewDecisionRequest {
  readonly review_id: string;
  readonly status: ReviewStatus;
  /** Omitted: the current owner is kept; null: unassigned. */
  readonly owner?: string | null;
  readonly decision?: string | null;
  readonly note?: string | null;
  readonly recheck_at?: string | null;
  readonly actor?: string | null;
}

/** A review item as REST shows it (GraphQL maps the same fields to camelCase). */
export interface ReviewItemView {
  readonly id: string;
  readonly type: string;
  readonly priority: number;
  readonly reason: string;
  readonly node_id: string;
  readonly node_ids: readonly string[];
  readonly source_id: string | null;
  readonly action: string | null;
  readonly text: string;
  readonly created_at: string | null;
  readonly suggested_action: string;
  readonly confidence: number | null;
  readonly status: string;
  readonly owner: string | null;
  readonly decision: string | null;
  readonly note: string | null;
  readonly reviewed_at: string | null;
  readonly escalated: boolean;
  readonly escalation_level: string | null;
  readonly escalation_reason: string | null;
  readonly escalation_age_hours: number;
}

const REVIEW_ID = new RegExp(
  `^(${REVIEW_TYPES.join('|')}):([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$`,
);

/** Most review indexes kept in memory at once. */
const MAX_INDEXES = 16;

/** Derives the queue and records decisions. */
export class ReviewService {
  readonly #core: KnowledgeState;
  readonly #indexes = new Map<string, ReviewIndex>();

  constructor(core: KnowledgeState) {
    this.#core = core;
  }

  /** Thresholds with defaults filled and ranges checked. */
  static thresholds(input: Partial<ReviewThresholds> = {}): ReviewThresholds {
    const t = {
      ...DEFAULT_REVIEW_THRESHOLDS,
      ...Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined && v !== null)),
    };
    const check = (name: string, value: number, min: number, max: number) => {
      if (!Number.isFinite(value) || value < min || value > max)
        throw new ValidationError(`${name}: ${value} must be between ${min} and ${max}`, {
          code: 'invalid_request',
          details: { field: name },
        });
    };
    check('lowConfidenceThreshold', t.lowConfidenceThreshold, 0, 1);
    check('sourceTrustDropThreshold', t.sourceTrustDropThreshold, 0, 1);
    check('sourceRefutationThreshold', t.sourceRefutationThreshold, 1, 1_000_000);
    check('escalationAfterHours', t.escalationAfterHours, 0, 87_600);
    check('sourceAnomalyEscalationPriority', t.sourceAnomalyEscalationPriority, 0, 101);
    return t;
  }

  /**
   * Builds the index of every namespace for the default thresholds, so the first queue read after a
   * start does not pay for the full derivation. Returns how many namespaces were warmed.
   */
  warm(now: number): number {
    const namespaces = this.#core.allNamespaces();
    for (const ns of namespaces) this.signals(ns, ReviewService.thresholds(), now);
    return namespaces.length;
  }

  /** Drops every derived index (the rows changed underneath: a restore or a lifecycle run); the next read rebuilds. */
  forget(): void {
    this.#indexes.clear();
  }

  /** Full index rebuilds of one namespace's default-threshold index (for tests and metrics). */
  rebuildsOf(ns: Namespace): number {
    const t = ReviewService.thresholds();
    return (
      this.#indexes.get(
        `${ns.id}|${t.lowConfidenceThreshold}|${t.sourceTrustDropThreshold}|${t.sourceRefutationThreshold}`,
      )?.rebuilds ?? 0
    );
  }

  /**
   * Every derived signal of a namespace in queue order, from its incrementally maintained index (one
   * per namespace and derivation thresholds; the least recently used of more than 16 is dropped).
   */
  signals(ns: Namespace, t: ReviewThresholds, now: number): ReviewSignal[] {
    const key = `${ns.id}|${t.lowConfidenceThreshold}|${t.sourceTrustDropThreshold}|${t.sourceRefutationThreshold}`;
    let index = this.#indexes.get(key);
    if (index) {
      this.#indexes.delete(key);
    } else {
      index = new ReviewIndex(this.#core.review, ns.id, t, key);
      if (this.#indexes.size >= MAX_INDEXES) this.#indexes.delete(this.#indexes.keys().next().value!);
    }
    this.#indexes.set(key, index);
    return index.signals(now);
  }

  /**
   * Items in queue order that pass `filters` (and `keep`), at most `limit` of them, with the total
   * that matched. Only the returned items are materialized; the rest cost a map lookup and a few
   * comparisons each.
   */
  select(
    ns: Namespace,
    t: ReviewThresholds,
    now: number,
    filters: ReviewFilters,
    limit: number,
    keep?: (s: ReviewSignal, level: string | null) => boolean,
  ): { total: number; items: ReviewItemState[] } {
    const decisions = new Map<string, DecisionState>();
    for (const [id, row] of this.#core.review.latestDecisions(ns.id)) decisions.set(id, decisionState(row));
    const items: ReviewItemState[] = [];
    let total = 0;
    const needLevel = filters.escalationLevel !== undefined || keep !== undefined;
    for (const signal of this.signals(ns, t, now)) {
      const decision = decisions.get(signal.id);
      const status = effectiveStatus(signal, decision, now);
      if (!matchesSignal(signal, status, decision?.owner ?? null, filters)) continue;
      if (needLevel) {
        const level = escalationLevelOf(signal, status, now, t);
        if (filters.escalationLevel !== undefined && level !== filters.escalationLevel) continue;
        if (keep && !keep(signal, level)) continue;
      }
      total++;
      if (items.length < limit) items.push(reviewItemState(signal, decision, now, t));
    }
    return { total, items };
  }

  /**
   * Pending items (open, assigned or snoozed: what the queue lists without filters) of every
   * namespace under the default thresholds, summed; read by the review queue gauge.
   */
  pendingTotal(now: number): number {
    const t = ReviewService.thresholds();
    let total = 0;
    for (const ns of this.#core.allNamespaces()) total += this.select(ns, t, now, {}, 0).total;
    return total;
  }

  /** Every item (resolved ones included) with its workflow and escalation state at `now`, in queue order. */
  items(ns: Namespace, t: ReviewThresholds, now: number): ReviewItemState[] {
    const all = this.select(ns, t, now, {}, Number.MAX_SAFE_INTEGER).items;
    const resolved = this.select(ns, t, now, { status: 'resolved' }, Number.MAX_SAFE_INTEGER).items;
    return [...all, ...resolved].sort(compareReviewItems);
  }

  /** The filtered queue: at most `limit` items and the total that matched. */
  queue(
    tenant: string,
    nsName: string,
    thresholds: Partial<ReviewThresholds>,
    filters: ReviewFilters,
    limit = 100,
  ): ReviewQueueView {
    const core = this.#core;
    const ns = core.namespace(tenant, nsName);
    const t = ReviewService.thresholds(thresholds);
    const now = core.now();
    const { total, items } = this.select(ns, t, now, filters, limit);
    return { total, generated_at: isoTime(now), thresholds: thresholdsView(t), items: this.views(items) };
  }

  /** Renders items, reading the text of their nodes (only for the items returned). */
  views(items: readonly ReviewItemState[]): ReviewItemView[] {
    const texts = this.#core.review.texts([...new Set(items.map((i) => i.nodeId))]);
    return items.map((i) => ({
      id: i.id,
      type: i.type,
      priority: i.priority,
      reason: i.reason,
      node_id: i.nodeId,
      node_ids: i.nodeIds,
      source_id: i.sourceId,
      action: i.action,
      text: texts.get(i.nodeId)?.content ?? '',
      created_at: isoTime(i.createdAt),
      suggested_action: i.suggestedAction,
      confidence: i.confidence,
      status: i.status,
      owner: i.owner,
      decision: i.decision,
      note: i.note,
      reviewed_at: i.reviewedAt === null ? null : isoTime(i.reviewedAt),
      escalated: i.escalated,
      escalation_level: i.escalationLevel,
      escalation_reason: i.escalationReason,
      escalation_age_hours: i.escalationAgeHours,
    }));
  }

  /** Appends a decision; the review id must name a node of the namespace. Durable before it returns. */
  decide(tenant: string, nsName: string, request: ReviewDecisionRequest) {
    const core = this.#core;
    const ns = core.namespace(tenant, nsName);
    const match = REVIEW_ID.exec(request.review_id.toLowerCase());
    if (!match)
      throw new ValidationError(
        `review_id: "${request.review_id.slice(0, 200)}" is not <type>:<node uuid> with type one of ${REVIEW_TYPES.join(', ')}`,
        { code: 'invalid_review_id' },
      );
    const reviewId = request.review_id.toLowerCase();
    const node = core.nodes.node(match[2]!);
    if (!node || node.ns_id !== ns.id)
      throw new NotFoundError(`review item ${reviewId}: node ${match[2]} does not exist in namespace "${ns.name}"`, {
        code: 'review_item_not_found',
      });
    if (request.owner === UNASSIGNED)
      throw new ValidationError(`owner: "${UNASSIGNED}" is reserved for items nobody owns; send null to unassign`, {
        code: 'invalid_owner',
      });
    const recheckAt = parseTime('recheck_at', request.recheck_at ?? undefined) ?? null;
    if (request.status === 'snoozed' && recheckAt === null)
      throw new ValidationError('recheck_at: is required when status is snoozed', { code: 'recheck_required' });
    return core.nodes.transaction(() => {
      const previous = core.review.decisionsOf(ns.id, reviewId).at(-1);
      const owner = request.owner === undefined ? (previous?.owner ?? null) : request.owner;
      if (request.status === 'assigned' && owner === null && request.decision == null) {
        throw new ValidationError('owner: an assignment needs an owner (or a decision such as needs_evidence)', {
          code: 'owner_required',
        });
      }
      const row = core.review.insertDecision({
        ns_id: ns.id,
        review_id: reviewId,
        status: request.status,
        owner,
        decision: request.decision ?? null,
        note: request.note ?? null,
        recheck_at: recheckAt,
        actor: request.actor ?? null,
        tx_time: core.nextTx(),
      });
      return decisionView(row);
    });
  }

  /** Decision history, oldest first (optionally of one review id). */
  decisions(tenant: string, nsName: string, reviewId?: string, limit = 1000, offset = 0) {
    const ns = this.#core.namespace(tenant, nsName);
    const rows =
      reviewId === undefined
        ? this.#core.review.decisions(ns.id, limit, offset)
        : this.#core.review.decisionsOf(ns.id, reviewId.toLowerCase()).slice(offset, offset + limit);
    return rows.map(decisionView);
  }
}

function decisionState(row: ReviewDecisionRow): DecisionState {
  return {
    status: row.status as ReviewStatus,
    owner: row.owner,
    decision: row.decision,
    note: row.note,
    recheckAt: row.recheck_at,
    txTime: row.tx_time,
  };
}

/** The REST view of a decision. */
export function decisionView(row: ReviewDecisionRow) {
  return {
    review_id: row.review_id,
    status: row.status,
    owner: row.owner,
    decision: row.decision,
    note: row.note,
    recheck_at: row.recheck_at === null ? null : isoTime(row.recheck_at),
    actor: row.actor,
    tx_time: isoTime(row.tx_time),
  };
}

/** The review thresholds as REST shows them (snake_case). */
export interface ReviewThresholdsView {
  readonly low_confidence_threshold: number;
  readonly source_trust_drop_threshold: number;
  readonly source_refutation_threshold: number;
  readonly escalation_after_hours: number;
  readonly source_anomaly_escalation_priority: number;
}

/** The answer of `GET /review/queue`: at most `limit` items and the total that matched. */
export interface ReviewQueueView {
  readonly total: number;
  readonly generated_at: string | null;
  readonly thresholds: ReviewThresholdsView;
  readonly items: ReviewItemView[];
}

/** Thresholds in REST form. */
export function thresholdsView(t: ReviewThresholds): ReviewThresholdsView {
  return {
    low_confidence_threshold: t.lowConfidenceThreshold,
    source_trust_drop_threshold: t.sourceTrustDropThreshold,
    source_refutation_threshold: t.sourceRefutationThreshold,
    escalation_after_hours: t.escalationAfterHours,
    source_anomaly_escalation_priority: t.sourceAnomalyEscalationPriority,
  };
}
