/**
 * Absolute `/v1/*` introspection routes of the knowledge store.
 */
import Router from '@koa/router';
import {
  FEATURES,
  backendsReport,
  migrationsReport,
  versionReport,
  type IntrospectionSources,
} from '../../knowledge/introspection/introspection.js';

export interface KnowledgeMetaOptions extends IntrospectionSources {
  /** Runtime statistics for the calling tenant. */
  readonly stats: (tenant: string) => Record<string, unknown>;
}

/** `/v1/ping`, `/v1/version`, `/v1/features`, `/v1/migrations`, `/v1/backends`, `/v1/stats`. */
export function knowledgeMetaRoutes(options: KnowledgeMetaOptions): Router {
  const router = new Router();
  router.get('/v1/ping', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  router.get('/v1/version', (ctx) => {
    ctx.body = versionReport(options);
  });
  router.get('/v1/features', (ctx) => {
    ctx.body = { features: FEATURES };
  });
  router.get('/v1/migrations', (ctx) => {
    ctx.body = migrationsReport(options);
  });
  router.get('/v1/backends', (ctx) => {
    ctx.body = backendsReport(options);
  });
  router.get('/v1/stats', (ctx) => {
    const principal = ctx.state.principal as { tenant: string } | undefined;
    ctx.body = options.stats(principal?.tenant ?? 'default');
  });
  return router;
}
