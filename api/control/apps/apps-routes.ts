/**
 * Apps routes: discovered apps with runtime status, the service manifest, right-sizing.
 */
import Router from '@koa/router';
import {
  getAppView,
  listAppViews,
  resourceSuggestions,
  serviceManifest,
  type AppViewSources,
} from '../../../controllers/apps/app-views.js';

/** `GET /api/apps`, `GET /api/apps/:id`, the service manifest and resource suggestions. */
export function appsRoutes(sources: AppViewSources): Router {
  const router = new Router();
  router.get('/api/apps', async (ctx) => {
    ctx.body = { apps: await listAppViews(sources) };
  });
  router.get('/api/apps/:id', async (ctx) => {
    ctx.body = await getAppView(sources, ctx.params.id!);
  });
  for (const path of ['/api/services/manifest', '/api/v1/services/manifest']) {
    router.get(path, async (ctx) => {
      ctx.body = await serviceManifest(sources);
    });
  }
  router.get('/api/resources/suggestions', async (ctx) => {
    ctx.body = await resourceSuggestions(sources);
  });
  return router;
}
