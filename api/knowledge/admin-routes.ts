/**
 * Admin API on the admin listener: `POST /admin/api/explain-rank`.
 */
import Router from '@koa/router';
import { explainRankRest, type KnowledgeServices } from '../../knowledge/index.js';
import { ValidationError } from '../../domain/errors.js';
import { requirePermission } from './auth.js';
import { validateExplainRank } from './request-schemas.js';

/** `/admin/api/*` routes. */
export function adminApiRoutes(services: KnowledgeServices): Router {
  const router = new Router({ prefix: '/admin/api' });
  router.post('/explain-rank', async (ctx) => {
    const { tenant } = requirePermission(ctx, 'admin');
    const body = validateExplainRank(ctx.request.body);
    if (body.namespace === undefined) throw new ValidationError('namespace: is required', { code: 'invalid_request', details: { problems: [{ path: 'namespace', keyword: 'required', message: 'namespace: is required' }] } });
    const result = await services.explainRank.explain(tenant, body.namespace, {
      nodeId: body.node_id.toLowerCase(),
      otherNodeId: body.other_node_id.toLowerCase(),
      ...(body.text !== undefined ? { text: body.text } : {}),
      ...(body.vector !== undefined ? { vector: body.vector } : {}),
      ...(body.score_params !== undefined ? { scoreParams: body.score_params } : {}),
    });
    ctx.body = explainRankRest(result);
  });
  return router;
}
