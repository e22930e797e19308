/**
 * Composition root of the knowledge store: opens `knowledge.db`, wires services, listens on the REST
 * and admin ports.
 */
import { Registry, collectDefaultMetrics } from 'prom-client';
import type { SvcConfig } from '../../platform/config.js';
import type { Logger } from '../../platform/logger.js';
import { buildInfo } from '../../platform/build-info.js';
import { openKnowledgeStore } from '../../store/open-stores.js';
import { appliedMigrations } from '../../store/migrate.js';
import { sqliteVersion } from '../../store/database.js';
import { listen, type RunningServer } from '../http/listen.js';
import { createKnowledgeApp } from './knowledge-app.js';
import { createAdminApp } from './admin-app.js';
import { knowledgeMetaRoutes } from './meta-routes.js';

/** A running knowledge store. */
export interface KnowledgeStore {
  readonly url: string;
  readonly adminUrl: string;
  readonly servers: readonly RunningServer[];
  close(): Promise<void>;
}

/** Starts the knowledge store on `config.knowledgePort` and `config.knowledgeAdminPort`. */
export async function startKnowledgeStore(config: SvcConfig, logger: Logger): Promise<KnowledgeStore> {
  const log = logger.child({ service: 'knowledge' });
  const store = openKnowledgeStore(config.dataDir);
  if (config.knowledgeTokens === undefined) {
    log.warn('SVC_KNOWLEDGE_TOKENS is not set: the knowledge store accepts every request without authentication');
  }
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'svc_knowledge_' });
  const sqlite = sqliteVersion(store.db);
  const meta = knowledgeMetaRoutes({
    version: buildInfo().version,
    migrations: () => appliedMigrations(store.db),
    vectorVersion: store.vecVersion,
    sqliteVersion: sqlite,
    stats: () => ({ uptime_seconds: Math.round(process.uptime()) }),
  });
  const app = createKnowledgeApp({ logger: log, bodyLimitBytes: config.bodyLimitBytes, routers: [meta] });
  const admin = createAdminApp({
    logger: log,
    registry,
    bodyLimitBytes: config.bodyLimitBytes,
    healthy: () => store.db.prepare('SELECT 1 AS ok').get() !== undefined,
  });
  const rest = await listen(app, config.knowledgePort, config.host);
  let adminServer: RunningServer;
  try {
    adminServer = await listen(admin, config.knowledgeAdminPort, config.host);
  } catch (error) {
    await rest.close();
    store.db.close();
    throw error;
  }
  log.info({ url: rest.url, adminUrl: adminServer.url, vec: store.vecVersion }, 'knowledge store listening');
  return {
    url: rest.url,
    adminUrl: adminServer.url,
    servers: [rest, adminServer],
    async close() {
      await Promise.all([rest.close(), adminServer.close()]);
      store.db.close();
    },
  };
}
