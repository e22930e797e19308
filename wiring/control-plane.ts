/**
 * Composition root of the control plane: opens its store, wires services into routers and listens.
 */
import type Router from '@koa/router';
import type { SvcConfig } from '../platform/config.js';
import type { Logger } from '../platform/logger.js';
import { buildInfo, packageRoot, releaseFolder } from '../platform/build-info.js';
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
import { metaRoutes, type Capability } from '../api/control/server/meta-routes.js';
import { validateRoutes } from '../api/control/apps/validate-routes.js';
import { schemaRoutes } from '../api/control/apps/schema-routes.js';
import { appsRoutes } from '../api/control/apps/apps-routes.js';
import { startReconcilers, type Reconcilers } from './control/reconcilers.js';
import type { EventEmitterPort } from '../domain/events/event-port.js';
import type { ControlMetrics } from '../platform/metrics/control-metrics.js';
import type { EventServices } from './control/event-services.js';
import { EVENT_CAPABILITIES, startEventApi } from './control/event-api.js';
import type { Deploys } from '../controllers/pipeline/index.js';
import { startDeploys } from './control/deploys.js';
import { DEPLOY_CAPABILITIES, deployRouters } from '../api/control/operations/deploy-api.js';
import { GatewayScale } from '../controllers/routing/gateway-scale.js';
import type { Autoscaler } from '../controllers/scaling/autoscaler.js';
import { startAutoscaling } from './control/autoscaling.js';
import { startRouting, type Routing } from './control/routing.js';
import { ROUTING_CAPABILITIES, routingRoutes } from '../api/control/routing/routing-routes.js';
import { accessRoutes } from '../api/control/routing/access-routes.js';
import { operatorWakeTargetsRoutes } from '../api/control/operator/operator-wake-targets-routes.js';
import { createWakeGatewayProxy } from '../api/control/routing/wake-gateway-proxy.js';
import { scopedTokensRoutes } from '../api/control/auth/scoped-tokens-routes.js';
import { admissionNoStore, admissionRoutes } from '../api/control/fleet/admission-routes.js';
import { edgeIdentityPrincipal } from '../api/control/auth/auth.js';
import { edgeIdentityVerifier } from '../platform/edge/index.js';
import { getApp } from '../store/control/apps.js';
import { LogStore, logStoreFile } from '../store/logs/log-store.js';
import { LogService } from '../controllers/logs/log-service.js';
import { logsRoutes } from '../api/control/logs/logs-routes.js';
import { ScopedTokens } from '../controllers/auth/scoped-tokens.js';
import { SnapshotService } from '../controllers/snapshots/snapshot-service.js';
import {
  registerSnapshotHandlers,
  type SnapshotOperationsOptions,
} from '../controllers/snapshots/snapshot-operations.js';
import { PostgresTools } from '../platform/postgres/postgres-tools.js';
import { ManagedPostgres } from '../platform/postgres/managed-postgres.js';
import { AppCredentials } from '../platform/postgres/app-credentials.js';
import { secureDataFolder } from '../platform/files/secure-data-folder.js';
import { resolveHostedFolder } from '../platform/files/hosted-folder.js';
import { detectAppIdentities } from '../platform/local-scheduler/index.js';
import { AppRetirement } from '../controllers/apps/app-retirement.js';
import { AppDatabases } from '../controllers/postgres/app-databases.js';
import type { CanonicalAppSpec } from '../domain/spec/index.js';
import { SnapshotFolder } from '../platform/snapshots/snapshot-folder.js';
import { S3Snapshots } from '../platform/object-storage/s3-snapshots.js';
import { snapshotMutationRoutes, snapshotReadRoutes } from '../api/control/operations/snapshots-routes.js';
import { CronService } from '../controllers/cron/cron-service.js';
import { cronRoutes } from '../api/control/jobs/cron-routes.js';
import { OBSERVABILITY_CAPABILITY, observabilityRoutes } from '../api/control/observability/observability-routes.js';
import { startObservability } from './control/observability.js';
import { RecentAccessRing } from '../domain/observability/recent-access.js';
import { FunctionService } from '../controllers/functions/index.js';
import { FUNCTIONS_CAPABILITY, functionsRoutes } from '../api/control/jobs/functions-routes.js';
import {
  OPERATOR_ACTION_SCHEMAS,
  OPERATOR_CAPABILITIES,
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
import { PlatformLaneService } from '../controllers/platform/index.js';
import { PLATFORM_LANE_CAPABILITY, platformLaneRoutes } from '../api/control/operations/platform-lane-routes.js';
import { idempotency } from '../api/http/idempotency.js';
import { launchAgent } from '../platform/platform-lane/index.js';
import { listOperations } from '../store/control/operations/operations.js';
import { startExec } from './control/exec.js';
import { EXEC_CAPABILITY } from '../api/control/exec/exec-routes.js';
import { DEVICE_CAPABILITY } from '../api/control/exec/device-routes.js';
import { startPlatformBackups } from './control/platform-backups.js';
import { PLATFORM_BACKUP_CAPABILITY, platformBackupRoutes } from '../api/control/operations/platform-backup-routes.js';

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
  /** The managed PostgreSQL server of app databases; undefined with an external server. */
  readonly managedPostgres: ManagedPostgres | undefined;
  /** The S3 proxy apps reach object storage through (`SVC_S3_PROXY_PORT`, ADR 0188). */
  readonly s3Proxy: S3ProxyWiring | undefined;
  /** Stops everything; `restart`: the host agent restarts this API, so the managed PostgreSQL server keeps running for the next API to adopt. */
  close(options?: { restart?: boolean }): Promise<void>;
}

/** Capabilities this build serves; each later capability appends its own entry. */
export const CONTROL_CAPABILITIES: readonly Capability[] = [
  {
    name: 'meta',
    routes: ['GET /api/health', 'GET /api/version', 'GET /api/v1/capabilities'],
    description: 'Health, version and capability discovery.',
  },
  {
    name: 'apps',
    routes: [
      'GET /api/apps',
      'GET /api/apps/{id}',
      'GET /api/services/manifest',
      'GET /api/v1/services/manifest',
      'GET /api/resources/suggestions',
    ],
    description:
      'Discovered apps with conditions and runtime status, reconciled continuously against the local scheduler.',
  },
  {
    name: 'spec-validation',
    routes: ['GET /api/validate', 'POST /api/v1/validate/infraspec'],
    description: 'Validation of infraspec.yaml against its JSON Schema and semantic rules, with line and column.',
  },
  {
    name: 'spec-schemas',
    routes: [
      'GET /schemas/',
      'GET /schemas/infraspec.schema.json',
      'GET /schemas/deploy-group.schema.json',
      'GET /schemas/fleet.schema.json',
    ],
    description: 'The spec JSON Schemas at a stable public URL, for editor modelines in any folder.',
  },
  ...EVENT_CAPABILITIES,
  ...DEPLOY_CAPABILITIES,
  ...ROUTING_CAPABILITIES,
  {
    name: 'snapshots',
    routes: [
      'GET /api/v1/apps/{id}/snapshots',
      'POST /api/v1/apps/{id}/snapshots',
      'POST /api/v1/apps/{id}/snapshots/{filename}/restore',
      'GET /api/v1/apps/{id}/snapshots/retention',
      'POST /api/v1/apps/{id}/snapshots/retention',
      'POST /api/v1/apps/{id}/migrations',
      'POST /api/v1/apps/{id}/snapshots/export',
      'GET /api/v1/apps/{id}/snapshots/remote',
      'POST /api/v1/apps/{id}/snapshots/import',
      'POST /api/apps/{id}/snapshots/restore',
      'GET /api/operator/snapshot-readiness',
    ],
    description:
      'PostgreSQL snapshots of app-owned databases: durable snapshot, restore and migration operations, retention, S3 export and import.',
  },
  {
    name: 'access-tokens',
    routes: [
      'POST /api/access/tokens',
      'GET /api/access/tokens',
      'GET /api/access/tokens/{id}',
      'DELETE /api/access/tokens/{id}',
    ],
    description:
      'Scoped access tokens (events:read, metrics:read, logs:read): issued by an administrator, shown once, kept as SHA-256, revocable.',
  },
  {
    name: 'audit-receipts',
    routes: ['GET /api/v1/audit/receipts', 'GET /api/v1/audit/verify'],
    description:
      'Production profile: Ed25519-signed, hash-chained receipts reserved before every mutation; a mutation whose receipt cannot be written does not happen (ADR 0187).',
  },
  {
    name: 'cron',
    routes: [
      'POST /api/apps/{id}/cron/trigger',
      'POST /api/apps/{id}/cron/pause',
      'POST /api/apps/{id}/cron/resume',
      'PUT /api/apps/{id}/cron/schedule',
    ],
    description: 'Operator actions on periodic processes, each emitting its job.* event.',
  },
  {
    name: 'logs',
    routes: ['GET /api/v1/apps/{id}/logs'],
    description:
      "Every allocation's stdout and stderr, kept per app (size and age bounds): filters, text search, follow=true as Server-Sent Events (scope logs:read).",
  },
  FUNCTIONS_CAPABILITY,
  OBSERVABILITY_CAPABILITY,
  ...OPERATOR_CAPABILITIES,
  PLATFORM_LANE_CAPABILITY,
  EXEC_CAPABILITY,
  DEVICE_CAPABILITY,
  PLATFORM_BACKUP_CAPABILITY,
];

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
  const logStore = new LogStore({
    file: logStoreFile(config.dataDir),
    maxBytesPerApp: config.logsMaxBytesPerApp,
    maxAgeMs: config.logsMaxAgeMs,
  });
  const logs = new LogService({
    store: logStore,
    appExists: (app) => getApp(store.db, app) !== undefined,
    logger: log.child({ component: 'logs' }),
  });
  const gatewayScale = new GatewayScale();
  // One assignment of app users for the scheduler and the app database credentials (ADR 0047).
  const identities = config.schedulerDriver === 'local' ? detectAppIdentities() : undefined;
  const credentialOwner =
    identities?.mode === 'app-users' ? (app: string) => identities.resolve(app, undefined)?.app : undefined;
  const appDatabases = database.managed
    ? new AppDatabases({
        db: store.db,
        tools: database.tools,
        credentials: new AppCredentials(database.managed.layout.credentials, credentialOwner),
        host: database.managed.connection().host,
        port: database.managed.connection().port,
        logger: log.child({ component: 'app-databases' }),
      })
    : undefined;
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
  const reconcilers = await startReconcilers({
    db: store.db,
    ...(appDatabases || s3Proxy
      ? {
          // The credential files' owner is the app's user: made ready without blocking first (ADR 0190).
          infrastructure: async (app: string, spec: CanonicalAppSpec) => {
            const database = appDatabases !== undefined && spec.infrastructure?.postgres?.database !== undefined;
            const buckets = s3Proxy !== undefined && (spec.infrastructure?.objectStorage?.buckets?.length ?? 0) > 0;
            if (database || buckets) await identities?.prepare(app, undefined);
            return {
              ...(appDatabases ? await appDatabases.settingsFor(app, spec) : {}),
              ...(s3Proxy ? s3Proxy.settingsFor(app, spec) : {}),
            };
          },
        }
      : {}),
    appsDir: config.appsDir,
    dataDir: hosted.path,
    logger: log,
    gatewayScale,
    logs,
    ...(identities ? { identities } : {}),
    scheduler:
      config.schedulerDriver === 'kubernetes'
        ? {
            driver: 'kubernetes',
            ...(config.kubeconfig === undefined ? {} : { kubeconfig: config.kubeconfig }),
            namespace: config.kubernetesNamespace,
          }
        : { driver: 'local' },
  });
  // A deleted app's user and files go after a grace period, unless its volumes hold data (ADR 0191).
  const retirement =
    config.schedulerDriver === 'local'
      ? new AppRetirement({
          db: store.db,
          dataDir: hosted.path,
          graceMs: config.appRemovalGraceMs,
          ...(identities ? { identities } : {}),
          logger: log.child({ component: 'app-retirement' }),
        })
      : undefined;
  retirement?.start();
  const routing = await startRouting({
    db: store.db,
    reconcilers,
    scale: gatewayScale,
    logger: log,
    tunnel: {
      file: config.tunnelConfigFile,
      tunnel: config.tunnelName,
      credentialsFile: config.tunnelCredentialsFile,
      ...(config.tunnelReloadCommand === undefined ? {} : { reloadCommand: config.tunnelReloadCommand }),
      networking: config.tunnelNetworking,
      nodeIp: config.tunnelNodeIp,
    },
    idleMs: config.wakeIdleTimeoutMs,
    autoscaling: config.autoscaleIntervalMs > 0,
    edge: {
      api:
        config.edgeApiToken !== undefined && config.edgeZoneId !== undefined
          ? { apiUrl: config.edgeApiUrl, apiToken: config.edgeApiToken, zoneId: config.edgeZoneId }
          : undefined,
      lookbackMs: config.edgeLookbackMs,
      lookbackMaxMs: config.edgeLookbackMaxMs,
      intervalMs: config.edgeSyncIntervalMs,
    },
  });
  const accessTokens = new ScopedTokens({ db: store.db });
  const scopedToken = (secret: string) => accessTokens.authenticate(secret);
  const edgeIdentity =
    config.edgeAccessTeamDomain !== undefined && config.edgeAccessAud !== undefined
      ? edgeIdentityPrincipal(
          edgeIdentityVerifier({
            teamDomain: config.edgeAccessTeamDomain,
            audience: config.edgeAccessAud,
            ...(config.edgeAccessCertsUrl === undefined ? {} : { certsUrl: config.edgeAccessCertsUrl }),
            logger: log.child({ component: 'edge-access' }),
          }),
        )
      : undefined;
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
  const s3 =
    config.s3Endpoint !== undefined && config.s3AccessKey !== undefined && config.s3SecretKey !== undefined
      ? new S3Snapshots({
          endpoint: config.s3Endpoint,
          accessKey: config.s3AccessKey,
          secretKey: config.s3SecretKey,
          region: config.s3Region,
          forcePathStyle: config.s3ForcePathStyle,
        })
      : undefined;
  const snapshots = new SnapshotService({
    db: store.db,
    folder: new SnapshotFolder(config.snapshotsDir),
    postgres,
    ...(s3 ? { s3 } : {}),
    events: eventApi.services.events,
    ...(appDatabases ? { prepare: (app: string) => appDatabases.prepare(app) } : {}),
  });
  const snapshotOperations = (wake: () => void): SnapshotOperationsOptions => ({
    db: store.db,
    service: snapshots,
    appsDir: config.appsDir,
    dataDir: config.dataDir,
    wake,
  });
  const receipts = startAuditReceipts({
    profile: config.profile,
    dataDir: config.dataDir,
    hostedDir: hosted.path,
    db: store.db,
    logger: log,
  });
  const deploys = startDeploys({
    ...(receipts ? { receipts } : {}),
    snapshot: async (app, commit) => {
      const entry = await snapshots.take(app, 'predeploy', commit);
      return { message: `dumped ${entry.database} to ${entry.filename} (${entry.sizeBytes} bytes)` };
    },
    migrate: async (app, dir, commit) => {
      const { database: name } = snapshots.appDatabase(app);
      await appDatabases?.prepare(app);
      const run = await postgres.applyMigrations(name, dir);
      return {
        message: `${run.applied.length} migration(s) applied to ${name}${run.applied.length ? `: ${run.applied.join(', ')}` : ''}; ${run.alreadyApplied.length} already applied (at ${commit?.slice(0, 12) ?? 'HEAD'})`,
      };
    },
    register: (handlers, wake) => registerSnapshotHandlers(handlers, snapshotOperations(wake)),
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
    validateRoutes({ appsDir: config.appsDir, driver: config.schedulerDriver }),
    schemaRoutes(),
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
      snapshotOperations(() => deploys.worker.wake()),
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
  });
  routers.push(...execApi.routers);
  // External admission is served only in restricted mode with the bridge: here it has no verifier.
  routers.push(admissionRoutes(undefined));
  // The host agent runs the platform lane in its own process (ADR 0086); started when work is queued.
  const ensureAgent =
    config.agentMode === 'auto'
      ? () =>
          launchAgent({
            platformDir: config.platformDir,
            releaseDir: releaseFolder() ?? packageRoot(),
            dataDir: config.dataDir,
            cwd: process.cwd(),
            env: { ...process.env, SVC_DATA_DIR: config.dataDir, SVC_PLATFORM_DIR: config.platformDir },
          })
      : () => undefined;
  const platformLane = new PlatformLaneService(store.db, ensureAgent, {
    fetchHookConfigured: config.releaseFetchHook !== undefined,
  });
  routers.push(platformLaneRoutes(platformLane, idempotency({ keys: deploys.idempotencyKeys, required: false })));
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
  execApi.attach(server, scopedToken);
  controlUrl = server.url;
  routing.setGatewayUrl(server.url);
  // Lane work queued or interrupted before this start needs an agent.
  if (
    listOperations(store.db, { status: ['queued', 'running'], limit: 500 }).some((op) =>
      op.kind.startsWith('platform.'),
    )
  )
    ensureAgent();
  eventApi.attach(server, scopedToken);
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
    autoscaler: autoscaling.autoscaler,
    close(options = {}) {
      // Idempotent: a second call waits for the first.
      closing ??= closeAll(server, options.restart === true);
      return closing;
    },
  };
  async function closeAll(listening: RunningServer | undefined, restart = false): Promise<void> {
    eventApi.close();
    execApi.close();
    await listening?.close();
    await platformBackups.close();
    functions.close();
    gatewayProxy.close();
    await autoscaling.close();
    await routing.close();
    await deploys.close();
    s3?.destroy();
    await s3Proxy?.proxy.close();
    await eventApi.services.events.flushed();
    retirement?.close();
    await reconcilers.close();
    logs.close();
    logStore.close();
    store.db.close();
    // Last: operations and apps' reconciles that use it have stopped. Across a restart by the host
    // agent it keeps running: apps keep their connections, and the next API adopts it.
    if (restart) database.managed?.release();
    else await database.managed?.close();
  }
}

/** The PostgreSQL server of app databases: the managed one (started here), or the external one SVC_POSTGRES_* names. */
async function startAppDatabaseServer(
  config: SvcConfig,
  hostedDir: string,
  log: Logger,
): Promise<{ tools: PostgresTools; managed?: ManagedPostgres }> {
  if (!config.postgresManaged) {
    return {
      tools: new PostgresTools({
        host: config.postgresHost,
        port: config.postgresPort,
        user: config.postgresUser,
        ...(config.postgresPasswordFile === undefined ? {} : { passwordFile: config.postgresPasswordFile }),
        ...(config.postgresBinDir === undefined ? {} : { binDir: config.postgresBinDir }),
      }),
    };
  }
  const managed = await ManagedPostgres.open({
    dataDir: hostedDir,
    logger: log,
    ...(config.postgresBinDir === undefined ? {} : { binDir: config.postgresBinDir }),
  });
  const connection = managed.connection();
  return {
    managed,
    tools: new PostgresTools({
      host: connection.socketDir,
      port: connection.port,
      user: connection.user,
      passwordFile: connection.passwordFile,
      binDir: connection.binDir,
      asDatabaseOwner: true,
    }),
  };
}
