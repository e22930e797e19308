/** `GET /v1/stats` (and `/admin/api/stats`): the caller's tenant's counts and the store's runtime totals (docs/adr/0036). */
export interface KnowledgeStats {
  readonly mode: 'embedded';
  readonly retrieval_total: number;
  readonly retrieval_errors: number;
  readonly ingest_total: number;
  readonly ingest_admitted: number;
  readonly ingest_rejected: number;
  /** Retrieval latency over the last 1024 retrievals (percentiles) and over all (mean), microseconds. */
  readonly latency_p50_us: number;
  readonly latency_p95_us: number;
  readonly latency_mean_us: number;
  readonly uptime_seconds: number;
  readonly namespaces: number;
  readonly nodes: number;
  readonly versions: number;
  /** Indexed vectors per dimension count. */
  readonly vectors_indexed: Record<string, number>;
  readonly embedder: { readonly kind: string; readonly model?: string };
  readonly reranker: { readonly kind: string; readonly model?: string | null };
  readonly extractor: { readonly kind: string; readonly model: string };
}

/**
 * Absolute `/v1/*` introspection routes of the knowledge store.
 */
import Router from '@koa/router';
import { FEATURES } from '../../knowledge/introspection/introspection.js';
import {
  backendsReport,
  migrationsReport,
  versionReport,
  type IntrospectionSources,
} from '../../knowledge/introspection/introspection-reports.js';

export interface KnowledgeMetaOptions extends IntrospectionSources {
  /** Runtime statistics for the calling tenant. */
  readonly stats: (tenant: string) => KnowledgeStats;
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
