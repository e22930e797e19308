/**
 * Composition root of the control plane: opens its store, wires services into routers and listens.
 */
import type Router from '@koa/router';
import type { SvcConfig } from '../platform/config.js';
import type { Logger } from '../platform/logger.js';
import { buildInfo } from '../platform/build-info.js';
import { builtWebPage } from '../platform/web-pages.js';
import { openControlStore } from '../store/open-stores.js';
import type { Db } from '../store/database.js';
import { listen, type RunningServer } from '../api/http/listen.js';
import { createControlApp } from '../api/control/server/control-app.js';
import { eventIngestFastPath } from '../api/control/events/ingest-fast-path.js';
import { auditRoutes } from '../api/control/audit/audit-routes.js';
import { receiptMiddleware } from '../api/control/audit/receipt-middleware.js';
import { startAuditReceipts } from './control/audit.js';
import { startS3ProxyFor, type S3ProxyWiring } from './control/s3-proxy.js';
import { metaRoutes } from '../api/control/server/meta-routes.js';
import { validateRoutes } from '../api/control/apps/validate-routes.js';
import { schemaRoutes } from '../api/control/apps/schema-routes.js';
import { CONTROL_OPENAPI_PATH, PUBLISHED_OPENAPI, openApiRoutes } from '../api/openapi/openapi-routes.js';
import { appsRoutes } from '../api/control/apps/apps-routes.js';
import { schedulerDriverOf, startReconcilers, type Reconcilers } from './control/reconcilers.js';
import type { EventEmitterPort } from '../domain/events/event-port.js';
import type { ControlMetrics } from '../platform/metrics/control-metrics.js';
import type { EventServices } from './control/event-services.js';
import { startEventApi } from './control/event-api.js';
import type { Deploys } from '../controllers/pipeline/index.js';
import { startDeploys } from './control/deploys.js';
import { startContainers, type ContainerWiring } from './control/containers.js';
import type { AppRetirement } from '../controllers/apps/app-retirement.js';
import { deployRouters } from '../api/control/operations/deploy-api.js';
import { GatewayScale } from '../controllers/routing/gateway-scale.js';
import type { Autoscaler } from '../controllers/scaling/autoscaler.js';
import type { SignalSampler } from '../controllers/scaling/signal-sampler.js';
import { startAutoscaling } from './control/autoscaling.js';
import { routingSettingsOf, startRouting, type Routing } from './control/routing.js';
import { routingRoutes } from '../api/control/routing/routing-routes.js';
import { accessRoutes } from '../api/control/routing/access-routes.js';
import { operatorWakeTargetsRoutes } from '../api/control/operator/operator-wake-targets-routes.js';
import { createWakeGatewayProxy } from '../api/control/routing/wake-gateway-proxy.js';
import { scopedTokensRoutes } from '../api/control/auth/scoped-tokens-routes.js';
import { admissionNoStore, admissionRoutes } from '../api/control/fleet/admission-routes.js';
import { edgeIdentityOf } from './control/edge-identity.js';
import { openAppLogs } from './control/app-logs.js';
import { logsRoutes } from '../api/control/logs/logs-routes.js';
import { ScopedTokens } from '../controllers/auth/scoped-tokens.js';
import { wireSnapshots } from './control/snapshots.js';
import type { ManagedPostgres } from '../platform/postgres/managed-postgres.js';
import { appDatabasesOn, startAppDatabaseServer } from './control/app-database-server.js';
import { appInfrastructure } from './control/app-infrastructure.js';
import { secureDataFolder } from '../platform/files/secure-data-folder.js';
import { resolveHostedFolder } from '../platform/files/hosted-folder.js';
import { detectAppIdentities } from '../platform/local-scheduler/index.js';
import { startAppRetirement } from './control/app-retirement.js';
import { snapshotMutationRoutes, snapshotReadRoutes } from '../api/control/operations/snapshots-routes.js';
import { CronService } from '../controllers/cron/cron-service.js';
import { cronRoutes } from '../api/control/jobs/cron-routes.js';
import { observabilityRoutes } from '../api/control/observability/observability-routes.js';
import { startObservability } from './control/observability.js';
import { RecentAccessRing } from '../domain/observability/recent-access.js';
import { FunctionService } from '../controllers/functions/index.js';
import { functionsRoutes } from '../api/control/jobs/functions-routes.js';
import {
  OPERATOR_ACTION_SCHEMAS,
  EXPLICIT_AUTH_ONLY_ROUTES,
  advertisedRoutes,
  operatorRoutes,
} from '../api/control/operator/operator-routes.js';
import {
  OperatorService,
  operatorSettingsFrom,
  recordPlatformRelease,
  secretValuesOf,
} from '../controllers/operator/index.js';
import { platformLaneRoutes } from '../api/control/operations/platform-lane-routes.js';
import { wirePlatformLane } from './control/platform-lane.js';
import { idempotency } from '../api/http/idempotency.js';
import { execPortOf, startExec } from './control/exec.js';
import { startPlatformBackups } from './control/platform-backups.js';
import { platformBackupRoutes } from '../api/control/operations/platform-backup-routes.js';
import { CONTROL_CAPABILITIES } from './control/control-capabilities.js';

/** A running control plane. */
export interface ControlPlane {
  readonly url: string;
  readonly server: RunningServer;
  readonly reconcilers: Reconcilers;
  /** control.db, for in-process services and tests. */
  readonly db: Db;
  /** The event services's emitter: every part of the control plane reports events through it. */
  readonly events: EventEmitterPort;
  /** The event services (service, channels, dispatcher, watchers). */
  readonly eventServices: EventServices;
  /** The control plane's metric registry (`GET /metrics`). */
  readonly metrics: ControlMetrics;
  /** Durable operations, the deploy pipeline and the push webhooks. */
  readonly deploys: Deploys;
  /** Routing: tunnel config, wake gateway, access observations; `routeApp(app)` is the deploy pipeline's routing step (`forge` in the spec). */
  readonly routing: Routing;
  /** The autoscaler of processes with `scaling.auto` (ADR 0193). */
  readonly autoscaler: Autoscaler;
  /** Samples of the tuning signals (taken on the autoscaler's period). */
  readonly signals: SignalSampler;
  /** The managed PostgreSQL server of app databases; undefined with an external server. */
  readonly managedPostgres: ManagedPostgres | undefined;
  /** The S3 proxy apps reach object storage through (`SVC_S3_PROXY_PORT`, ADR 0188). */
  readonly s3Proxy: S3ProxyWiring | undefined;
  /** The retirement of deleted apps (local driver only): their users, files, containers and images. */
  readonly retirement: AppRetirement | undefined;
  /** The routers the API serves, in order: the OpenAPI document describes exactly their routes. */
  readonly routers: readonly Router[];
  /** Stops everything; `restart`: the host agent restarts this API, so the managed PostgreSQL server keeps running for the next API to adopt. */
  close(options?: { restart?: boolean }): Promise<void>;
}

/** Options of {@link startControlPlane}. */
export interface ControlPlaneOptions {
  /** A listening socket to serve instead of binding `config.port` (handed over by the host agent, ADR 0159). */
  readonly listener?: object;
}

/** Starts the control plane on `config.port` (0 picks a free port). */
export async function startControlPlane(
  config: SvcConfig,
  logger: Logger,
  options: ControlPlaneOptions = {},
): Promise<ControlPlane> {
  const log = logger.child({ service: 'control' });
  // Where other users (apps, PostgreSQL) reach their folders: the data folder, or a hosted folder of
  // its own when they cannot enter it (a checkout under /root; ADR 0157).
  const hosted = resolveHostedFolder(config.dataDir);
  if (hosted.separate)
    log.info({ hostedFolder: hosted.path, reason: hosted.reason }, 'app folders live in a hosted folder');
  // First, so a host without the server programs fails the start before anything else opens.
  const database = await startAppDatabaseServer(config, hosted.path, log);
  let store: ReturnType<typeof openControlStore>;
  try {
    store = openControlStore(config.dataDir);
  } catch (error) {
    await database.managed?.close();
    throw error;
  }
  // Apps run as their own users below this folder: nothing of the platform's may be readable to them.
  const tightened = secureDataFolder(config.dataDir);
  if (tightened.length > 0) log.info({ changed: tightened }, 'data folder permissions tightened');
  if (store.migrations.applied.length > 0) {
    log.info({ applied: store.migrations.applied.map((m) => `${m.version}-${m.name}`) }, 'control.db migrated');
  }
  if (store.migrations.ahead.length > 0) {
    // A rollback left the newer release's schema (spec "Versioning" 3): this release runs on it.
    log.warn(
      { ahead: store.migrations.ahead.map((m) => `${m.version}-${m.name}`) },
      'control.db has migrations of a newer release: running on its schema (a platform rollback does not undo schema changes)',
    );
  }
  const platformStart = recordPlatformRelease(store.db, buildInfo(), config.profile);
  if (config.apiToken === undefined) {
    log.warn('SVC_API_TOKEN is not set: the control plane API is open to anyone who can reach it (development only)');
  }
  const appLogs = openAppLogs(config, store.db, log);
  const logs = appLogs.service;
  const gatewayScale = new GatewayScale();
  // One assignment of app users for the scheduler and the app database credentials (ADR 0047).
  const identities = config.schedulerDriver === 'local' ? detectAppIdentities() : undefined;
  const credentialOwner =
    identities?.mode === 'app-users' ? (app: string) => identities.resolve(app, undefined)?.app : undefined;
  const appDatabases = appDatabasesOn(database, { db: store.db, owner: credentialOwner, logger: log });
  let s3Proxy: S3ProxyWiring | undefined;
  try {
    s3Proxy = await startS3ProxyFor(config, {
      db: store.db,
      hostedDir: hosted.path,
      ...(credentialOwner ? { owner: credentialOwner } : {}),
      logger: log,
    });
  } catch (error) {
    store.db.close();
    await database.managed?.close();
    throw error;
  }
  const infrastructure = appInfrastructure({ appDatabases, s3Proxy, identities });
  let containers: ContainerWiring;
  try {
    containers = await startContainers(config, config.dataDir, log);
  } catch (error) {
    await s3Proxy?.proxy.close();
    store.db.close();
    await database.managed?.close();
    throw error;
  }
  const reconcilers = await startReconcilers({
    db: store.db,
    ...(infrastructure ? { infrastructure } : {}),
    appsDir: config.appsDir,
    dataDir: hosted.path,
    logger: log,
    gatewayScale,
    logs,
    ...(identities ? { identities } : {}),
    scheduler: schedulerDriverOf(config),
    kafkaLagSource: config.kafkaExporterUrl !== undefined,
    ...(containers.runtime ? { containers: containers.runtime } : {}),
  });
  // A deleted app's user and files go after a grace period, unless its volumes hold data (ADR 0191).
  const retirement = startAppRetirement(config, {
    db: store.db,
    dataDir: hosted.path,
    identities,
    logger: log,
    ...(containers.images ? { removeImages: (app: string) => containers.removeApp(app) } : {}),
  });
  const routing = await startRouting({
    db: store.db,
    reconcilers,
    scale: gatewayScale,
    logger: log,
    ...routingSettingsOf(config),
  });
  const accessTokens = new ScopedTokens({ db: store.db });
  const scopedToken = (secret: string) => accessTokens.authenticate(secret);
  const edgeIdentity = edgeIdentityOf(config, log);
  const gatewayProxy = createWakeGatewayProxy({
    gateway: routing.gateway,
    access: routing.access,
    logger: log.child({ component: 'wake-gateway' }),
    apiToken: config.apiToken,
  });
  let controlUrl = '';
  const eventApi = await startEventApi(config, store.db, reconcilers, log);
  // The proxy counts refusals from its start; its families join the registry /metrics serves.
  for (const metric of s3Proxy?.proxy.metrics ?? []) eventApi.metrics.registry.registerMetric(metric);
  const autoscaling = startAutoscaling({
    config,
    db: store.db,
    reconcilers,
    routing,
    scale: gatewayScale,
    events: eventApi.services.events,
    logger: log,
  });
  const postgres = database.tools;
  const snapshotting = wireSnapshots(config, {
    db: store.db,
    postgres,
    events: eventApi.services.events,
    appDatabases,
  });
  const snapshots = snapshotting.service;
  const receipts = startAuditReceipts({
    profile: config.profile,
    dataDir: config.dataDir,
    hostedDir: hosted.path,
    db: store.db,
    logger: log,
  });
  const deploys = startDeploys({
    ...(receipts ? { receipts } : {}),
    ...snapshotting.deploySteps,
    db: store.db,
    appsDir: config.appsDir,
    dataDir: hosted.path,
    profile: config.profile,
    ...(config.sourceAllowedSigners !== undefined ? { allowedSignersFile: config.sourceAllowedSigners } : {}),
    reconcilers,
    logger: log,
    events: eventApi.services.events,
    webhookSecret: config.webhookSecret,
    workers: config.operationWorkers,
    leaseMs: config.operationLeaseMs,
    drainMode: config.drainMode,
    workerEnabled: config.operationWorkerEnabled,
    healthyTimeoutMs: config.deployHealthyTimeoutMs,
    testTimeoutMs: config.deployTestTimeoutMs,
    route: (app) => routing.routeApp(app),
    ...(containers.images ? { images: containers.images } : {}),
  });
  const recentAccess = new RecentAccessRing();
  const functions = new FunctionService({
    db: store.db,
    targets: reconcilers.targets,
    logger: log.child({ component: 'functions' }),
  });
  const routers: Router[] = [
    metaRoutes({
      build: buildInfo(),
      profile: config.profile,
      environment: config.environment,
      capabilities: () => CONTROL_CAPABILITIES,
      healthChecks: { database: () => store.db.prepare('SELECT 1 AS ok').get() !== undefined },
    }),
    validateRoutes({
      appsDir: config.appsDir,
      driver: config.schedulerDriver,
      kafkaLagSource: config.kafkaExporterUrl !== undefined,
    }),
    schemaRoutes(),
    openApiRoutes(CONTROL_OPENAPI_PATH, PUBLISHED_OPENAPI.controlPlane),
    appsRoutes({
      db: store.db,
      targets: reconcilers.targets,
      registry: reconcilers.registry,
      scaling: autoscaling.autoscaler,
    }),
    ...eventApi.routers,
    ...deployRouters(deploys, { protectInbox: config.apiToken !== undefined }),
    routingRoutes(routing),
    accessRoutes({ routing, logpushToken: config.edgeLogpushToken, bodyLimitBytes: config.bodyLimitBytes }),
    operatorWakeTargetsRoutes(routing, () => controlUrl),
    snapshotReadRoutes(snapshots),
    snapshotMutationRoutes(
      snapshots,
      snapshotting.operations(() => deploys.worker.wake()),
      deploys.idempotencyKeys,
    ),
    cronRoutes(
      new CronService({
        db: store.db,
        targets: reconcilers.targets,
        events: eventApi.services.events,
        enqueue: (app) => reconcilers.appController.enqueue(app),
      }),
      deploys.idempotencyKeys,
    ),
    functionsRoutes(functions, deploys.idempotencyKeys),
    observabilityRoutes(
      startObservability(config, {
        db: store.db,
        registry: reconcilers.registry,
        targets: reconcilers.targets,
        metrics: eventApi.metrics,
        controlUrl: () => controlUrl,
        logger: log,
        snapshotCounts: (apps) => snapshots.readiness(apps).apps,
        access: recentAccess,
        signals: autoscaling.signals,
      }),
      deploys.idempotencyKeys,
    ),
  ];
  routers.push(logsRoutes(logs));
  routers.push(auditRoutes(receipts));
  routers.push(scopedTokensRoutes(accessTokens));
  const execApi = startExec(config, {
    db: store.db,
    targets: reconcilers.targets,
    events: eventApi.services.events,
    logger: log,
    exec: await execPortOf(config),
  });
  routers.push(...execApi.routers);
  // External admission is served only in restricted mode with the bridge: here it has no verifier.
  routers.push(admissionRoutes(undefined));
  const platformLane = wirePlatformLane(config, store.db);
  routers.push(
    platformLaneRoutes(platformLane.service, idempotency({ keys: deploys.idempotencyKeys, required: false })),
  );
  const platformBackups = await startPlatformBackups(config, {
    db: store.db,
    postgres: database.managed
      ? { tools: postgres, credentialsDir: database.managed.layout.credentials }
      : { tools: postgres },
    events: eventApi.services.events,
    logger: log,
  });
  routers.push(platformBackupRoutes(platformBackups, idempotency({ keys: deploys.idempotencyKeys, required: false })));
  routers.push(
    operatorRoutes(
      new OperatorService({
        db: store.db,
        settings: operatorSettingsFrom(config),
        targets: reconcilers.targets,
        incidents: eventApi.services.events,
        notificationChannels: () => eventApi.services.notifications.list().length,
        snapshots,
        routing,
        drain: () => deploys.worker.drainState(),
        build: buildInfo(),
        start: platformStart,
        controlUrl: () => controlUrl,
        routes: () => advertisedRoutes(CONTROL_CAPABILITIES),
        explicitOnlyRoutes: EXPLICIT_AUTH_ONLY_ROUTES,
        actionSchemas: OPERATOR_ACTION_SCHEMAS,
      }),
      { secretValues: secretValuesOf(config) },
    ),
  );
  const app = createControlApp({
    logger: log,
    bodyLimitBytes: config.bodyLimitBytes,
    apiToken: config.apiToken,
    requireExplicitAuth: config.requireExplicitAuth,
    routers,
    beforeAuth: [admissionNoStore],
    ...(receipts ? { afterAuth: [receiptMiddleware(receipts)] } : {}),
    scopedToken,
    ...(edgeIdentity ? { edgeIdentity } : {}),
    webRoot: builtWebPage('console'),
    access: recentAccess,
  });
  let server: RunningServer;
  try {
    // The wake gateway sees requests first: a Host of a public endpoint never reaches the API.
    // Then the ingest fast path (ADR 0200): a plain `POST /api/events` skips Koa's chain.
    const ingest = eventIngestFastPath({
      events: eventApi.services.events,
      logger: log,
      bodyLimitBytes: config.bodyLimitBytes,
      apiToken: config.apiToken,
      requireExplicitAuth: config.requireExplicitAuth,
      scopedToken,
      access: recentAccess,
      ...(receipts ? { receipts } : {}),
    });
    server = await listen(app, config.port, config.host, {
      intercept: (req, res) => gatewayProxy.handleRequest(req, res) || (ingest?.(req, res) ?? false),
      ...(options.listener === undefined ? {} : { handle: options.listener }),
    });
  } catch (error) {
    // Everything started so far stops the same way a running plane does, so no timer or watcher
    // goes on against the closed database (a port in use, say).
    await closeAll(undefined);
    throw error;
  }
  // The wake gateway sees upgrades first too.
  server.onUpgrade((req, socket, head) => gatewayProxy.handleUpgrade(req, socket, head), { first: true });
  execApi.attach(server, scopedToken, edgeIdentity);
  controlUrl = server.url;
  routing.setGatewayUrl(server.url);
  platformLane.resumeQueuedWork();
  eventApi.attach(server, scopedToken, edgeIdentity);
  log.info({ url: server.url }, 'control plane listening');
  let closing: Promise<void> | undefined;
  return {
    url: server.url,
    server,
    reconcilers,
    db: store.db,
    events: eventApi.services.events,
    eventServices: eventApi.services,
    metrics: eventApi.metrics,
    deploys,
    routing,
    managedPostgres: database.managed,
    s3Proxy,
    retirement,
    autoscaler: autoscaling.autoscaler,
    routers,
    signals: autoscaling.signals,
    close(options = {}) {
      // Idempotent: a second call waits for the first.
      closing ??= closeAll(server, options.restart === true);
      return closing;
    },
  };
  async function closeAll(listening: RunningServer | undefined, restart = false): Promise<void> {
    // Watchers first: a check still running when control.db closes fails against the closed database.
    await eventApi.close();
    execApi.close();
    await listening?.close();
    await platformBackups.close();
    functions.close();
    gatewayProxy.close();
    await autoscaling.close();
    await routing.close();
    await deploys.close();
    snapshotting.s3?.destroy();
    await s3Proxy?.proxy.close();
    await eventApi.services.events.close();
    retirement?.close();
    await reconcilers.close();
    appLogs.close();
    store.db.close();
    // Last: operations and apps' reconciles that use it have stopped. Across a restart by the host
    // agent it keeps running: apps keep their connections, and the next API adopts it.
    if (restart) {
      database.managed?.release();
      containers.release();
    } else {
      await database.managed?.close();
      await containers.close();
    }
  }
}
