/**
 * REST routes of knowledge gaps, acquisition (plan, execute, receipts, retries, review candidates)
 * and LLM ingest under `/v1/namespaces/{ns}`, and their GraphQL forms (`knowledgeGaps`,
 * `acquisitionPlan`): validate, call the service, serialize (docs/adr/0035).
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import { planView, type KnowledgeServices } from '../../knowledge/index.js';
import { requirePermission } from './auth.js';
import { enumParam, intParam } from './query-params.js';
import { validateAcquisitionExecute, validateAcquisitionPlan, validateCandidateDecision, validateGaps, validateIngest } from './request-schemas.js';

const CANDIDATE_STATUSES = ['staged', 'approved', 'rejected', 'all'] as const;

function gapOptions(b: { low_confidence_threshold?: number; stale_after_hours?: number; min_topic_nodes?: number; top_k?: number; max_gaps?: number }) {
  return { lowConfidenceThreshold: b.low_confidence_threshold, staleAfterHours: b.stale_after_hours, minTopicNodes: b.min_topic_nodes, topK: b.top_k, maxGaps: b.max_gaps };
}

/** The acquisition and ingest routes. */
export function acquisitionRoutes(services: KnowledgeServices): Router {
  const router = new Router({ prefix: '/v1/namespaces/:ns' });
  const ns = (ctx: Context) => String(ctx.params.ns);

  router.post('/gaps', (ctx) => {
    const { tenant } = requirePermission(ctx, 'read');
    const body = validateGaps(ctx.request.body ?? {});
    ctx.body = services.gaps.gaps(tenant, ns(ctx), gapOptions(body));
  });

  router.post('/acquisition/plan', (ctx) => {
    const { tenant } = requirePermission(ctx, 'read');
    const body = validateAcquisitionPlan(ctx.request.body ?? {});
    ctx.body = planView(services.acquisition.plan(tenant, ns(ctx), body.budget, body.max_gaps));
  });

  router.post('/acquisition/execute', async (ctx) => {
    const { tenant } = requirePermission(ctx, 'write');
    const b = validateAcquisitionExecute(ctx.request.body);
    ctx.body = await services.acquisition.execute(tenant, ns(ctx), {
      execute: b.execute ?? false,
      reviewBeforeAdmission: b.review_before_admission ?? false,
      connector: { url: b.connector.url, token: b.connector.token, timeoutMs: b.connector.timeout_ms },
      taskIds: b.task_ids, budget: b.budget, maxGaps: b.max_gaps, sourceId: b.source_id,
    });
  });

  router.get('/acquisition/receipts', (ctx) => {
    const { tenant } = requirePermission(ctx, 'read');
    ctx.body = { receipts: services.acquisition.receipts(tenant, ns(ctx), intParam(ctx, 'limit', 1000, 10_000, 1), intParam(ctx, 'offset', 0, 1e9)) };
  });

  router.get('/acquisition/retry-candidates', (ctx) => {
    const { tenant } = requirePermission(ctx, 'read');
    ctx.body = { candidates: services.acquisition.retryCandidates(tenant, ns(ctx)) };
  });

  router.get('/acquisition/retry-recommendations', (ctx) => {
    const { tenant } = requirePermission(ctx, 'read');
    ctx.body = { recommendations: services.acquisition.retryRecommendations(tenant, ns(ctx)) };
  });

  router.get('/acquisition/review/candidates', (ctx) => {
    const { tenant } = requirePermission(ctx, 'read');
    const status = enumParam(ctx, 'status', CANDIDATE_STATUSES) ?? 'staged';
    ctx.body = { candidates: services.acquisition.candidates(tenant, ns(ctx), status === 'all' ? undefined : status, intParam(ctx, 'limit', 100, 1000, 1), intParam(ctx, 'offset', 0, 1e9)) };
  });

  router.post('/acquisition/review/candidates/:id/approve', async (ctx) => {
    const { tenant } = requirePermission(ctx, 'write');
    const b = validateCandidateDecision(ctx.request.body ?? {});
    ctx.body = await services.acquisition.approve(tenant, ns(ctx), String(ctx.params.id), b);
  });

  router.post('/acquisition/review/candidates/:id/reject', (ctx) => {
    const { tenant } = requirePermission(ctx, 'write');
    const b = validateCandidateDecision(ctx.request.body ?? {});
    ctx.body = services.acquisition.reject(tenant, ns(ctx), String(ctx.params.id), b);
  });

  router.post('/ingest', async (ctx) => {
    const { tenant } = requirePermission(ctx, 'write');
    const body = validateIngest(ctx.request.body);
    ctx.body = await services.ingest.ingest(tenant, ns(ctx), body);
  });

  return router;
}

/** GraphQL SDL of gaps and the acquisition plan (extends the root query). */
export const ACQUISITION_SDL = /* GraphQL */ `
  type KnowledgeGap { id: ID! kind: String! priority: Int! description: String! relatedNodeIds: [ID!]! nearestTopics: [String!]! densityScore: Float! temporalGapSeconds: Int! }
  type KnowledgeGaps { namespace: String! coverageScore: Float! totalNodes: Int! totalGaps: Int! gaps: [KnowledgeGap!]! }
  type AcquisitionTask { id: ID! type: String! priority: Int! cost: Int! gapId: String! description: String! prompt: String! relatedNodeIds: [ID!]! nearestTopics: [String!]! }
  type AcquisitionPlan { namespace: String! coverageScore: Float! totalNodes: Int! budget: Int! budgetUsed: Int! deferred: Int! tasks: [AcquisitionTask!]! }

  extend type Query {
    knowledgeGaps(namespace: String = "default", topK: Int, minGapSize: Int, maxGaps: Int): KnowledgeGaps!
    acquisitionPlan(namespace: String = "default", budget: Int, maxGaps: Int): AcquisitionPlan!
  }
`;

type Args = Record<string, any>;
const opt = <T>(v: T | null | undefined): T | undefined => (v === null ? undefined : v);

/** Root resolvers of gaps and planning (read permission, like their REST forms). */
export function acquisitionResolvers(services: KnowledgeServices, tenant: string) {
  return {
    knowledgeGaps: (a: Args) => {
      const body = validateGaps(Object.fromEntries(Object.entries({ top_k: opt(a.topK), min_topic_nodes: opt(a.minGapSize), max_gaps: opt(a.maxGaps) }).filter(([, v]) => v !== undefined)));
      const r = services.gaps.gaps(tenant, a.namespace, gapOptions(body));
      return {
        namespace: r.namespace, coverageScore: r.coverage_score, totalNodes: r.total_nodes, totalGaps: r.total_gaps,
        gaps: r.gaps.map((g) => ({ id: g.id, kind: g.kind, priority: g.priority, description: g.description, relatedNodeIds: g.related_node_ids, nearestTopics: g.nearest_topics, densityScore: g.density_score, temporalGapSeconds: g.temporal_gap_seconds })),
      };
    },
    acquisitionPlan: (a: Args) => services.acquisition.plan(tenant, a.namespace, opt(a.budget), opt(a.maxGaps)),
  };
}
