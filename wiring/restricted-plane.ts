/**
 * Composition root of restricted (authority-only) mode: a separate composition that starts only
 * the restricted route set (docs/restricted-mode.md). It opens control.db and the audit chain,
 * verifies the external PostgreSQL server over verified TLS, builds the workload token exchange,
 * the fleet authority and, when configured, the external-admission bridge, and listens. It never
 * builds the scheduler, registry, app discovery, deploy workers, snapshots, webhooks, watchers or
 * tunnel management: no timer or watcher of theirs exists in this process.
 */
import type Router from '@koa/router';
import type { SvcConfig } from '../platform/config.js';
import type { Logger } from '../platform/logger.js';
import { buildInfo } from '../platform/build-info.js';
import { openControlStore } from '../store/open-stores.js';
import type { Db } from '../store/database.js';
import { listen, type RunningServer } from '../api/http/listen.js';
import { createControlApp } from '../api/control/server/control-app.js';
import { metaRoutes, type Capability } from '../api/control/server/meta-routes.js';
import { refuseUnservedUpgrades } from '../api/control/server/unserved-upgrades.js';
import { validateRoutes } from '../api/control/apps/validate-routes.js';
import { ADMISSION_ROUTES, admissionNoStore, admissionRoutes } from '../api/control/fleet/admission-routes.js';
import { FLEET_AUTHORITY_ROUTES, fleetRoutes } from '../api/control/fleet/fleet-routes.js';
import { edgeIdentityOf } from './control/edge-identity.js';
import { PostgresTools } from '../platform/postgres/postgres-tools.js';
import type { RestrictedModeConfig } from '../platform/fleet/restricted-config.js';
import { HttpEvidenceService } from '../platform/outbound/evidence-client.js';
import { GitHostApiVerifier } from '../platform/fleet/git-host-verifier.js';
import { GitHostFleetRepository } from '../platform/fleet/git-host-fleet-repository.js';
import { OidcWorkflowIdentityVerifier } from '../platform/fleet/workflow-identity-verifier.js';
import { FleetAudit } from '../controllers/fleet/fleet-audit.js';
import { FleetAuthority } from '../controllers/fleet/fleet-authority.js';
import { WorkloadTokens } from '../controllers/fleet/workload-tokens.js';
import { AdmissionBridge } from '../controllers/fleet/admission-bridge.js';
import { UnavailableError } from '../domain/errors.js';

/** A running restricted-mode control plane. */
export interface RestrictedPlane {
  readonly url: string;
  readonly server: RunningServer;
  readonly db: Db;
  /** True when the external-admission bridge is configured (its six routes are advertised). */
  readonly bridge: boolean;
  close(): Promise<void>;
}

/** The restricted route set, advertised by `/api/v1/capabilities`; the six admission routes only with the bridge. */
export function restrictedCapabilities(bridge: boolean): Capability[] {
  return [
    {
      name: 'meta',
      routes: ['GET /api/health', 'GET /api/version', 'GET /api/v1/capabilities'],
      description: 'Health, version and capability discovery.',
    },
    {
      name: 'spec-validation',
      routes: ['POST /api/v1/validate/infraspec'],
      description: 'Validation of an infraspec (with an optional fleet document for node pool checks).',
    },
    {
      name: 'fleet-authority',
      routes: FLEET_AUTHORITY_ROUTES,
      description:
        'Fleet validation and inventory, capacity plans proposed as pull requests in the fleet repository, dispatch of the bound runner workflow, runner attempts (live only while unexpired), reconciliations, operation reads, administrator-only audit reads, device enrollment with administrator approval, and the workflow identity exchange.',
    },
    ...(bridge
      ? [
          {
            name: 'external-admission',
            routes: ADMISSION_ROUTES,
            description:
              'External admission (v4 receipts) through the evidence service: begin, admit, resume, reconcile, cleanup and the durable context.',
          },
        ]
      : []),
  ];
}

/**
 * Checks that the external PostgreSQL server answers over TLS verified against the configured CA
 * (libpq `verify-full`: chain and host name); throws otherwise, so the start stops.
 */
export async function verifyPostgresTls(config: SvcConfig): Promise<void> {
  const tools = new PostgresTools({
    host: config.postgresHost,
    port: config.postgresPort,
    user: config.postgresUser,
    ...(config.postgresPasswordFile === undefined ? {} : { passwordFile: config.postgresPasswordFile }),
    ...(config.postgresBinDir === undefined ? {} : { binDir: config.postgresBinDir }),
    ...(config.postgresSslMode === undefined ? {} : { sslMode: config.postgresSslMode }),
    ...(config.postgresSslRootCert === undefined ? {} : { sslRootCert: config.postgresSslRootCert }),
    timeoutMs: 15_000,
  });
  let answer: string;
  try {
    answer = (await tools.query('postgres', 'SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()')).trim();
  } catch (error) {
    throw new UnavailableError(
      `restricted mode needs the external PostgreSQL server over verified TLS (SVC_POSTGRES_SSLMODE=verify-full): ${(error as Error).message}`,
      { code: 'postgres_tls_unverified', cause: error },
    );
  }
  if (answer !== 't')
    throw new UnavailableError(
      'restricted mode needs the external PostgreSQL server over TLS, but the connection is not encrypted',
      { code: 'postgres_tls_unverified' },
    );
}

/** Starts restricted mode on `config.port` (0 picks a free port). */
export async function startRestrictedPlane(
  config: SvcConfig,
  restricted: RestrictedModeConfig,
  logger: Logger,
): Promise<RestrictedPlane> {
  const log = logger.child({ service: 'control', mode: 'restricted' });
  await verifyPostgresTls(config);
  const store = openControlStore(config.dataDir);
  try {
    const db = store.db;
    const audit = new FleetAudit({
      db,
      signingKey: restricted.auditSigningKey,
      retentionMs: restricted.auditRetentionMs,
    });
    const pruned = audit.prune();
    if (pruned > 0) log.info({ pruned }, 'audit entries past retention removed');
    const ca = restricted.caCertificates === undefined ? {} : { ca: restricted.caCertificates };
    const workloadTokens = new WorkloadTokens({
      db,
      verifier: new OidcWorkflowIdentityVerifier({
        issuer: restricted.oidc.issuer,
        jwksUrl: restricted.oidc.jwksUrl,
        audience: restricted.oidc.audience,
        ...ca,
      }),
      bindings: restricted.oidc.bindings,
      environment: restricted.environment,
      audit,
    });
    const repository = new GitHostFleetRepository({
      apiUrl: restricted.gitHostApiUrl,
      appId: restricted.gitHostApp.appId,
      installationId: restricted.gitHostApp.installationId,
      privateKeyFile: restricted.gitHostApp.privateKeyFile,
      repository: restricted.gitHostApp.repository,
      workflow: restricted.oidc.bindings.workflow,
      ref: restricted.oidc.bindings.ref,
      ...ca,
    });
    const authority = new FleetAuthority({ db, fleet: restricted.fleet, audit, repository });
    const b = restricted.bridge;
    const bridge =
      b === undefined
        ? undefined
        : new AdmissionBridge({
            db,
            settings: {
              environment: restricted.environment,
              app: b.app,
              namespace: b.namespace,
              migrationJobId: b.migrationJobId,
              migrationHclSha256: b.migrationHclSha256,
              runtimeJobId: b.runtimeJobId,
              runtimeHclSha256: b.runtimeHclSha256,
              repositoryIds: b.repositoryIds,
              catalog: b.catalog,
            },
            evidence: new HttpEvidenceService({
              origin: b.verifierUrl,
              allowedCidrs: b.evidenceAllowedCidrs,
              verifierToken: b.verifierToken,
              registrationToken: b.registrationToken,
              ...ca,
            }),
            gitHost: new GitHostApiVerifier({
              apiUrl: restricted.gitHostApiUrl,
              appId: b.verifierAppId,
              installationId: b.installationId,
              privateKeyFile: b.privateKeyFile,
              repositoryIds: b.repositoryIds,
              ...ca,
            }),
            audit,
            logger: log.child({ component: 'external-admission' }),
          });
    const capabilities = restrictedCapabilities(bridge !== undefined);
    const routers: Router[] = [
      metaRoutes({
        build: buildInfo(),
        profile: config.profile,
        environment: config.environment,
        mode: 'restricted',
        capabilities: () => capabilities,
        healthChecks: { database: () => db.prepare('SELECT 1 AS ok').get() !== undefined },
      }),
      validateRoutes({}),
      fleetRoutes({ authority, audit, workloadTokens }),
      admissionRoutes(bridge),
    ];
    const edgeIdentity = edgeIdentityOf(config, log);
    const app = createControlApp({
      logger: log,
      bodyLimitBytes: config.bodyLimitBytes,
      apiToken: config.apiToken,
      requireExplicitAuth: config.requireExplicitAuth,
      routers,
      beforeAuth: [admissionNoStore],
      // Only workload tokens: scoped access tokens are not issued in restricted mode.
      scopedToken: (secret) => workloadTokens.authenticate(secret),
      ...(edgeIdentity ? { edgeIdentity } : {}),
    });
    const server = await listen(app, config.port, config.host);
    server.onUpgrade(refuseUnservedUpgrades);
    log.info({ url: server.url, bridge: bridge !== undefined }, 'restricted control plane listening');
    let closing: Promise<void> | undefined;
    return {
      url: server.url,
      server,
      db,
      bridge: bridge !== undefined,
      close() {
        closing ??= (async () => {
          await server.close();
          db.close();
        })();
        return closing;
      },
    };
  } catch (error) {
    store.db.close();
    throw error;
  }
}
