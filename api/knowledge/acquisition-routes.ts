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
import { ValidationError } from '../../domain/errors.js';
import {
  validateAcquisitionExecute,
  validateAcquisitionPlan,
  validateCandidateDecision,
  validateGaps,
  validateIngest,
  RESERVED_CONNECTOR_HEADERS,
  type AcquisitionExecuteBody,
  type OriginConnector,
} from './request-schemas.js';
import { applyMode, present, presentList } from './origin-compat.js';
import type { KnowledgeMetrics } from './metrics.js';
import { modeLabel } from './metric-labels.js';

const CANDIDATE_STATUSES = ['staged', 'approved', 'rejected', 'all'] as const;

function gapOptions(b: {
  low_confidence_threshold?: number;
  stale_after_hours?: number;
  min_topic_nodes?: number;
  top_k?: number;
  max_gaps?: number;
  min_gap_size?: number;
}) {
  return {
    lowConfidenceThreshold: b.low_confidence_threshold,
    staleAfterHours: b.stale_after_hours,
    minTopicNodes: b.min_topic_nodes,
    topK: b.top_k,
    maxGaps: b.max_gaps,
    maxDensity: b.min_gap_size,
  };
}

/** Decision body with the origin's empty strings read as absent. */
function decision(b: { actor?: string; note?: string }) {
  return { actor: present(b.actor), note: present(b.note) };
}

/** Checks the origin-form connectors beyond their schema: unique ids, no reserved header, a shared allowed source. */
function checkConnectors(b: AcquisitionExecuteBody, connectors: readonly OriginConnector[]): void {
  const seen = new Set<string>();
  connectors.forEach((c, i) => {
    if (seen.has(c.id))
      throw new ValidationError(`connectors[${i}].id: duplicate connector id "${c.id}"`, { code: 'invalid_request' });
    seen.add(c.id);
    for (const name of Object.keys(c.headers ?? {})) {
      if ((RESERVED_CONNECTOR_HEADERS as readonly string[]).includes(name.toLowerCase())) {
        throw new ValidationError(`connectors[${i}].headers.${name}: is set by the store and cannot be configured`, {
          code: 'invalid_request',
        });
      }
    }
    if (b.execute === true && present(c.endpoint) === undefined) {
      throw new ValidationError(`connectors[${i}].endpoint: is required when execute is true`, {
        code: 'invalid_request',
      });
    }
    const own = presentList(c.allowed_source_ids);
    const requested = presentList(b.allowed_source_ids);
    if (own && requested && !own.some((s) => requested.includes(s))) {
      throw new ValidationError(
        `connectors[${i}]: allowed_source_ids share no source with the request's allowed_source_ids`,
        { code: 'invalid_request' },
      );
    }
  });
}

/** Sources a connector may contribute: the intersection of the request's and the connector's lists (either alone when the other is empty). */
function allowedSources(
  requested: readonly string[] | undefined,
  own: readonly string[] | undefined,
): string[] | undefined {
  if (!requested) return own ? [...new Set(own)] : undefined;
  if (!own) return [...new Set(requested)];
  return [...new Set(own.filter((s) => requested.includes(s)))];
}

type ExecuteResult = Awaited<ReturnType<KnowledgeServices['acquisition']['execute']>>;
type AnyRun = Record<string, any>;

/** The write outcome of each node an execution admitted or tried to (a preview admits none). */
function admissionOutcomes(result: ExecuteResult): string[] {
  const out: string[] = [];
  for (const r of result.results as AnyRun[]) {
    for (const a of (r.admitted ?? []) as { admitted: boolean; deduplicated?: boolean }[])
      out.push(!a.admitted ? 'rejected' : a.deduplicated === true ? 'deduplicated' : 'admitted');
  }
  return out;
}

/**
 * The origin's execution plan shape for the multi-connector form: `{namespace, dry_run, executed,
 * planned_at, plan, connectors, runs, summary}` (one run per task and connector), plus our
 * per-connector results. Connector headers are never echoed: only their names are.
 */
function originExecution(
  b: AcquisitionExecuteBody,
  plannedAt: string,
  plan: Parameters<typeof planView>[0],
  runs: { connector: OriginConnector; allowed: string[] | undefined; result: ExecuteResult }[],
) {
  const execute = b.execute ?? false;
  const review = b.review_before_admission ?? false;
  const out: AnyRun[] = [];
  for (const { connector, allowed, result } of runs) {
    for (const r of result.results as AnyRun[]) {
      const base = {
        task_id: r.task?.id ?? r.task_id,
        task_type: r.task?.type ?? r.type,
        connector_id: connector.id,
        connector_type: connector.type,
        method: 'POST',
        target_url: result.connector_url,
        allowed_source_ids: allowed ?? [],
        idempotency_key: r.idempotency_key,
        attempt: r.attempt,
      };
      if (!execute) {
        out.push({
          ...base,
          prompt: r.task.prompt,
          dry_run: true,
          executed: false,
          status: r.status,
          payload_sha256: r.request_sha256,
        });
        continue;
      }
      const admitted = (r.admitted ?? []) as { node_id: string | null; admitted: boolean }[];
      out.push({
        ...base,
        dry_run: false,
        executed: r.status === 'succeeded' || r.status === 'already_succeeded',
        status: r.status === 'failed' ? 'error' : r.status === 'succeeded' ? 'executed' : r.status,
        payload_sha256: r.receipt?.request_sha256 ?? null,
        response_sha256: r.receipt?.response_sha256 ?? null,
        status_code: r.receipt?.status_code ?? null,
        preview_items: r.receipt?.evidence_count ?? 0,
        written_node_ids: admitted.filter((a) => a.admitted && a.node_id !== null).map((a) => a.node_id),
        review_candidate_ids: review ? r.candidate_ids : [],
        candidate_ids: r.candidate_ids,
        error: r.receipt?.error ?? null,
        receipt: r.receipt,
      });
    }
  }
  return {
    namespace: plan.namespace,
    dry_run: !execute,
    executed: execute,
    planned_at: plannedAt,
    review_before_admission: review,
    plan: planView(plan),
    connectors: runs.map(({ connector }) => ({
      id: connector.id,
      type: connector.type,
      endpoint: present(connector.endpoint) ?? null,
      allowed_source_ids: presentList(connector.allowed_source_ids) ?? [],
      default_labels: presentList(connector.default_labels) ?? [],
      header_names: Object.keys(connector.headers ?? {}).sort(),
    })),
    runs: out,
    summary: {
      tasks: new Set(out.map((r) => r.task_id)).size,
      connector_runs: out.length,
      preview_items: out.reduce((n, r) => n + (r.preview_items ?? 0), 0),
      written_nodes: out.reduce((n, r) => n + (r.written_node_ids?.length ?? 0), 0),
      review_candidates: out.reduce((n, r) => n + (r.review_candidate_ids?.length ?? 0), 0),
      errors: out.filter((r) => r.status === 'error').length,
    },
  };
}

/** The acquisition and ingest routes. */
export function acquisitionRoutes(services: KnowledgeServices, metrics: KnowledgeMetrics): Router {
  const router = new Router({ prefix: '/v1/namespaces/:ns' });
  const ns = (ctx: Context) => String(ctx.params.ns);

  router.post('/gaps', (ctx) => {
    const { tenant } = requirePermission(ctx, 'read');
    const body = validateGaps(ctx.request.body ?? {});
    applyMode(services, tenant, ns(ctx), body.mode);
    ctx.body = services.gaps.gaps(tenant, ns(ctx), gapOptions(body));
  });

  router.post('/acquisition/plan', (ctx) => {
    const { tenant } = requirePermission(ctx, 'read');
    const body = validateAcquisitionPlan(ctx.request.body ?? {});
    applyMode(services, tenant, ns(ctx), body.mode);
    ctx.body = planView(
      services.acquisition.plan(tenant, ns(ctx), body.budget, body.max_gaps, {
        topK: body.top_k,
        maxDensity: body.min_gap_size,
      }),
    );
  });

  router.post('/acquisition/execute', async (ctx) => {
    const { tenant } = requirePermission(ctx, 'write');
    const b = validateAcquisitionExecute(ctx.request.body);
    applyMode(services, tenant, ns(ctx), b.mode);
    const common = {
      execute: b.execute ?? false,
      reviewBeforeAdmission: b.review_before_admission ?? false,
      taskIds: b.task_ids,
      budget: b.budget,
      maxGaps: b.max_gaps,
      sourceId: b.source_id,
      gapOptions: { topK: b.top_k, maxDensity: b.min_gap_size },
      maxResults: b.max_results,
      maxAttempts: b.max_attempts,
    };
    // Each node an execution admits is a write: counted with its outcome, as POST /write counts its one.
    const run = (fn: () => Promise<ExecuteResult>): Promise<ExecuteResult> =>
      common.execute ? metrics.timeWrites(fn, admissionOutcomes, modeLabel(services, tenant, ns(ctx))) : fn();
    if (b.connector_id !== undefined) {
      const connector = services.acquisition.connectors.target(b.connector_id);
      const result = await run(() =>
        services.acquisition.execute(tenant, ns(ctx), {
          ...common,
          allowedSourceIds: presentList(b.allowed_source_ids),
          connector,
        }),
      );
      ctx.body = { ...result, connector_id: b.connector_id };
      return;
    }
    if (b.connector !== undefined) {
      const connector = { url: b.connector.url, token: b.connector.token, timeoutMs: b.connector.timeout_ms };
      ctx.body = await run(() =>
        services.acquisition.execute(tenant, ns(ctx), {
          ...common,
          allowedSourceIds: presentList(b.allowed_source_ids),
          connector,
        }),
      );
      return;
    }
    const connectors = b.connectors!;
    checkConnectors(b, connectors);
    const plannedAt = new Date(services.core.now()).toISOString();
    const runs = [];
    for (const c of connectors) {
      const allowed = allowedSources(presentList(b.allowed_source_ids), presentList(c.allowed_source_ids));
      const result = await run(() =>
        services.acquisition.execute(tenant, ns(ctx), {
          ...common,
          allowedSourceIds: allowed,
          connector: {
            url: present(c.endpoint),
            id: c.id,
            type: c.type,
            headers: c.headers ?? undefined,
            defaultLabels: presentList(c.default_labels),
          },
        }),
      );
      runs.push({ connector: c, allowed, result });
    }
    ctx.body = originExecution(
      b,
      plannedAt,
      services.acquisition.plan(tenant, ns(ctx), b.budget, b.max_gaps, { topK: b.top_k, maxDensity: b.min_gap_size }),
      runs,
    );
  });

  router.get('/acquisition/connectors', (ctx) => {
    requirePermission(ctx, 'read');
    // Server-wide: the same list under every namespace. Tokens are never shown, only whether one is set.
    ctx.body = { connectors: services.acquisition.connectors.list() };
  });

  router.get('/acquisition/receipts', (ctx) => {
    const { tenant } = requirePermission(ctx, 'read');
    ctx.body = {
      receipts: services.acquisition.receipts(
        tenant,
        ns(ctx),
        intParam(ctx, 'limit', 1000, 10_000, 1),
        intParam(ctx, 'offset', 0, 1e9),
      ),
    };
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
    ctx.body = {
      candidates: services.acquisition.candidates(
        tenant,
        ns(ctx),
        status === 'all' ? undefined : status,
        intParam(ctx, 'limit', 100, 1000, 1),
        intParam(ctx, 'offset', 0, 1e9),
      ),
    };
  });

  router.post('/acquisition/review/candidates/:id/approve', async (ctx) => {
    const { tenant } = requirePermission(ctx, 'write');
    const b = validateCandidateDecision(ctx.request.body ?? {});
    applyMode(services, tenant, ns(ctx), b.mode);
    // An approval writes the candidate's node: it counts in the write and ingest metrics (a replay does not write).
    ctx.body = await metrics.timeWrites(
      () => services.acquisition.approve(tenant, ns(ctx), String(ctx.params.id), decision(b)),
      (r) => ('replayed' in r && r.replayed === true ? [] : ['admitted']),
      modeLabel(services, tenant, ns(ctx)),
    );
  });

  router.post('/acquisition/review/candidates/:id/reject', (ctx) => {
    const { tenant } = requirePermission(ctx, 'write');
    const b = validateCandidateDecision(ctx.request.body ?? {});
    applyMode(services, tenant, ns(ctx), b.mode);
    ctx.body = services.acquisition.reject(tenant, ns(ctx), String(ctx.params.id), decision(b));
  });

  router.post('/ingest', async (ctx) => {
    const { tenant } = requirePermission(ctx, 'write');
    const { mode, ...body } = validateIngest(ctx.request.body);
    applyMode(services, tenant, ns(ctx), mode, true);
    // Each extracted claim is a write: counted per node with its outcome, as POST /write counts its one.
    ctx.body = await metrics.timeWrites(
      () => services.ingest.ingest(tenant, ns(ctx), body),
      (r) =>
        r.nodes.map((n) =>
          !n.admitted ? 'rejected' : n.deduplicated === true || n.replayed === true ? 'deduplicated' : 'admitted',
        ),
      modeLabel(services, tenant, ns(ctx)),
    );
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
    knowledgeGaps(namespace: String = "default", topK: Int, minGapSize: Float, maxGaps: Int): KnowledgeGaps!
    acquisitionPlan(namespace: String = "default", budget: Int, maxGaps: Int): AcquisitionPlan!
  }
`;

type Args = Record<string, any>;
const opt = <T>(v: T | null | undefined): T | undefined => (v === null ? undefined : v);

/** Root resolvers of gaps and planning (read permission, like their REST forms). */
export function acquisitionResolvers(services: KnowledgeServices, tenant: string) {
  return {
    knowledgeGaps: (a: Args) => {
      const body = validateGaps(
        Object.fromEntries(
          Object.entries({ top_k: opt(a.topK), min_gap_size: opt(a.minGapSize), max_gaps: opt(a.maxGaps) }).filter(
            ([, v]) => v !== undefined,
          ),
        ),
      );
      const r = services.gaps.gaps(tenant, a.namespace, gapOptions(body));
      return {
        namespace: r.namespace,
        coverageScore: r.coverage_score,
        totalNodes: r.total_nodes,
        totalGaps: r.total_gaps,
        gaps: r.gaps.map((g) => ({
          id: g.id,
          kind: g.kind,
          priority: g.priority,
          description: g.description,
          relatedNodeIds: g.related_node_ids,
          nearestTopics: g.nearest_topics,
          densityScore: g.density_score,
          temporalGapSeconds: g.temporal_gap_seconds,
        })),
      };
    },
    acquisitionPlan: (a: Args) => services.acquisition.plan(tenant, a.namespace, opt(a.budget), opt(a.maxGaps)),
  };
}
