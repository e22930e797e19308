/**
 * Admin API on the admin listener: `POST /admin/api/explain-rank`.
 */
import Router from '@koa/router';
import { explainRankRest, type KnowledgeServices } from '../../knowledge/index.js';
import { ValidationError } from '../../domain/errors.js';
import { requirePermission } from './auth.js';
import { validateExplainRank } from './request-schemas.js';
import { explainInput } from './namespace-routes.js';

/** `/admin/api/*` routes. */
export function adminApiRoutes(services: KnowledgeServices): Router {
  const router = new Router({ prefix: '/admin/api' });
  router.post('/explain-rank', async (ctx) => {
    const { tenant } = requirePermission(ctx, 'admin');
    const body = validateExplainRank(ctx.request.body);
    if (body.namespace === undefined) throw new ValidationError('namespace: is required', { code: 'invalid_request', details: { problems: [{ path: 'namespace', keyword: 'required', message: 'namespace: is required' }] } });
    ctx.body = explainRankRest(await services.explainRank.explain(tenant, body.namespace, explainInput(body)));
  });
  return router;
}
