/**
 * The operator service: reads the control plane's state for the read-only operator views and
 * platform rollups, and hands it to the pure shaping in `domain/operator`. It never writes, and
 * it holds no secret value (see `OperatorSettings`).
 */
import fs from 'node:fs';
import { NotFoundError } from '../../domain/errors.js';
import type { Operation } from '../../domain/operations/index.js';
import {
  actionCatalog,
  authHints,
  buildInbox,
  evaluateReadiness,
  filterActions,
  platformReleaseHistory,
  rollupPlatform,
  type ActionDescriptor,
  type ActionRisk,
  type ActionSchemas,
  type AppRisk,
  type AuthHints,
  type CronProcessView,
  type DeployConfidenceView,
  type Inbox,
  type IncidentFacts,
  type PlatformReleaseHistory,
  type PlatformStart,
  type ProductionReadiness,
  type SecretPlan,
  type SnapshotReadinessFacts,
} from '../../domain/operator/index.js';
import type { BuildInfo } from '../../platform/build-info.js';
import type { Db } from '../../store/database.js';
import { hasSpec, listApps } from '../../store/control/apps.js';
import type { ActiveGroup } from '../../store/control/events.js';
import { countOperations, listOperations } from '../../store/control/operations/operations.js';
import {
  platformOperations,
  platformReleaseGroups,
  recentPlatformStarts,
} from '../../store/control/platform-releases.js';
import { getPlatformUpgrade, listLaneSteps, listPlatformBuilds } from '../../store/control/platform-lane.js';
import type { SchedulerTargets } from '../apps/scheduler-targets.js';
import { readCronProcesses } from './cron-process-reader.js';
import { readDeployConfidence } from './deploy-confidence-reader.js';
import type { OperatorSettings } from './operator-settings.js';
import { readSecretPlan } from './secret-plan-reader.js';

/** How many recent operations the inbox reads to find active and standing failed ones. */
const RECENT_OPERATIONS = 500;

/** Everything the operator views read. */
export interface OperatorServiceOptions {
  readonly db: Db;
  readonly settings: OperatorSettings;
  readonly targets: SchedulerTargets;
  /** The event services' active view. */
  readonly incidents: { active(): readonly ActiveGroup[] };
  readonly notificationChannels: () => number;
  readonly snapshots: { readiness(): { readonly apps: readonly SnapshotReadinessFacts[] } };
  readonly routing: {
    wakeTargets(controlUrl: string): Promise<{ readonly targets: readonly { readonly readiness: string }[] }>;
    state(): { readonly lastError: string | undefined };
  };
  /** The operation worker's drain state. */
  readonly drain: () => unknown;
  readonly build: BuildInfo;
  /** The record of this start. */
  readonly start: PlatformStart;
  readonly controlUrl: () => string;
  /** Every advertised route with whether it is public. */
  readonly routes: () => readonly { readonly route: string; readonly public: boolean }[];
  /** Routes that need a caller only with SVC_REQUIRE_EXPLICIT_AUTH=true. */
  readonly explicitOnlyRoutes: readonly string[];
  readonly actionSchemas: ActionSchemas;
  /** @default Date.now */
  readonly now?: () => number;
}

/** The operator views. */
export class OperatorService {
  readonly #now: () => number;

  constructor(private readonly options: OperatorServiceOptions) {
    this.#now = options.now ?? Date.now;
  }

  #requireApp(app: string | undefined): void {
    if (app === undefined) return;
    if (!listApps(this.options.db).some((row) => row.name === app && row.deletedAt === null)) {
      throw new NotFoundError(`app "${app}" is not discovered`, { code: 'app_not_found', details: { app } });
    }
  }

  #recentOperations(): Operation[] {
    const total = Object.values(countOperations(this.options.db)).reduce((n, c) => n + c, 0);
    return listOperations(this.options.db, {
      limit: RECENT_OPERATIONS,
      offset: Math.max(0, total - RECENT_OPERATIONS),
    });
  }

  #activeIncidentKeys(): Map<string, number> {
    const keys = new Map<string, number>();
    for (const group of this.options.incidents.active())
      keys.set(group.correlationKey, (keys.get(group.correlationKey) ?? 0) + 1);
    return keys;
  }

  /** Scheduled processes with schedule, zone, next and last run, parents, children and actions. */
  async cron(query: { readonly app?: string } = {}): Promise<{ processes: CronProcessView[] }> {
    this.#requireApp(query.app);
    const processes = await readCronProcesses(
      {
        db: this.options.db,
        targets: this.options.targets,
        activeIncidentKeys: () => this.#activeIncidentKeys(),
        now: this.#now,
      },
      query,
    );
    return { processes };
  }

  /** Per app: recent deployments, last status, source evidence, canaries, auto-rollback, confidence. */
  async deployConfidence(query: {
    readonly app?: string;
    readonly limit: number;
  }): Promise<{ apps: DeployConfidenceView[] }> {
    this.#requireApp(query.app);
    return {
      apps: await readDeployConfidence(
        { db: this.options.db, targets: this.options.targets, appsDir: this.options.settings.appsDir },
        query,
      ),
    };
  }

  /** Keys, locations, declared and protection status and the next action; never values. */
  secretsPlan(query: { readonly app?: string } = {}): SecretPlan {
    this.#requireApp(query.app);
    return readSecretPlan(
      {
        db: this.options.db,
        dataDir: this.options.settings.dataDir,
        platformSecrets: this.options.settings.platformSecrets,
      },
      query,
    );
  }

  /** What needs attention now. */
  async inbox(query: {
    readonly app?: string;
    readonly limit: number;
  }): Promise<Inbox & { generatedAt: string; app: string | null }> {
    this.#requireApp(query.app);
    const app = query.app;
    const ofApp = <T extends { readonly app: string | null }>(items: readonly T[]) =>
      app === undefined ? [...items] : items.filter((i) => i.app === app);
    const incidents: IncidentFacts[] = ofApp(this.options.incidents.active()).map((g) => ({
      source: g.source,
      app: g.app,
      environment: g.environment,
      correlationKey: g.correlationKey,
      severity: g.severity,
      eventCount: g.eventCount,
      firstSeen: g.firstSeen,
      lastSeen: g.lastSeen,
      representative: {
        id: g.representative.id,
        type: g.representative.type,
        title: g.representative.title,
        state: g.representative.state,
        occurredAt: g.representative.occurredAt,
      },
    }));
    const urgent = (risk: { readonly severity: string }) => risk.severity !== 'info';
    const deployRisks: AppRisk[] = (await this.deployConfidence({ ...(app ? { app } : {}), limit: 5 })).apps.flatMap(
      (v) => v.reasons.filter(urgent).map((r) => ({ ...r, app: v.app })),
    );
    const cronRisks: AppRisk[] = (await this.cron(app ? { app } : {})).processes.flatMap((v) =>
      v.risks.filter(urgent).map((r) => ({ ...r, app: v.app, process: v.process })),
    );
    const wake = await this.options.routing.wakeTargets(this.options.controlUrl());
    const inbox = buildInbox(
      {
        incidents,
        operations: ofApp(this.#recentOperations()),
        deployRisks,
        cronRisks,
        snapshots: ofApp(this.options.snapshots.readiness().apps),
        secrets: this.secretsPlan(app ? { app } : {}).summary,
        wakeTargets:
          app === undefined
            ? wake.targets
            : (wake.targets as readonly { readiness: string; app?: string }[]).filter((t) => t.app === app),
      },
      query.limit,
    );
    return { generatedAt: new Date(this.#now()).toISOString(), app: app ?? null, ...inbox };
  }

  /** How callers authenticate, which routes are public; no secret values. */
  authHints(): AuthHints {
    const s = this.options.settings;
    const routes = this.options.routes();
    return authHints({
      profile: s.profile,
      apiTokenConfigured: s.apiTokenConfigured,
      requireExplicitAuth: s.requireExplicitAuth,
      webhookSecretConfigured: s.webhookSecretConfigured,
      logpushTokenConfigured: s.logpushTokenConfigured,
      scopedTokensServed: routes.some((r) => r.route === 'POST /api/access/tokens'),
      edgeIdentityConfigured: s.edgeIdentityConfigured,
      routes,
      explicitOnlyRoutes: this.options.explicitOnlyRoutes,
    });
  }

  /** Action descriptors, optionally filtered. */
  actions(query: { readonly risk?: ActionRisk; readonly mobileReady?: boolean } = {}): { actions: ActionDescriptor[] } {
    return { actions: filterActions(actionCatalog(this.options.actionSchemas), query) };
  }

  /** The platform rollup. */
  platform() {
    const apps = listApps(this.options.db).map((row) => {
      const spec = row.spec;
      return {
        name: row.name,
        valid: row.generation !== null && spec !== null,
        deploy: spec?.deploy ?? false,
        released: row.release !== null,
        deleted: row.deletedAt !== null,
      };
    });
    return rollupPlatform({
      build: {
        name: this.options.build.name,
        version: this.options.build.version,
        label: this.options.build.label,
        commit: this.options.build.commit,
        node: this.options.build.node,
      },
      profile: this.options.settings.profile,
      environment: this.options.settings.environment,
      startedAt: this.options.start.startedAt,
      apps,
      operations: countOperations(this.options.db),
      drain: this.options.drain(),
      activeIncidents: this.options.incidents.active().length,
      snapshots: this.options.snapshots.readiness().apps,
    });
  }

  /** The production admission summary. */
  productionReadiness(): ProductionReadiness {
    const s = this.options.settings;
    const specs = listApps(this.options.db)
      .filter(hasSpec)
      .filter((row) => row.deletedAt === null)
      .map((row) => ({ name: row.name, spec: row.spec }));
    const snapshots = this.options.snapshots.readiness().apps as readonly (SnapshotReadinessFacts & {
      export?: { bucket: string | null };
      preRestore?: boolean;
    })[];
    const lastError = this.options.routing.state().lastError;
    return evaluateReadiness({
      profile: s.profile,
      apiTokenConfigured: s.apiTokenConfigured,
      requireExplicitAuth: s.requireExplicitAuth,
      tunnel: {
        configFile: s.tunnelConfigFile,
        configWritten: fs.existsSync(s.tunnelConfigFile),
        credentialsFile: s.tunnelCredentialsFile,
        // Existence only: the credentials file is never opened.
        credentialsPresent: fs.existsSync(s.tunnelCredentialsFile),
        lastError: lastError ?? null,
      },
      webhookSecretConfigured: s.webhookSecretConfigured,
      autoDeployApps: specs.filter((a) => a.spec.repo?.autoDeploy === true).map((a) => a.name),
      databases: snapshots.map((d) => ({
        app: d.app,
        database: d.database,
        snapshots: d.snapshots,
        keep: d.keep,
        exportBucket: d.export?.bucket ?? null,
        preRestore: d.preRestore ?? false,
      })),
      objectStorageConfigured: s.objectStorageConfigured,
      postgresPasswordFileConfigured: s.postgresPasswordFileConfigured,
      eventSinkConfigured: s.eventSinkConfigured,
      notificationChannels: this.options.notificationChannels(),
      unpinnedApps: specs
        .filter((a) => a.spec.deploy && !/@sha256:[0-9a-f]{64}$/.test(a.spec.build.image ?? ''))
        .map((a) => a.name),
      operationWorkerEnabled: s.operationWorkerEnabled,
      secretSummary: this.secretsPlan().summary,
    });
  }

  /** The platform builds seen and the platform lane operations. */
  platformReleases(query: { readonly limit: number }): PlatformReleaseHistory {
    return platformReleaseHistory({
      current: this.options.start,
      groups: platformReleaseGroups(this.options.db, query.limit),
      recentStarts: recentPlatformStarts(this.options.db, query.limit),
      operations: platformOperations(this.options.db, query.limit),
      builds: listPlatformBuilds(this.options.db, query.limit),
      runningRelease: this.options.build.release ?? null,
      lane: (id) => ({
        upgrade: getPlatformUpgrade(this.options.db, id) ?? null,
        steps: listLaneSteps(this.options.db, id),
      }),
    });
  }
}
