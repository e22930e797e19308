/**
 * Composition root of the control plane: opens its store, wires services into routers and listens.
 */
import type Router from '@koa/router';
import type { SvcConfig } from '../../platform/config.js';
import type { Logger } from '../../platform/logger.js';
import { buildInfo } from '../../platform/build-info.js';
import { openControlStore } from '../../store/open-stores.js';
import type { Db } from '../../store/database.js';
import { listen, type RunningServer } from '../http/listen.js';
import { createControlApp } from './control-app.js';
import { metaRoutes, type Capability } from './meta-routes.js';
import { validateRoutes } from './validate-routes.js';
import { appsRoutes } from './apps-routes.js';
import { startReconcilers, type Reconcilers } from '../../controllers/apps/start-reconcilers.js';

/** A running control plane. */
export interface ControlPlane {
  readonly url: string;
  readonly server: RunningServer;
  readonly reconcilers: Reconcilers;
  /** control.db, for in-process services and tests. */
  readonly db: Db;
  close(): Promise<void>;
}

/** Capabilities this build serves; each later capability appends its own entry. */
export const CONTROL_CAPABILITIES: readonly Capability[] = [
  { name: 'meta', routes: ['GET /api/health', 'GET /api/version', 'GET /api/v1/capabilities'], description: 'Health, version and capability discovery.' },
  { name: 'apps', routes: ['GET /api/apps', 'GET /api/apps/{id}', 'GET /api/services/manifest', 'GET /api/v1/services/manifest', 'GET /api/resources/suggestions'], description: 'Discovered apps with conditions and runtime status, reconciled continuously against the local scheduler.' },
  { name: 'spec-validation', routes: ['GET /api/validate', 'POST /api/v1/validate/infraspec'], description: 'Validation of infraspec.yaml against its JSON Schema and semantic rules, with line and column.' },
];

/** Starts the control plane on `config.port` (0 picks a free port). */
export async function startControlPlane(config: SvcConfig, logger: Logger): Promise<ControlPlane> {
  const log = logger.child({ service: 'control' });
  const store = openControlStore(config.dataDir);
  if (store.migrations.applied.length > 0) {
    log.info({ applied: store.migrations.applied.map((m) => `${m.version}-${m.name}`) }, 'control.db migrated');
  }
  if (config.apiToken === undefined) {
    log.warn('SVC_API_TOKEN is not set: the control plane API is open to anyone who can reach it (development only)');
  }
  const reconcilers = await startReconcilers({ db: store.db, appsDir: config.appsDir, dataDir: config.dataDir, logger: log });
  const routers: Router[] = [
    metaRoutes({
      build: buildInfo(),
      profile: config.profile,
      environment: config.environment,
      capabilities: () => CONTROL_CAPABILITIES,
      healthChecks: { database: () => store.db.prepare('SELECT 1 AS ok').get() !== undefined },
    }),
    validateRoutes({ appsDir: config.appsDir }),
    appsRoutes({ db: store.db, targets: reconcilers.targets, registry: reconcilers.registry }),
  ];
  const app = createControlApp({
    logger: log,
    bodyLimitBytes: config.bodyLimitBytes,
    apiToken: config.apiToken,
    requireExplicitAuth: config.requireExplicitAuth,
    routers,
  });
  let server: RunningServer;
  try {
    server = await listen(app, config.port, config.host);
  } catch (error) {
    await reconcilers.close();
    store.db.close();
    throw error;
  }
  log.info({ url: server.url }, 'control plane listening');
  return {
    url: server.url,
    server,
    reconcilers,
    db: store.db,
    async close() {
      await server.close();
      await reconcilers.close();
      store.db.close();
    },
  };
}
