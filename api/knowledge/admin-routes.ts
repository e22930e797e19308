/**
 * Admin API on the admin listener (admin permission): explain-rank, and the origin's dashboard
 * JSON APIs `stats`, `metrics`, `ranking-eval`, `timetravel`, `diff`, `search` and `belief`
 * (docs/adr/0038-admin-debugger-api.md), and the belief debugger's reads the dashboard page needs
 * on its own origin: `node` (every version over valid and transaction time), `source-trust`,
 * `feedback` (of one node) and `retrieve` (a query's ranked results with their score breakdown),
 * the same services as the namespace REST routes on 7701 (docs/adr/0132).
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import { explainRankRest, type KnowledgeServices } from '../../knowledge/index.js';
import { ValidationError } from '../../domain/errors.js';
import { DebuggerService, parseDebuggerTime, SEARCH_LIMIT } from '../../knowledge/introspection/debugger-service.js';
import { RANKING_EVAL_MAX_TOP_K, runRankingEval } from '../../knowledge/introspection/ranking-eval.js';
import { requirePermission } from './auth.js';
import { validateExplainRank, validateRetrieve } from './request-schemas.js';
import { originScoreParams } from './origin-compat.js';
import { explainInput } from './namespace-routes.js';
import { intParam, listParam, stringParam } from './query-params.js';
import type { RuntimeTotals } from './metrics.js';
import type { KnowledgeStats } from './meta-routes.js';

/** What the admin API reads besides the services. */
export interface AdminApiOptions {
  /** Runtime statistics for a tenant (the `/v1/stats` body). */
  readonly stats: (tenant: string) => KnowledgeStats;
  readonly totals: () => RuntimeTotals;
  readonly version: string;
}

const ratio = (n: number, d: number) => (d <= 0 ? 0 : n / d);

/** The origin's dashboard metrics: health signals, ingest and retrieval rates, latency. */
export function metricsSnapshot(t: RuntimeTotals, generatedAt: number) {
  let status = 'healthy';
  const signals = ['admin metrics online'];
  if (t.retrievalErrors > 0) {
    status = 'degraded';
    signals.push('retrieval errors observed');
  }
  if (t.ingestRejected > 0) {
    if (status === 'healthy') status = 'watch';
    signals.push('ingest rejections observed');
  }
  if (t.ingestTotal === 0 && t.retrievalTotal === 0) signals.push('no traffic recorded yet');
  return {
    mode: 'embedded',
    generated_at: new Date(generatedAt).toISOString(),
    health: { status, signals },
    ingest: {
      total: t.ingestTotal,
      admitted: t.ingestAdmitted,
      rejected: t.ingestRejected,
      admission_rate: ratio(t.ingestAdmitted, t.ingestTotal),
      rejection_rate: ratio(t.ingestRejected, t.ingestTotal),
    },
    retrieval: {
      total: t.retrievalTotal,
      errors: t.retrievalErrors,
      error_rate: ratio(t.retrievalErrors, t.retrievalTotal),
    },
    latency: {
      p50_us: t.latencyP50Us,
      p95_us: t.latencyP95Us,
      mean_us: t.latencyMeanUs,
      p50_ms: t.latencyP50Us / 1000,
      p95_ms: t.latencyP95Us / 1000,
      mean_ms: t.latencyMeanUs / 1000,
    },
  };
}

function required(ctx: Context, name: string): string {
  const value = stringParam(ctx, name)?.trim();
  if (value === undefined || value === '')
    throw new ValidationError(`${name}: query parameter is required`, {
      code: 'invalid_request',
      details: { parameter: name },
    });
  return value;
}

/** `/admin/api/*` routes. */
export function adminApiRoutes(services: KnowledgeServices, options: AdminApiOptions): Router {
  const router = new Router({ prefix: '/admin/api' });
  const debug = new DebuggerService(services.core);

  router.post('/explain-rank', async (ctx) => {
    const { tenant } = requirePermission(ctx, 'admin');
    const body = validateExplainRank(ctx.request.body);
    if (body.namespace === undefined)
      throw new ValidationError('namespace: is required', {
        code: 'invalid_request',
        details: { problems: [{ path: 'namespace', keyword: 'required', message: 'namespace: is required' }] },
      });
    ctx.body = explainRankRest(await services.explainRank.explain(tenant, body.namespace, explainInput(body)));
  });

  router.get('/stats', (ctx) => {
    const { tenant } = requirePermission(ctx, 'admin');
    ctx.body = options.stats(tenant);
  });

  router.get('/metrics', (ctx) => {
    requirePermission(ctx, 'admin');
    ctx.body = metricsSnapshot(options.totals(), services.core.now());
  });

  router.get('/ranking-eval', async (ctx) => {
    requirePermission(ctx, 'admin');
    const raw = stringParam(ctx, 'top_k');
    // Like the origin: a missing or unusable top_k means 5; above the maximum is refused.
    const topK = raw !== undefined && /^\d+$/.test(raw) && Number(raw) > 0 ? Number(raw) : 5;
    if (topK > RANKING_EVAL_MAX_TOP_K)
      throw new ValidationError(`top_k: must be ${RANKING_EVAL_MAX_TOP_K} or less`, { code: 'invalid_request' });
    ctx.body = await runRankingEval(topK, options.version, services.core.now());
  });

  router.get('/timetravel', (ctx) => {
    const { tenant } = requirePermission(ctx, 'admin');
    ctx.body = debug.timeTravel(
      tenant,
      required(ctx, 'ns'),
      parseDebuggerTime('asof', stringParam(ctx, 'asof')),
      listParam(ctx, 'labels') ?? [],
    );
  });

  router.get('/diff', (ctx) => {
    const { tenant } = requirePermission(ctx, 'admin');
    const ns = required(ctx, 'ns');
    ctx.body = debug.diff(
      tenant,
      ns,
      parseDebuggerTime('from', stringParam(ctx, 'from')),
      parseDebuggerTime('to', stringParam(ctx, 'to')),
    );
  });

  router.get('/search', (ctx) => {
    const { tenant } = requirePermission(ctx, 'admin');
    const ns = required(ctx, 'ns');
    // The origin caps the limit at 50 rather than refusing a larger one.
    const limit = Math.min(SEARCH_LIMIT.max, intParam(ctx, 'limit', SEARCH_LIMIT.default, 1e9, 1));
    ctx.body = debug.search(tenant, ns, stringParam(ctx, 'q'), listParam(ctx, 'labels') ?? [], limit);
  });

  router.get('/belief', (ctx) => {
    const { tenant } = requirePermission(ctx, 'admin');
    ctx.body = debug.belief(tenant, required(ctx, 'ns'), required(ctx, 'id'));
  });

  router.get('/node', (ctx) => {
    const { tenant } = requirePermission(ctx, 'admin');
    ctx.body = services.nodes.get(tenant, required(ctx, 'ns'), required(ctx, 'id'), { history: true });
  });

  router.get('/source-trust', (ctx) => {
    const { tenant } = requirePermission(ctx, 'admin');
    ctx.body = services.sources.trust(tenant, required(ctx, 'ns'), required(ctx, 'source_id'));
  });

  router.get('/feedback', (ctx) => {
    const { tenant } = requirePermission(ctx, 'admin');
    const node = required(ctx, 'node_id').toLowerCase();
    // The namespace's first FEEDBACK_SCAN events (oldest first) are filtered to the node's.
    const events = services.feedback
      .events(tenant, required(ctx, 'ns'), undefined, FEEDBACK_SCAN)
      .filter((e) => e.node_id === node);
    ctx.body = { node_id: node, count: events.length, events };
  });

  router.post('/retrieve', async (ctx) => {
    const { tenant } = requirePermission(ctx, 'admin');
    const { namespace, ...rest } = (ctx.request.body ?? {}) as Record<string, unknown>;
    if (typeof namespace !== 'string' || namespace.trim() === '')
      throw new ValidationError('namespace: is required', {
        code: 'invalid_request',
        details: { problems: [{ path: 'namespace', keyword: 'required', message: 'namespace: is required' }] },
      });
    const raw = validateRetrieve(rest);
    const scoreParams = originScoreParams(raw.score_params);
    const { score_params: _ignored, ...query } = raw;
    // A debugger read: not counted in the retrieval metrics of callers' traffic.
    ctx.body = await services.retrieval.retrieve(
      tenant,
      namespace,
      scoreParams === undefined ? query : { ...query, score_params: scoreParams },
    );
  });

  return router;
}

/** How many of a namespace's feedback events the debugger scans for one node's. */
const FEEDBACK_SCAN = 10_000;
