/**
 * The claim review queue as pure rules: which signals become review items, their priority and
 * suggested action, how the latest append-only decision sets their state, when they escalate,
 * and the additive filters (docs/adr/0031-review-queue-derivation.md, 0032-review-escalation.md).
 */

/** Kinds of review item; ids are `<type>:<node uuid>`. */
export const ReviewType = {
  refuted: 'refuted',
  stale: 'stale',
  lowConfidence: 'low_confidence',
  contradictory: 'contradictory',
  sourceTrustAnomaly: 'source_trust_anomaly',
} as const;
export type ReviewType = (typeof ReviewType)[keyof typeof ReviewType];
export const REVIEW_TYPES: readonly ReviewType[] = Object.values(ReviewType);

/** Workflow states of a review item. */
export const ReviewStatus = { open: 'open', assigned: 'assigned', snoozed: 'snoozed', resolved: 'resolved' } as const;
export type ReviewStatus = (typeof ReviewStatus)[keyof typeof ReviewStatus];
export const REVIEW_STATUSES: readonly ReviewStatus[] = Object.values(ReviewStatus);

/** Escalation levels. */
export const EscalationLevel = { reviewOverdue: 'review_overdue', sourceTrustAnomaly: 'source_trust_anomaly' } as const;
export type EscalationLevel = (typeof EscalationLevel)[keyof typeof EscalationLevel];
export const ESCALATION_LEVELS: readonly EscalationLevel[] = Object.values(EscalationLevel);

/** Actions a reviewer (or the review worker) can take on an item. */
export const ReviewAction = {
  validate: 'validate',
  refute: 'refute',
  markStale: 'mark_stale',
  needsEvidence: 'needs_evidence',
  snooze: 'snooze',
  resolve: 'resolve',
} as const;
export type ReviewAction = (typeof ReviewAction)[keyof typeof ReviewAction];
export const REVIEW_ACTIONS: readonly ReviewAction[] = Object.values(ReviewAction);

/** Owner filter value matching items nobody owns. */
export const UNASSIGNED = 'unassigned';

/** Thresholds of the derivation (GraphQL names; REST uses snake_case). */
export interface ReviewThresholds {
  /** Live claims with confidence below this are `low_confidence`. @default 0.3 */
  readonly lowConfidenceThreshold: number;
  /** A source whose credibility fell by at least this since its last operator label is anomalous. @default 0.2 */
  readonly sourceTrustDropThreshold: number;
  /** A source refuted at least this many times since its last operator label is anomalous. @default 3 */
  readonly sourceRefutationThreshold: number;
  /** Open or assigned items older than this many hours escalate as `review_overdue`. @default 24 */
  readonly escalationAfterHours: number;
  /** Source trust anomalies with at least this priority escalate at once. @default 80 */
  readonly sourceAnomalyEscalationPriority: number;
}

export const DEFAULT_REVIEW_THRESHOLDS: ReviewThresholds = {
  lowConfidenceThreshold: 0.3,
  sourceTrustDropThreshold: 0.2,
  sourceRefutationThreshold: 3,
  escalationAfterHours: 24,
  sourceAnomalyEscalationPriority: 80,
};

/** A derived item before workflow state: what the signals say. */
export interface ReviewSignal {
  readonly id: string;
  readonly type: ReviewType;
  readonly priority: number;
  readonly reason: string;
  readonly nodeId: string;
  readonly nodeIds: readonly string[];
  readonly sourceId: string | null;
  /** The feedback action behind the item, when there is one. */
  readonly action: string | null;
  /** When the item first appeared (epoch ms); its age counts from here. */
  readonly createdAt: number;
  /** The newest evidence behind the item (epoch ms); a resolution older than this reopens it. */
  readonly lastSignalAt: number;
  readonly suggestedAction: ReviewAction;
  readonly confidence: number | null;
}

/** The effective (latest) decision of an item. */
export interface DecisionState {
  readonly status: ReviewStatus;
  readonly owner: string | null;
  readonly decision: string | null;
  readonly note: string | null;
  readonly recheckAt: number | null;
  readonly txTime: number;
}

/** A review item with its workflow and escalation state. */
export interface ReviewItemState extends ReviewSignal {
  readonly status: ReviewStatus;
  readonly owner: string | null;
  readonly decision: string | null;
  readonly note: string | null;
  readonly reviewedAt: number | null;
  readonly escalated: boolean;
  readonly escalationLevel: EscalationLevel | null;
  readonly escalationReason: string | null;
  readonly escalationAgeHours: number;
}

/** Counters of a node with refutations or stale marks. */
export interface FlaggedNode {
  readonly nodeId: string;
  readonly sourceId: string;
  readonly refutations: number;
  readonly stale: number;
  readonly firstRefutedAt: number | null;
  readonly lastRefutedAt: number | null;
  readonly firstStaleAt: number | null;
  readonly lastStaleAt: number | null;
  readonly confidence: number | null;
}

/** A live claim (for low-confidence and contradiction rules). */
export interface LiveClaim {
  readonly nodeId: string;
  readonly confidence: number;
  readonly txFrom: number;
  readonly sourceId: string | null;
  readonly claimKey: string | null;
  readonly claimValue: string | null;
}

/** One point of a source's trust timeline. */
export interface TrustPoint {
  readonly nodeId: string | null;
  readonly action: string;
  readonly credibility: number;
  readonly previous: number | null;
  readonly txTime: number;
}

const round2 = (x: number) => Math.round(x * 100) / 100;
const clampPriority = (x: number) => Math.max(0, Math.min(100, Math.round(x)));

/** Refuted and stale items from per-node feedback counters. */
export function feedbackSignals(nodes: readonly FlaggedNode[]): ReviewSignal[] {
  const out: ReviewSignal[] = [];
  for (const n of nodes) {
    if (n.refutations > 0 && n.firstRefutedAt !== null) {
      out.push({
        id: `refuted:${n.nodeId}`,
        type: 'refuted',
        priority: clampPriority(70 + 10 * Math.min(n.refutations - 1, 2)),
        reason: `claim refuted ${n.refutations} time${n.refutations === 1 ? '' : 's'}`,
        nodeId: n.nodeId,
        nodeIds: [n.nodeId],
        sourceId: n.sourceId,
        action: 'refute',
        createdAt: n.firstRefutedAt,
        lastSignalAt: n.lastRefutedAt ?? n.firstRefutedAt,
        suggestedAction: n.refutations >= 2 ? 'resolve' : 'needs_evidence',
        confidence: n.confidence,
      });
    }
    if (n.stale > 0 && n.firstStaleAt !== null) {
      out.push({
        id: `stale:${n.nodeId}`,
        type: 'stale',
        priority: clampPriority(50 + 5 * Math.min(n.stale - 1, 2)),
        reason: `claim marked stale ${n.stale} time${n.stale === 1 ? '' : 's'}`,
        nodeId: n.nodeId,
        nodeIds: [n.nodeId],
        sourceId: n.sourceId,
        action: 'stale',
        createdAt: n.firstStaleAt,
        lastSignalAt: n.lastStaleAt ?? n.firstStaleAt,
        suggestedAction: 'snooze',
        confidence: n.confidence,
      });
    }
  }
  return out;
}

/** Low-confidence items; nodes already refuted or stale are covered by those items. */
export function lowConfidenceSignals(
  claims: readonly LiveClaim[],
  threshold: number,
  covered: ReadonlySet<string>,
): ReviewSignal[] {
  const out: ReviewSignal[] = [];
  for (const c of claims) {
    if (c.confidence >= threshold || covered.has(c.nodeId)) continue;
    out.push({
      id: `low_confidence:${c.nodeId}`,
      type: 'low_confidence',
      priority: clampPriority(30 + (40 * (threshold - c.confidence)) / threshold),
      reason: `confidence ${c.confidence} is below ${threshold}`,
      nodeId: c.nodeId,
      nodeIds: [c.nodeId],
      sourceId: c.sourceId,
      action: null,
      createdAt: c.txFrom,
      lastSignalAt: c.txFrom,
      suggestedAction: 'needs_evidence',
      confidence: c.confidence,
    });
  }
  return out;
}

/** Contradiction items: every live claim whose claim key holds another value on another node. */
export function contradictionSignals(claims: readonly LiveClaim[]): ReviewSignal[] {
  const byKey = new Map<string, LiveClaim[]>();
  for (const c of claims) {
    if (c.claimKey === null) continue;
    const list = byKey.get(c.claimKey) ?? [];
    list.push(c);
    byKey.set(c.claimKey, list);
  }
  const out: ReviewSignal[] = [];
  for (const group of byKey.values()) {
    for (const c of group) {
      const others = group.filter((o) => o.nodeId !== c.nodeId && o.claimValue !== c.claimValue);
      if (others.length === 0) continue;
      const strongest = Math.max(...others.map((o) => o.confidence));
      const latest = Math.max(c.txFrom, ...others.map((o) => o.txFrom));
      out.push({
        id: `contradictory:${c.nodeId}`,
        type: 'contradictory',
        priority: clampPriority(60 + 20 * c.confidence),
        reason: `contradicted by ${others.length} live claim${others.length === 1 ? '' : 's'} with the same subject and predicate`,
        nodeId: c.nodeId,
        nodeIds: [c.nodeId, ...others.map((o) => o.nodeId).sort()],
        sourceId: c.sourceId,
        action: null,
        createdAt: latest,
        lastSignalAt: latest,
        suggestedAction: strongest - c.confidence >= 0.3 ? 'refute' : 'needs_evidence',
        confidence: c.confidence,
      });
    }
  }
  return out;
}

/**
 * A source trust anomaly: since the source's last operator label, feedback lowered its credibility
 * by at least the drop threshold or refuted it at least the refutation threshold times. The item
 * is named after the first refuted node of that run, so its id stays stable while the run lasts.
 */
export function sourceAnomalySignal(
  sourceId: string,
  timeline: readonly TrustPoint[],
  t: ReviewThresholds,
): ReviewSignal | undefined {
  let start = 0;
  timeline.forEach((p, i) => {
    if (p.action === 'label') start = i + 1;
  });
  const run = timeline.slice(start);
  const refutes = run.filter((p) => p.action === 'refute' && p.nodeId !== null);
  const first = refutes[0];
  const last = run.at(-1);
  if (!first || !last) return undefined;
  const baseline = first.previous ?? first.credibility;
  const drop = round2(baseline - last.credibility);
  if (drop < t.sourceTrustDropThreshold && refutes.length < t.sourceRefutationThreshold) return undefined;
  const nodeIds = [...new Set(refutes.map((p) => p.nodeId!))];
  return {
    id: `source_trust_anomaly:${first.nodeId}`,
    type: 'source_trust_anomaly',
    priority: clampPriority(60 + 100 * drop + 2 * refutes.length),
    reason: `source "${sourceId}" credibility fell from ${baseline} to ${last.credibility} after ${refutes.length} refutation${refutes.length === 1 ? '' : 's'}`,
    nodeId: first.nodeId!,
    nodeIds,
    sourceId,
    action: 'refute',
    createdAt: first.txTime,
    lastSignalAt: refutes.at(-1)!.txTime,
    suggestedAction: 'needs_evidence',
    confidence: last.credibility,
  };
}

/** The effective status: no decision is open; an expired snooze and a resolution older than new evidence reopen. */
export function effectiveStatus(signal: ReviewSignal, decision: DecisionState | undefined, now: number): ReviewStatus {
  if (!decision) return 'open';
  if (decision.status === 'snoozed' && decision.recheckAt !== null && decision.recheckAt <= now) return 'open';
  if (decision.status === 'resolved' && signal.lastSignalAt > decision.txTime) return 'open';
  return decision.status;
}

/** Age of an item at `now`, in hours rounded to two decimals. */
export function ageHours(signal: ReviewSignal, now: number): number {
  return round2(Math.max(0, now - signal.createdAt) / 3_600_000);
}

/**
 * The escalation level of an item in `status` at `now`: source trust anomalies at or above the
 * anomaly priority escalate at once, other open or assigned items once older than the threshold;
 * snoozed and resolved items never escalate.
 */
export function escalationLevelOf(
  signal: ReviewSignal,
  status: ReviewStatus,
  now: number,
  t: ReviewThresholds,
): EscalationLevel | null {
  if (status !== 'open' && status !== 'assigned') return null;
  if (signal.type === 'source_trust_anomaly' && signal.priority >= t.sourceAnomalyEscalationPriority)
    return 'source_trust_anomaly';
  return ageHours(signal, now) >= t.escalationAfterHours ? 'review_overdue' : null;
}

/** Combines a signal with its latest decision and the escalation rules at `now`. */
export function reviewItemState(
  signal: ReviewSignal,
  decision: DecisionState | undefined,
  now: number,
  t: ReviewThresholds,
): ReviewItemState {
  const status = effectiveStatus(signal, decision, now);
  const age = ageHours(signal, now);
  const level = escalationLevelOf(signal, status, now, t);
  const reason =
    level === 'source_trust_anomaly'
      ? `source trust anomaly with priority ${signal.priority} (escalates at ${t.sourceAnomalyEscalationPriority})`
      : level === 'review_overdue'
        ? `${status} for ${age} h, past ${t.escalationAfterHours} h`
        : null;
  // Built field by field: object spread of a signal is several times slower and this runs per item.
  return {
    id: signal.id,
    type: signal.type,
    priority: signal.priority,
    reason: signal.reason,
    nodeId: signal.nodeId,
    nodeIds: signal.nodeIds,
    sourceId: signal.sourceId,
    action: signal.action,
    createdAt: signal.createdAt,
    lastSignalAt: signal.lastSignalAt,
    suggestedAction: signal.suggestedAction,
    confidence: signal.confidence,
    status,
    owner: decision?.owner ?? null,
    decision: decision?.decision ?? null,
    note: decision?.note ?? null,
    reviewedAt: decision?.txTime ?? null,
    escalated: level !== null,
    escalationLevel: level,
    escalationReason: reason,
    escalationAgeHours: age,
  };
}

/** Additive queue filters. */
export interface ReviewFilters {
  readonly types?: readonly ReviewType[] | undefined;
  readonly sourceId?: string | undefined;
  readonly status?: ReviewStatus | undefined;
  readonly owner?: string | undefined;
  readonly escalationLevel?: EscalationLevel | undefined;
}

/** True when an item passes every given filter; without a status filter resolved items are hidden. */
export function matchesReviewFilters(item: ReviewItemState, f: ReviewFilters): boolean {
  return (
    matchesSignal(item, item.status, item.owner, f) &&
    (f.escalationLevel === undefined || item.escalationLevel === f.escalationLevel)
  );
}

/** The filters other than the escalation level, on a signal with its effective status and owner (no allocation). */
export function matchesSignal(
  signal: ReviewSignal,
  status: ReviewStatus,
  owner: string | null,
  f: ReviewFilters,
): boolean {
  if (f.types && f.types.length > 0 && !f.types.includes(signal.type)) return false;
  if (f.sourceId !== undefined && signal.sourceId !== f.sourceId) return false;
  if (f.status !== undefined ? status !== f.status : status === 'resolved') return false;
  if (f.owner !== undefined && (owner ?? UNASSIGNED) !== f.owner) return false;
  return true;
}

/** Queue order: priority descending, then oldest first, then id. */
export function compareReviewItems(a: ReviewSignal, b: ReviewSignal): number {
  return b.priority - a.priority || a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}
