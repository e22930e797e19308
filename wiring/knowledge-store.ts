/**
 * Composition root of the knowledge store: opens `knowledge.db`, wires services, authentication,
 * REST, GraphQL, metrics and the admin listener.
 */
import type Router from '@koa/router';
import { secureDataFolder } from '../platform/files/secure-data-folder.js';
import { Registry, collectDefaultMetrics } from 'prom-client';
import type { SvcConfig } from '../platform/config.js';
import type { Logger } from '../platform/logger.js';
import { buildInfo } from '../platform/build-info.js';
import { builtWebPage } from '../platform/web-pages.js';
import { openKnowledgeStore } from '../store/open-stores.js';
import { appliedMigrations } from '../store/migrate.js';
import { sqliteVersion } from '../store/database.js';
import { createKnowledgeServices, type KnowledgeServices, type Reranker } from '../knowledge/index.js';
import { HttpEmbedder } from '../platform/outbound/http-embedder.js';
import { HttpExtractor } from '../platform/outbound/http-extractor.js';
import { HttpReranker } from '../platform/outbound/http-reranker.js';
import { GuardedWebhookClient } from '../platform/outbound/webhook-client.js';
import { listen, type RunningServer } from '../api/http/listen.js';
import { createKnowledgeApp } from '../api/knowledge/knowledge-app.js';
import { knowledgeWriteFastPath } from '../api/knowledge/write-fast-path.js';
import { readSignal } from '../api/knowledge/read-signal.js';
import { adminHealthRoutes, createAdminApp } from '../api/knowledge/admin-app.js';
import { knowledgeMetaRoutes, type KnowledgeStats } from '../api/knowledge/meta-routes.js';
import { KNOWLEDGE_OPENAPI_PATH, PUBLISHED_OPENAPI, openApiRoutes } from '../api/openapi/openapi-routes.js';
import { TenantTokens } from '../api/knowledge/tenant-tokens.js';
import { authenticate } from '../api/knowledge/auth.js';
import { KnowledgeMetrics, type RuntimeTotals } from '../api/knowledge/metrics.js';
import { namespaceRoutes } from '../api/knowledge/namespace-routes.js';
import { graphqlRoutes } from '../api/knowledge/graphql-routes.js';
import { reviewRoutes } from '../api/knowledge/review-routes.js';
import { acquisitionRoutes } from '../api/knowledge/acquisition-routes.js';
import { adminApiRoutes } from '../api/knowledge/admin-routes.js';
import { profilingRoutes } from '../api/knowledge/profiling-routes.js';
import { WordNetThesaurus } from '../platform/thesaurus/wordnet-thesaurus.js';
import { maintenanceRoutes, type MaintenanceServices } from '../api/knowledge/maintenance-routes.js';
import { BackupService } from '../knowledge/maintenance/backup-service.js';
import { LifecycleService } from '../knowledge/maintenance/lifecycle-service.js';
import { DoctorSampleWrite } from '../knowledge/maintenance/doctor-sample-write.js';
import { RankingEvalSnapshots } from '../knowledge/introspection/ranking-eval-snapshots.js';

/** The origin's runtime statistics in snake_case: deployment mode, retrieval and write totals, latency (docs/adr/0036). */
export function originStats(t: RuntimeTotals) {
  return {
    mode: 'embedded' as const,
    retrieval_total: t.retrievalTotal,
    retrieval_errors: t.retrievalErrors,
    ingest_total: t.ingestTotal,
    ingest_admitted: t.ingestAdmitted,
    ingest_rejected: t.ingestRejected,
    latency_p50_us: t.latencyP50Us,
    latency_p95_us: t.latencyP95Us,
    latency_mean_us: t.latencyMeanUs,
  };
}

/** A running knowledge store. */
export interface KnowledgeStore {
  readonly url: string;
  readonly adminUrl: string;
  readonly servers: readonly RunningServer[];
  /** The services behind the listeners (for in-process tools and benchmarks). */
  readonly services: KnowledgeServices;
  /** Backups, lifecycle, the doctor's sample write and stored ranking evaluations. */
  readonly maintenance: MaintenanceServices;
  /** The routers of the REST listener (`api`) and of the admin listener (`admin`): the OpenAPI document describes exactly their routes. */
  readonly routers: { readonly api: readonly Router[]; readonly admin: readonly Router[] };
  close(): Promise<void>;
}

/** Extra collaborators for {@link startKnowledgeStore}. */
export interface KnowledgeStoreExtras {
  /** Optional reranker over the fused candidates. */
  readonly reranker?: Reranker;
  /** Wall clock in epoch milliseconds (tests inject one). @default Date.now */
  readonly now?: () => number;
  /** Listening sockets to serve instead of binding the two ports (handed over by the host agent, ADR 0159). */
  readonly listener?: object;
  readonly adminListener?: object;
}

function handleOf(handle: object | undefined): { handle?: object } {
  return handle === undefined ? {} : { handle };
}

/** Starts the knowledge store on `config.knowledgePort` and `config.knowledgeAdminPort`. */
export async function startKnowledgeStore(
  config: SvcConfig,
  logger: Logger,
  extras: KnowledgeStoreExtras = {},
): Promise<KnowledgeStore> {
  const log = logger.child({ service: 'knowledge' });
  const tokens = TenantTokens.load(config.knowledgeTokens, config.knowledgeTokensFile);
  const store = openKnowledgeStore(config.dataDir);
  if (store.migrations.ahead.length > 0) {
    // A rollback left the newer release's schema (spec "Versioning" 3): this release runs on it.
    log.warn(
      { ahead: store.migrations.ahead.map((m) => `${m.version}-${m.name}`) },
      'knowledge.db has migrations of a newer release: running on its schema (a platform rollback does not undo schema changes)',
    );
  }
  secureDataFolder(config.dataDir);
  if (tokens.open) {
    log.warn('SVC_KNOWLEDGE_TOKENS is not set: the knowledge store accepts every request without authentication');
  }
  const embedder =
    config.knowledgeEmbedderUrl === undefined
      ? undefined
      : new HttpEmbedder({
          url: config.knowledgeEmbedderUrl,
          model: config.knowledgeEmbedderModel,
          ...(config.knowledgeEmbedderDimensions !== undefined
            ? { dimensions: config.knowledgeEmbedderDimensions }
            : {}),
          ...(config.knowledgeEmbedderApiKey !== undefined ? { apiKey: config.knowledgeEmbedderApiKey } : {}),
          timeoutMs: config.knowledgeEmbedderTimeoutMs,
          batchSize: config.knowledgeEmbedderBatchSize,
        });
  const reranker =
    extras.reranker ??
    (config.knowledgeRerankerUrl === undefined
      ? undefined
      : new HttpReranker({
          url: config.knowledgeRerankerUrl,
          model: config.knowledgeRerankerModel,
          ...(config.knowledgeRerankerApiKey !== undefined ? { apiKey: config.knowledgeRerankerApiKey } : {}),
          timeoutMs: config.knowledgeRerankerTimeoutMs,
        }));
  const thesaurus = config.knowledgeThesaurus === 'wordnet' ? new WordNetThesaurus() : undefined;
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'svc_knowledge_' });
  // prom-client's `*_active_*_total` gauges fail `promtool check metrics` (a gauge named _total) and
  // repeat the sum of their per-type gauges (`sum(svc_knowledge_nodejs_active_handles)`): dropped.
  for (const kind of ['handles', 'requests', 'resources'])
    registry.removeSingleMetric(`svc_knowledge_nodejs_active_${kind}_total`);
  const metrics = new KnowledgeMetrics(registry);
  const services = createKnowledgeServices(
    store.db,
    {
      telemetry: metrics,
      dedupDefault: config.knowledgeDedupDefault,
      ...(thesaurus ? { thesaurus } : {}),
      ...(embedder ? { embedder } : {}),
      ...(reranker ? { reranker } : {}),
      ...(extras.now ? { now: extras.now } : {}),
    },
    {
      webhooks: new GuardedWebhookClient({ allowPrivate: config.knowledgeAllowPrivateTargets }),
      worker: { webhookUrl: config.knowledgeReviewWebhookUrl, webhookSecret: config.knowledgeReviewWebhookSecret },
      acquisitionConnectors: config.knowledgeAcquisitionConnectors.map((c) => ({
        id: c.id,
        url: c.url,
        token: config.knowledgeAcquisitionConnectorTokens?.[c.id],
        timeoutMs: config.knowledgeAcquisitionConnectorTimeoutMs,
      })),
      ...(config.knowledgeExtractorUrl !== undefined
        ? {
            extractor: new HttpExtractor({
              url: config.knowledgeExtractorUrl,
              model: config.knowledgeExtractorModel,
              apiKey: config.knowledgeExtractorApiKey,
              timeoutMs: config.knowledgeExtractorTimeoutMs,
            }),
          }
        : {}),
    },
  );
  // Derive every namespace's review queue once now, so no request pays for the full derivation.
  const warmStarted = performance.now();
  const warmed = services.review.warm(services.core.now());
  if (warmed > 0)
    log.info({ namespaces: warmed, ms: Math.round(performance.now() - warmStarted) }, 'review indexes warmed');
  metrics.watchReviewQueue(
    () => services.review.pendingTotal(services.core.now()),
    (err) => log.warn({ err }, 'review queue size could not be read for /metrics'),
  );
  const sqlite = sqliteVersion(store.db);
  const introspection = {
    version: buildInfo().version,
    migrations: () => appliedMigrations(store.db),
    vectorVersion: store.vecVersion,
    sqliteVersion: sqlite,
    thesaurus: thesaurus?.name,
    extractor: services.ingest.extractor,
  };
  const stats = (tenant: string): KnowledgeStats => ({
    ...originStats(metrics.totals()),
    uptime_seconds: Math.round(process.uptime()),
    ...services.core.nodes.counts(tenant),
    vectors_indexed: services.core.index.sizes(),
    embedder: embedder ? { kind: 'openai-compatible', model: embedder.model } : { kind: 'none' },
    reranker: reranker ? { kind: 'http', model: reranker.model ?? null } : { kind: 'none' },
    extractor: services.ingest.extractor,
  });
  // Rows changed underneath the services (restore, lifecycle, doctor cleanup): derived state is rebuilt.
  const afterRestore = () => {
    services.core.reloadDerived();
    services.review.forget();
  };
  const lifecycle = new LifecycleService(
    services.core,
    {
      retention: config.knowledgeRetention,
      compactionHorizonMs: config.knowledgeCompactionHorizonMs,
      intervalMs: config.knowledgeLifecycleIntervalMs,
      vacuumIntervalMs: config.knowledgeVacuumIntervalMs,
    },
    () => services.review.forget(),
  );
  const maintenance: MaintenanceServices = {
    core: services.core,
    backups: new BackupService(services.core, {
      dir: config.knowledgeBackupDir,
      storeFile: store.file,
      afterRestore,
    }),
    lifecycle,
    doctor: new DoctorSampleWrite(services.core, services, () => services.review.forget()),
    evalRuns: new RankingEvalSnapshots(store.db, introspection.version, () => services.core.now()),
  };
  const meta = knowledgeMetaRoutes({ ...introspection, stats });
  const apiRouters = [
    meta,
    openApiRoutes(KNOWLEDGE_OPENAPI_PATH, PUBLISHED_OPENAPI.knowledgeStore),
    namespaceRoutes(services, metrics),
    reviewRoutes(services),
    acquisitionRoutes(services, metrics),
    graphqlRoutes(services, introspection, metrics),
  ];
  const app = createKnowledgeApp({
    logger: log,
    bodyLimitBytes: config.bodyLimitBytes,
    // Reads keep the write groups short (docs/adr/0210); noted before authentication, as they wait alike.
    before: [
      readSignal(() => services.core.commits.noteRead()),
      authenticate(tokens, { openPaths: ['/v1/ping', KNOWLEDGE_OPENAPI_PATH] }),
    ],
    routers: apiRouters,
  });
  const adminRouters = [
    adminHealthRoutes({ registry, healthy: () => store.db.prepare('SELECT 1 AS ok').get() !== undefined }),
    adminApiRoutes(services, { stats, totals: () => metrics.totals(), version: introspection.version }),
    maintenanceRoutes(maintenance),
    profilingRoutes(),
  ];
  const admin = createAdminApp({
    logger: log,
    bodyLimitBytes: config.bodyLimitBytes,
    before: [authenticate(tokens, { protectedPrefixes: ['/admin/', '/debug/'] })],
    routers: adminRouters,
    webRoot: builtWebPage('knowledge-admin'),
  });
  // Plain single writes are answered before Koa (docs/adr/0215); every other request goes to the app.
  const writeFastPath = knowledgeWriteFastPath({
    services,
    metrics,
    tokens,
    logger: log,
    bodyLimitBytes: config.bodyLimitBytes,
  });
  const rest = await listen(app, config.knowledgePort, config.host, {
    ...handleOf(extras.listener),
    intercept: writeFastPath,
  });
  let adminServer: RunningServer;
  try {
    adminServer = await listen(admin, config.knowledgeAdminPort, config.host, handleOf(extras.adminListener));
  } catch (error) {
    await rest.close();
    store.db.close();
    throw error;
  }
  const swept = maintenance.backups.sweep();
  if (swept.length > 0) log.warn({ files: swept }, 'removed what an interrupted knowledge backup or restore left');
  lifecycle.start((err) => log.warn({ err }, 'knowledge lifecycle run failed'));
  log.info(
    {
      url: rest.url,
      adminUrl: adminServer.url,
      vec: store.vecVersion,
      tokens: tokens.count,
      embedder: embedder ? 'openai-compatible' : 'none',
    },
    'knowledge store listening',
  );
  return {
    url: rest.url,
    adminUrl: adminServer.url,
    servers: [rest, adminServer],
    services,
    maintenance,
    routers: { api: apiRouters, admin: adminRouters },
    async close() {
      lifecycle.stop();
      await Promise.all([rest.close(), adminServer.close()]);
      await services.core.commits.close();
      thesaurus?.close();
      store.db.close();
    },
  };
}
