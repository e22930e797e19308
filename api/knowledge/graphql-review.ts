/**
 * GraphQL forms of feedback, narratives, the review queue, decisions, escalations and handoff
 * webhooks: SDL extending the root types, and resolvers that call the same services as REST and
 * rename their snake_case views to camelCase.
 */
import type { FeedbackAction } from '../../domain/knowledge/feedback-rules.js';
import type { ReviewStatus, ReviewType } from '../../domain/knowledge/review-rules.js';
import type { KnowledgeServices } from '../../knowledge/index.js';
import { ValidationError } from '../../domain/errors.js';
import { NAMESPACE_MODES, type NamespaceMode } from '../../domain/knowledge/modes.js';
import { parseTime } from '../../knowledge/core/time.js';
import { applyMode } from './origin-compat.js';
import { retryFatigueMarkdown } from '../../domain/knowledge/retry-fatigue-markdown.js';

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

  extend type Query {
    narrative(namespace: String = "default", nodeId: ID!): Narrative!
    feedbackEvents(namespace: String = "default", after: String): [FeedbackEvent!]!
    sourceTrustTimeline(namespace: String = "default", sourceId: String!): [TrustPoint!]!
    reviewQueue(namespace: String = "default", mode: String, after: String, lowConfidenceThreshold: Float, sourceTrustDropThreshold: Float, sourceRefutationThreshold: Int,
      escalationAfterHours: Float, sourceAnomalyEscalationPriority: Float, types: [String!], sourceId: String, status: String, owner: String, limit: Int = 100): [ReviewItem!]!
    reviewEscalationDigest(namespace: String = "default", escalationAfterHours: Float): EscalationDigest!
    reviewEscalationDigests(namespace: String = "default"): [EscalationSnapshot!]!
    reviewHandoffs(namespace: String = "default", owner: String, escalationLevel: String): [EscalationSnapshot!]!
    reviewHandoffWebhookPlan(namespace: String = "default", owner: String, escalationLevel: String, targetUrl: String!, secret: String!): HandoffPlan!
    reviewHandoffDeliveryReceipts(namespace: String = "default"): [HandoffReceipt!]!
    reviewHandoffRetryCandidates(namespace: String = "default"): [RetryCandidate!]!
    reviewHandoffRetryRecommendations(namespace: String = "default"): [RetryRecommendation!]!
    reviewHandoffRetryFatigue(namespace: String = "default", preset: String, owner: String, escalationLevel: String): [RetryFatigueTarget!]!
    reviewHandoffRetryFatigueMarkdown(namespace: String = "default", preset: String, owner: String, escalationLevel: String): String!
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
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [k.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase()), camel(v)]),
  );
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
    reviewQueue: (a: Args) => {
      const mode = opt(a.mode) as string | undefined;
      if (mode !== undefined && !(NAMESPACE_MODES as readonly string[]).includes(mode))
        throw new ValidationError(`mode: "${mode.slice(0, 64)}" is not one of ${NAMESPACE_MODES.join(', ')}`, {
          code: 'invalid_request',
        });
      applyMode(services, tenant, a.namespace, mode as NamespaceMode | undefined);
      // `after` (the origin's): only items created after this time; filtered before the limit applies.
      const after = parseTime('after', opt(a.after));
      const limit = Math.max(1, Math.min(a.limit ?? 100, 1000));
      const items = services.review.queue(
        tenant,
        a.namespace,
        {
          lowConfidenceThreshold: opt(a.lowConfidenceThreshold),
          sourceTrustDropThreshold: opt(a.sourceTrustDropThreshold),
          sourceRefutationThreshold: opt(a.sourceRefutationThreshold),
          escalationAfterHours: opt(a.escalationAfterHours),
          sourceAnomalyEscalationPriority: opt(a.sourceAnomalyEscalationPriority),
        },
        {
          types: opt(a.types) as ReviewType[] | undefined,
          sourceId: opt(a.sourceId),
          status: opt(a.status) as ReviewStatus | undefined,
          owner: opt(a.owner),
        },
        after === undefined ? limit : 1000,
      ).items;
      return camel(
        after === undefined
          ? items
          : items.filter((i) => i.created_at !== null && Date.parse(i.created_at) > after).slice(0, limit),
      );
    },
    reviewEscalationDigest: (a: Args) =>
      camel(services.escalations.digest(tenant, a.namespace, { escalationAfterHours: opt(a.escalationAfterHours) })),
    reviewEscalationDigests: (a: Args) => camel(services.escalations.snapshots(tenant, a.namespace)),
    reviewHandoffs: (a: Args) =>
      camel(services.escalations.handoffs(tenant, a.namespace, opt(a.owner), opt(a.escalationLevel))),
    reviewHandoffWebhookPlan: async (a: Args) => {
      requireWrite();
      return camel(
        await services.handoffs.plan(tenant, a.namespace, {
          targetUrl: a.targetUrl,
          secret: a.secret,
          owner: opt(a.owner),
          escalationLevel: opt(a.escalationLevel),
        }),
      );
    },
    reviewHandoffDeliveryReceipts: (a: Args) => camel(services.handoffs.receipts(tenant, a.namespace)),
    reviewHandoffRetryCandidates: (a: Args) => camel(services.handoffs.retryCandidates(tenant, a.namespace)),
    reviewHandoffRetryRecommendations: (a: Args) => camel(services.handoffs.retryRecommendations(tenant, a.namespace)),
    // The spec's "Retry fatigue (per target endpoint)": one entry per target (the REST form also lists the presets).
    reviewHandoffRetryFatigue: (a: Args) =>
      camel(
        services.handoffs.retryFatigue(tenant, a.namespace, {
          preset: opt(a.preset),
          owner: opt(a.owner),
          escalationLevel: opt(a.escalationLevel),
        }).targets,
      ),
    // The Markdown form of the same report (review-handoff-retry-fatigue-markdown, ADR 0178).
    reviewHandoffRetryFatigueMarkdown: (a: Args) =>
      retryFatigueMarkdown({
        namespace: a.namespace,
        ...services.handoffs.retryFatigue(tenant, a.namespace, {
          preset: opt(a.preset),
          owner: opt(a.owner),
          escalationLevel: opt(a.escalationLevel),
        }),
        generatedAt: new Date(services.core.now()).toISOString(),
      }),
    reviewDecisions: (a: Args) => camel(services.review.decisions(tenant, a.namespace)),
    validateClaim: feedback('validate'),
    refuteClaim: feedback('refute'),
    markUseful: feedback('useful'),
    markStale: feedback('stale'),
    recordReviewEscalationDigest: (a: Args) => {
      requireWrite();
      return camel(
        services.escalations.recordSnapshot(
          tenant,
          a.namespace,
          { escalationAfterHours: opt(a.escalationAfterHours) },
          opt(a.note),
        ),
      );
    },
    deliverReviewHandoffWebhook: async (a: Args) => {
      requireWrite();
      return camel(
        await services.handoffs.deliver(tenant, a.namespace, {
          targetUrl: a.targetUrl,
          secret: a.secret,
          execute: a.execute === true,
          owner: opt(a.owner),
          escalationLevel: opt(a.escalationLevel),
          timeoutMs: opt(a.timeoutMs),
        }),
      );
    },
    retryReviewHandoffWebhook: async (a: Args) => {
      requireWrite();
      return camel(
        await services.handoffs.retry(tenant, a.namespace, {
          digestEventId: a.digestEventId,
          targetUrl: a.targetUrl,
          secret: a.secret,
          execute: a.execute === true,
          timeoutMs: opt(a.timeoutMs),
        }),
      );
    },
    recordReviewDecision: (a: Args) => {
      requireWrite();
      return camel(
        services.review.decide(tenant, a.namespace, {
          review_id: a.reviewId,
          status: a.status,
          ...(a.owner !== undefined ? { owner: a.owner } : {}),
          decision: opt(a.decision),
          note: opt(a.note),
          recheck_at: opt(a.recheckAt),
        }),
      );
    },
  };
}
