/**
 * REST routes under `/v1/namespaces/{ns}`: a thin edge that validates, calls a service, serializes.
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import { ValidationError } from '../../domain/errors.js';
import { explainRankRest, type KnowledgeServices } from '../../knowledge/index.js';
import { requirePermission } from './auth.js';
import type { KnowledgeMetrics } from './metrics.js';
import { modeLabel, retrievalLabels } from './metric-labels.js';
import {
  validateEdge,
  validateExplainRank,
  validateReconcile,
  validateRetract,
  validateRetrieve,
  validateSourceLabel,
} from './request-schemas.js';
import { applyMode, originScoreParams, present } from './origin-compat.js';
import { parseTime } from '../../knowledge/core/time.js';
import { intParam } from './query-params.js';
import { addWriteBatchRoute } from './write-batch-route.js';
import { writeOne } from './write-one.js';

function stringParam(ctx: Context, name: string): string | undefined {
  const raw = ctx.query[name];
  return Array.isArray(raw) ? raw[0] : raw;
}

/** The namespace-relative REST routes. */
export function namespaceRoutes(services: KnowledgeServices, metrics: KnowledgeMetrics): Router {
  const router = new Router({ prefix: '/v1/namespaces/:ns' });
  const ns = (ctx: Context) => String(ctx.params.ns);

  router.post('/write', async (ctx) => {
    const { tenant } = requirePermission(ctx, 'write');
    ctx.body = await writeOne(services, metrics, tenant, ns(ctx), ctx.request.body);
  });

  addWriteBatchRoute(router, services, metrics);

  router.post('/retrieve', async (ctx) => {
    const { tenant } = requirePermission(ctx, 'read');
    const raw = validateRetrieve(ctx.request.body);
    const scoreParams = originScoreParams(raw.score_params);
    const { score_params: _ignored, ...rest } = raw;
    const body = scoreParams === undefined ? rest : { ...rest, score_params: scoreParams };
    ctx.body = await metrics.timeRetrieve(
      () => services.retrieval.retrieve(tenant, ns(ctx), body),
      retrievalLabels(services, tenant, ns(ctx), body),
    );
  });

  router.post('/rank/explain', async (ctx) => {
    const { tenant } = requirePermission(ctx, 'read');
    const body = validateExplainRank(ctx.request.body);
    applyMode(services, tenant, ns(ctx), body.mode);
    ctx.body = explainRankRest(await services.explainRank.explain(tenant, ns(ctx), explainInput(body)));
  });

  router.get('/nodes/:id', (ctx) => {
    const { tenant } = requirePermission(ctx, 'read');
    const history = stringParam(ctx, 'history');
    ctx.body = services.nodes.get(tenant, ns(ctx), String(ctx.params.id), {
      ...(stringParam(ctx, 'valid_at') !== undefined ? { valid_at: stringParam(ctx, 'valid_at') } : {}),
      ...(stringParam(ctx, 'known_at') !== undefined ? { known_at: stringParam(ctx, 'known_at') } : {}),
      history: history === 'true' || history === '1',
    });
  });

  router.post('/nodes/:id/retract-source', async (ctx) => {
    const { tenant } = requirePermission(ctx, 'write');
    const body = validateRetract(ctx.request.body);
    await services.nodes.retractSource(tenant, ns(ctx), String(ctx.params.id), body);
    ctx.status = 204;
  });

  router.post('/nodes/:id/edges', (ctx) => {
    const { tenant } = requirePermission(ctx, 'write');
    const body = validateEdge(ctx.request.body);
    ctx.status = 201;
    ctx.body = services.nodes.addEdge(tenant, ns(ctx), String(ctx.params.id), { ...body, to: body.to.toLowerCase() });
  });

  router.post('/sources/label', (ctx) => {
    const { tenant } = requirePermission(ctx, 'write');
    const { mode, external_id: externalId, source_id: sourceId, ...body } = validateSourceLabel(ctx.request.body);
    if (externalId !== undefined && sourceId !== undefined && externalId !== sourceId) {
      throw new ValidationError(
        'external_id and source_id name different sources; external_id is an alias of source_id',
        { code: 'invalid_request' },
      );
    }
    applyMode(services, tenant, ns(ctx), mode, true);
    ctx.body = services.sources.label(tenant, ns(ctx), { ...body, source_id: (sourceId ?? externalId)! });
  });

  router.get('/sources/:sourceID/trust', (ctx) => {
    const { tenant } = requirePermission(ctx, 'read');
    ctx.body = services.sources.trust(tenant, ns(ctx), String(ctx.params.sourceID));
  });

  router.get('/recovery/pending', (ctx) => {
    const { tenant } = requirePermission(ctx, 'read');
    ctx.body = services.recovery.pending(
      tenant,
      ns(ctx),
      intParam(ctx, 'limit', 100, 10_000),
      intParam(ctx, 'offset', 0, 1e9),
    );
  });

  router.post('/recovery/reconcile', async (ctx) => {
    const { tenant } = requirePermission(ctx, 'write');
    const body = validateReconcile(ctx.request.body ?? {});
    applyMode(services, tenant, ns(ctx), body.mode);
    const reconcile = () => services.recovery.reconcile(tenant, ns(ctx), body.execute ?? false, body.limit ?? 1000);
    // Each write intent a run replays is a write that lands now: counted as POST /write counts its one.
    ctx.body =
      body.execute === true
        ? await metrics.timeWrites(
            reconcile,
            (r) =>
              r.steps
                .filter((s) => s.kind === 'write' && s.action === 'replayed')
                .map((s) => (s.deduplicated === true ? 'deduplicated' : 'admitted')),
            modeLabel(services, tenant, ns(ctx)),
          )
        : await reconcile();
  });

  return router;
}

/** Service input of explain-rank from its REST (and admin) body, with the origin's zero-means-default values. */
export function explainInput(body: ReturnType<typeof validateExplainRank>) {
  const scoreParams = originScoreParams(body.score_params);
  const asOf = parseTime('as_of', present(body.as_of));
  return {
    nodeId: body.node_id.toLowerCase(),
    otherNodeId: body.other_node_id.toLowerCase(),
    ...(body.text !== undefined ? { text: body.text } : {}),
    ...(body.vector !== undefined ? { vector: body.vector } : {}),
    ...(scoreParams !== undefined ? { scoreParams } : {}),
    ...(asOf !== undefined ? { asOf } : {}),
    ...(body.max_depth !== undefined && body.max_depth > 0 ? { maxDepth: body.max_depth } : {}),
  };
}
