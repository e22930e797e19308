/**
 * GraphQL forms of feedback, narratives, the review queue, decisions, escalations and handoff
 * webhooks: SDL extending the root types, and resolvers that call the same services as REST and
 * rename their snake_case views to camelCase.
 */
import type { FeedbackAction } from '../../domain/knowledge/feedback-rules.js';
import type { ReviewStatus, ReviewType } from '../../domain/knowledge/review-rules.js';
import type { KnowledgeServices } from '../../knowledge/index.js';

/** The review side of the schema. */
export const REVIEW_SDL = /* GraphQL */ `
  type FeedbackResult { nodeId: ID! action: String! confidence: Float! sourceCredibility: Float! utility: Float! sourceId: String! eventId: ID! nodeVersion: Int! }
  type FeedbackEvent { eventId: ID! nodeId: ID! nodeVersion: Int! action: String! sourceId: String! sourceCredibility: Float! txTime: String! }
  type TrustPoint { nodeId: ID action: String! sourceCredibility: Float! previousCredibility: Float reason: String txTime: String! }
  type NarrativeClaim { text: String! confidence: Float! sourceId: String }
  type NarrativeLink { text: String! relation: String! }
  type Narrative { summary: String! claim: NarrativeClaim! evidence: [NarrativeLink!]! contradictions: [NarrativeLink!]! confidenceExplanation: String! }
  type ReviewItem {
    id: ID! type: String! priority: Int! reason: String! nodeId: ID! nodeIds: [ID!]! sourceId: String action: String text: String!
    createdAt: String! suggestedAction: String! confidence: Float status: String! owner: String decision: String note: String
    reviewedAt: String escalated: Boolean! escalationLevel: String escalationReason: String escalationAgeHours: Float!
  }
  type ReviewDecision { reviewId: ID! status: String! owner: String decision: String note: String recheckAt: String txTime: String! }
  type EscalationGroup { owner: String! sourceId: String type: String! escalationLevel: String! count: Int! maxPriority: Int! maxAgeHours: Float! reviewIds: [ID!]! }
  type EscalationDigest { totalEscalated: Int! note: String! groups: [EscalationGroup!]! }
  type EscalationSnapshot {
    digestEventId: ID! kind: String! createdAt: String! owner: String escalationLevel: String escalationAfterHours: Float!
    totalEscalated: Int! note: String! groups: [EscalationGroup!]!
  }
  type HandoffPlan { targetUrl: String! dryRun: Boolean! payloadSha256: String! signature: String! maxAttempts: Int! }
  type HandoffReceipt { digestEventId: ID! targetUrl: String! attempt: Int! success: Boolean! statusCode: Int payloadSha256: String! responseSha256: String error: String txTime: String! }
  type HandoffDelivery {
    targetUrl: String! dryRun: Boolean! executed: Boolean! statusCode: Int responseBody: String error: String
    payloadSha256: String! digestEventId: ID resolved: Boolean receipt: HandoffReceipt
  }
  type RetryCandidate { digestEventId: ID! targetUrl: String! attempts: Int! lastStatusCode: Int payloadSha256: String! lastError: String }
  type RetryRecommendation { digestEventId: ID! targetUrl: String! attempts: Int! recommendedAfter: String! delaySeconds: Int! ready: Boolean! reason: String! }
  type FamilyCount { family: String! count: Int! }
  type OwnerCount { owner: String! count: Int! }
  type LevelCount { escalationLevel: String! count: Int! }
  type RetryFatigueTarget {
    targetUrl: String! candidates: Int! totalAttempts: Int! ready: Int! waiting: Int! statusFamilies: [FamilyCount!]!
    owners: [OwnerCount!]! escalationLevels: [LevelCount!]! lastStatusCode: Int lastError: String
  }
  type RetryFatiguePreset { name: String! owner: String escalationLevel: String description: String! exampleRestQuery: String! exampleGraphql: String! }
  type RetryFatigue { preset: String owner: String escalationLevel: String presets: [RetryFatiguePreset!]! targets: [RetryFatigueTarget!]! }

  extend type Query {
    narrative(namespace: String = "default", nodeId: ID!): Narrative!
    feedbackEvents(namespace: String = "default", after: String): [FeedbackEvent!]!
    sourceTrustTimeline(namespace: String = "default", sourceId: String!): [TrustPoint!]!
    reviewQueue(namespace: String = "default", lowConfidenceThreshold: Float, sourceTrustDropThreshold: Float, sourceRefutationThreshold: Int,
      escalationAfterHours: Float, sourceAnomalyEscalationPriority: Int, types: [String!], sourceId: String, status: String, owner: String, limit: Int = 100): [ReviewItem!]!
    reviewEscalationDigest(namespace: String = "default", escalationAfterHours: Float): EscalationDigest!
    reviewEscalationDigests(namespace: String = "default"): [EscalationSnapshot!]!
    reviewHandoffs(namespace: String = "default", owner: String, escalationLevel: String): [EscalationSnapshot!]!
    reviewHandoffWebhookPlan(namespace: String = "default", owner: String, escalationLevel: String, targetUrl: String!, secret: String!): HandoffPlan!
    reviewHandoffDeliveryReceipts(namespace: String = "default"): [HandoffReceipt!]!
    reviewHandoffRetryCandidates(namespace: String = "default"): [RetryCandidate!]!
    reviewHandoffRetryRecommendations(namespace: String = "default"): [RetryRecommendation!]!
    reviewHandoffRetryFatigue(namespace: String = "default", preset: String, owner: String, escalationLevel: String): RetryFatigue!
    reviewDecisions(namespace: String = "default"): [ReviewDecision!]!
  }

  type Mutation {
    validateClaim(namespace: String = "default", nodeId: ID!): FeedbackResult!
    refuteClaim(namespace: String = "default", nodeId: ID!): FeedbackResult!
    markUseful(namespace: String = "default", nodeId: ID!): FeedbackResult!
    markStale(namespace: String = "default", nodeId: ID!): FeedbackResult!
    recordReviewEscalationDigest(namespace: String = "default", escalationAfterHours: Float, note: String): EscalationSnapshot!
    deliverReviewHandoffWebhook(namespace: String = "default", owner: String, escalationLevel: String, targetUrl: String!, secret: String!, execute: Boolean = false, timeoutMs: Int): HandoffDelivery!
    retryReviewHandoffWebhook(namespace: String = "default", digestEventId: ID!, targetUrl: String!, secret: String!, execute: Boolean = false, timeoutMs: Int): HandoffDelivery!
    recordReviewDecision(namespace: String = "default", reviewId: ID!, status: String!, owner: String, decision: String, note: String, recheckAt: String): ReviewDecision!
  }
`;

/** Deeply renames snake_case keys to camelCase. */
export function camel(value: unknown): any {
  if (Array.isArray(value)) return value.map(camel);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase()), camel(v)]));
}

type Args = Record<string, any>;
const opt = <T>(v: T | null | undefined): T | undefined => (v === null ? undefined : v);

/** Root resolvers of the review side; `tenant` is the caller's, `requireWrite` throws without write permission. */
export function reviewResolvers(services: KnowledgeServices, tenant: string, requireWrite: () => void) {
  const feedback = (action: FeedbackAction) => async (a: Args) => {
    requireWrite();
    return camel(await services.feedback.record(tenant, a.namespace, a.nodeId, action));
  };
  return {
    narrative: (a: Args) => services.narratives.narrative(tenant, a.namespace, a.nodeId),
    feedbackEvents: (a: Args) => camel(services.feedback.events(tenant, a.namespace, opt(a.after))),
    sourceTrustTimeline: (a: Args) => camel(services.sources.trust(tenant, a.namespace, a.sourceId).timeline),
    reviewQueue: (a: Args) => camel(services.review.queue(tenant, a.namespace, {
      lowConfidenceThreshold: opt(a.lowConfidenceThreshold), sourceTrustDropThreshold: opt(a.sourceTrustDropThreshold),
      sourceRefutationThreshold: opt(a.sourceRefutationThreshold), escalationAfterHours: opt(a.escalationAfterHours),
      sourceAnomalyEscalationPriority: opt(a.sourceAnomalyEscalationPriority),
    }, { types: opt(a.types) as ReviewType[] | undefined, sourceId: opt(a.sourceId), status: opt(a.status) as ReviewStatus | undefined, owner: opt(a.owner) }, Math.max(1, Math.min(a.limit ?? 100, 1000))).items),
    reviewEscalationDigest: (a: Args) => camel(services.escalations.digest(tenant, a.namespace, { escalationAfterHours: opt(a.escalationAfterHours) })),
    reviewEscalationDigests: (a: Args) => camel(services.escalations.snapshots(tenant, a.namespace)),
    reviewHandoffs: (a: Args) => camel(services.escalations.handoffs(tenant, a.namespace, opt(a.owner), opt(a.escalationLevel))),
    reviewHandoffWebhookPlan: async (a: Args) => {
      requireWrite();
      return camel(await services.handoffs.plan(tenant, a.namespace, { targetUrl: a.targetUrl, secret: a.secret, owner: opt(a.owner), escalationLevel: opt(a.escalationLevel) }));
    },
    reviewHandoffDeliveryReceipts: (a: Args) => camel(services.handoffs.receipts(tenant, a.namespace)),
    reviewHandoffRetryCandidates: (a: Args) => camel(services.handoffs.retryCandidates(tenant, a.namespace)),
    reviewHandoffRetryRecommendations: (a: Args) => camel(services.handoffs.retryRecommendations(tenant, a.namespace)),
    reviewHandoffRetryFatigue: (a: Args) => camel(services.handoffs.retryFatigue(tenant, a.namespace, { preset: opt(a.preset), owner: opt(a.owner), escalationLevel: opt(a.escalationLevel) })),
    reviewDecisions: (a: Args) => camel(services.review.decisions(tenant, a.namespace)),
    validateClaim: feedback('validate'),
    refuteClaim: feedback('refute'),
    markUseful: feedback('useful'),
    markStale: feedback('stale'),
    recordReviewEscalationDigest: (a: Args) => {
      requireWrite();
      return camel(services.escalations.recordSnapshot(tenant, a.namespace, { escalationAfterHours: opt(a.escalationAfterHours) }, opt(a.note)));
    },
    deliverReviewHandoffWebhook: async (a: Args) => {
      requireWrite();
      return camel(await services.handoffs.deliver(tenant, a.namespace, {
        targetUrl: a.targetUrl, secret: a.secret, execute: a.execute === true, owner: opt(a.owner), escalationLevel: opt(a.escalationLevel), timeoutMs: opt(a.timeoutMs),
      }));
    },
    retryReviewHandoffWebhook: async (a: Args) => {
      requireWrite();
      return camel(await services.handoffs.retry(tenant, a.namespace, { digestEventId: a.digestEventId, targetUrl: a.targetUrl, secret: a.secret, execute: a.execute === true, timeoutMs: opt(a.timeoutMs) }));
    },
    recordReviewDecision: (a: Args) => {
      requireWrite();
      return camel(services.review.decide(tenant, a.namespace, {
        review_id: a.reviewId, status: a.status, ...(a.owner !== undefined ? { owner: a.owner } : {}), decision: opt(a.decision), note: opt(a.note), recheck_at: opt(a.recheckAt),
      }));
    },
  };
}
