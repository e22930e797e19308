/**
 * Observability: the generated scrape config and alert rules, the value-safe starter bundle, the
 * install of the managed observability apps, and advisory tuning recommendations.
 *
 * Everything generated reads the live state (app specs in control.db, registry instances, the
 * metrics the control plane exports) and is checked for secret values before it leaves.
 */
import path from 'node:path';
import { Summary } from 'prom-client';
import type { Logger } from '../../platform/logger.js';
import type { ControlMetrics } from '../../platform/metrics/control-metrics.js';
import { ConflictError, NotFoundError } from '../../domain/errors.js';
import type { Registry, ServiceInstance } from '../../domain/registry/index.js';
import { validateInfraspec, type Finding } from '../../domain/spec/index.js';
import {
  bundleFiles,
  findSecretLeaks,
  InstallAction,
  MANAGED_PORTS,
  MANAGED_SERVICE_NAMES,
  managedServices,
  ManagedServiceName,
  metricsDatasource,
  metricsProcesses,
  planManagedFolder,
  platformDashboard,
  recommendTuning,
  renderAlertRules,
  renderScrapeConfig,
  scrapeAddressing,
  scrapeTargetGroups,
  selectAlertRules,
  selectDashboardPanels,
  SPEC_FILE,
  hostPort,
  type BundleFile,
  type FolderPlan,
  type ManagedService,
  type ScrapeAddressing,
  type ScrapeTargetGroup,
  type SizingStatus,
  type SkippedAlertRule,
  type TuningRecommendation,
} from '../../domain/observability/index.js';
import type { Db } from '../../store/database.js';
import { getApp, hasSpec, listApps } from '../../store/control/apps.js';
import { resourceSuggestions } from '../apps/app-views.js';
import type { SignalReader } from '../scaling/signal-sampler.js';
import type { SchedulerTargets } from '../apps/scheduler-targets.js';
import { applyFolderPlan, observeFolder } from './managed-folders.js';

/** Options of {@link ObservabilityService}. */
export interface ObservabilityOptions {
  readonly db: Db;
  readonly registry: Registry;
  readonly targets: SchedulerTargets;
  /** The control plane's metrics: its registry says which metrics exist. */
  readonly metrics: ControlMetrics;
  /** Folder of the app folders (`SVC_APPS_DIR`), where the managed apps are installed. */
  readonly appsDir: string;
  /** Address the API binds to (`SVC_HOST`). */
  readonly bindHost: string;
  /** The API's URL once it listens (its port is the real one, also when `SVC_PORT=0`). */
  readonly controlUrl: () => string;
  /** `SVC_OBSERVABILITY_TARGET`. */
  readonly observabilityTarget?: string | undefined;
  /** Environment name, the scrape config's external label. */
  readonly environment: string;
  /** `SVC_REQUIRE_EXPLICIT_AUTH`: `/metrics` then needs a bearer token. */
  readonly metricsNeedToken: boolean;
  /** Secret configuration values by variable name: none may appear in anything generated. */
  readonly secrets: () => Readonly<Record<string, string | undefined>>;
  readonly logger: Logger;
  /** Samples of the tuning signals; unset: signals other than the scheduler's peak RSS are not read. */
  readonly signals?: SignalReader;
}

/** Request of {@link ObservabilityService.install}. */
export interface InstallRequest {
  /** Overwrite the install's files in folders an operator edited (other files stay). @default false */
  readonly force?: boolean;
  /** Plan only: report what would be written, write nothing. @default false */
  readonly dryRun?: boolean;
  /** Which managed apps. @default all three */
  readonly services?: readonly ManagedServiceName[];
}

/** What the install did (or, with `dryRun`, would do) to one folder. */
export interface InstallOutcome {
  readonly name: ManagedServiceName;
  readonly folder: string;
  readonly outcome: 'created' | 'updated' | 'unchanged';
  /** Files written (or to be written), relative to the folder. */
  readonly files: readonly string[];
  /** Files of an operator's edit that `force` overwrote. */
  readonly overwritten: readonly string[];
  /** Validation of the written `infraspec.yaml` (schema and semantic rules). */
  readonly spec: { readonly valid: boolean; readonly findings: readonly Finding[] };
}

/** Query of {@link ObservabilityService.tuningRecommendations}. */
export interface TuningQuery {
  readonly app?: string;
  readonly status?: SizingStatus;
}

const PAST: Record<string, InstallOutcome['outcome']> = {
  create: 'created',
  update: 'updated',
  unchanged: 'unchanged',
};

/** The observability read models and the managed app install. */
export class ObservabilityService {
  #installing: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: ObservabilityOptions) {}

  /** Where the metrics store reaches the control plane and this host's app processes. */
  addressing(): ScrapeAddressing {
    const port = Number(new URL(this.options.controlUrl()).port);
    return scrapeAddressing({ bindHost: this.options.bindHost, port, override: this.options.observabilityTarget });
  }

  /** Series names the control plane exports right now: every family's name, and a summary's `_sum` and `_count`. */
  exportedMetrics(): string[] {
    return this.options.metrics.registry
      .getMetricsAsArray()
      .flatMap((metric) =>
        metric instanceof Summary ? [metric.name, `${metric.name}_sum`, `${metric.name}_count`] : [metric.name],
      );
  }

  /** The target group of every process with `metrics.enabled: true` and live registry instances. */
  async scrapeTargets(addressing = this.addressing()): Promise<ScrapeTargetGroup[]> {
    const processes = listApps(this.options.db)
      .filter(hasSpec)
      .filter((app) => app.deletedAt === null)
      .flatMap((app) => metricsProcesses(app.spec));
    const instances = new Map<string, readonly ServiceInstance[]>();
    for (const service of new Set(processes.map((p) => p.service)))
      instances.set(service, await this.options.registry.instances(service));
    return scrapeTargetGroups(processes, instances, addressing);
  }

  /** The scrape config (`prometheus.yml`). */
  async scrapeConfig(): Promise<string> {
    const addressing = this.addressing();
    const yaml = renderScrapeConfig({
      controlPlaneTarget: addressing.controlPlaneTarget,
      groups: await this.scrapeTargets(addressing),
      environment: this.options.environment,
      metricsNeedToken: this.options.metricsNeedToken,
    });
    this.#assertValueSafe([{ path: 'prometheus.yml', content: yaml }]);
    return yaml;
  }

  /** The alert rules file and the rules left out for lack of a metric. */
  alertRules(): { yaml: string; skipped: SkippedAlertRule[] } {
    const { rules, skipped } = selectAlertRules(this.exportedMetrics());
    const yaml = renderAlertRules(rules, skipped);
    this.#assertValueSafe([{ path: 'svc-alerts.yml', content: yaml }]);
    return { yaml, skipped };
  }

  async #generate(): Promise<{
    scrapeConfigYaml: string;
    alertRulesYaml: string;
    skipped: SkippedAlertRule[];
    datasourceJson: string;
    dashboardJson: string;
    services: ManagedService[];
  }> {
    const addressing = this.addressing();
    const scrapeConfigYaml = await this.scrapeConfig();
    const { yaml: alertRulesYaml, skipped } = this.alertRules();
    const datasource = metricsDatasource(
      `http://${hostPort(addressing.hostAlias, MANAGED_PORTS[ManagedServiceName.metricsStore])}`,
    );
    const datasourceJson = `${JSON.stringify(datasource, null, 2)}\n`;
    const dashboardJson = `${JSON.stringify(platformDashboard(selectDashboardPanels(this.exportedMetrics())), null, 2)}\n`;
    const services = managedServices({ scrapeConfigYaml, alertRulesYaml, dashboardJson, datasource });
    return { scrapeConfigYaml, alertRulesYaml, skipped, datasourceJson, dashboardJson, services };
  }

  /** The starter bundle: every file of the spec's table with its content; never a secret value. */
  async bundle(): Promise<{
    files: BundleFile[];
    skippedAlertRules: SkippedAlertRule[];
    tokenFile: string | null;
    notes: string[];
  }> {
    const generated = await this.#generate();
    const files = bundleFiles(generated);
    this.#assertValueSafe(files);
    return {
      files,
      skippedAlertRules: generated.skipped,
      tokenFile: this.options.metricsNeedToken ? 'prometheus/secrets/svc-metrics-token' : null,
      notes: [
        'prometheus/prometheus.yml loads rules/svc-alerts.yml relative to itself: keep the folder layout.',
        ...(this.options.metricsNeedToken
          ? [
              '/metrics needs a bearer token: create prometheus/secrets/svc-metrics-token with a metrics:read access token (POST /api/access/tokens); it is not part of the bundle.',
            ]
          : []),
        'Targets are a snapshot of the live registry instances: fetch the bundle (or the scrape config) again after deploys.',
      ],
    };
  }

  /**
   * Writes the managed app folders under the apps folder. Every folder is planned first; if any is an
   * operator's edit (or not the install's) and `force` is not set, nothing is written and the whole
   * request is a 409 naming the folders and files.
   */
  install(
    request: InstallRequest = {},
  ): Promise<{ appsDir: string; dryRun: boolean; services: InstallOutcome[]; next: string[] }> {
    const run = this.#installing.then(() => this.#install(request));
    this.#installing = run.catch(() => undefined);
    return run;
  }

  async #install(
    request: InstallRequest,
  ): Promise<{ appsDir: string; dryRun: boolean; services: InstallOutcome[]; next: string[] }> {
    const selected = new Set(request.services ?? MANAGED_SERVICE_NAMES);
    const generated = await this.#generate();
    const services = generated.services.filter((s) => selected.has(s.name));
    this.#assertValueSafe(
      services.flatMap((s) => s.files.map((f) => ({ path: `${s.name}/${f.path}`, content: f.content }))),
    );
    const planned: { service: ManagedService; plan: FolderPlan; validation: ReturnType<typeof validateInfraspec> }[] =
      [];
    for (const service of services) {
      const specText = service.files.find((f) => f.path === SPEC_FILE)!.content;
      const validation = validateInfraspec(specText, { fileName: `${service.name}/${SPEC_FILE}` });
      // A generated spec that fails our own validation is our bug: never write it.
      if (!validation.valid)
        throw new Error(
          `generated ${service.name}/${SPEC_FILE} is invalid: ${validation.findings.map((f) => f.message).join('; ')}`,
        );
      const folder = path.join(this.options.appsDir, service.name);
      const plan = planManagedFolder(
        service.files,
        observeFolder(
          folder,
          service.files.map((f) => f.path),
        ),
        { force: request.force === true },
      );
      planned.push({ service, plan, validation });
    }
    const conflicts = planned.filter((p) => p.plan.action === InstallAction.conflict);
    if (conflicts.length > 0) {
      throw new ConflictError(
        `${conflicts.map((c) => c.service.name).join(', ')}: ${conflicts.length === 1 ? 'its folder was' : 'their folders were'} edited or not written by the install; nothing was written (send force: true to overwrite the install's files)`,
        {
          code: 'managed_folder_modified',
          details: {
            conflicts: conflicts.map((c) => ({
              service: c.service.name,
              folder: path.join(this.options.appsDir, c.service.name),
              reason: c.plan.conflict?.reason,
              files: c.plan.conflict?.files ?? [],
            })),
          },
        },
      );
    }
    const dryRun = request.dryRun === true;
    const outcomes: InstallOutcome[] = [];
    for (const { service, plan, validation } of planned) {
      if (!dryRun) applyFolderPlan(this.options.appsDir, service.name, plan);
      outcomes.push({
        name: service.name,
        folder: path.join(this.options.appsDir, service.name),
        outcome: PAST[plan.action]!,
        files: plan.writes.map((f) => f.path),
        overwritten: plan.conflict?.files ?? [],
        spec: { valid: validation.valid, findings: validation.findings },
      });
    }
    if (!dryRun)
      this.options.logger.info(
        { services: outcomes.map((o) => `${o.name}:${o.outcome}`), force: request.force === true },
        'managed observability apps installed',
      );
    return {
      appsDir: this.options.appsDir,
      dryRun,
      services: outcomes,
      next: [
        'Review and commit the folders to the apps repository.',
        ...outcomes.map((o) => `svc deploy ${o.name}`),
        'Install again after deploys to refresh svc-metrics-store/prometheus.yml (unedited folders are updated in place).',
      ],
    };
  }

  /** Advisory recommendations per running process, from its right-sizing class and TuningPolicy; reads only. */
  async tuningRecommendations(query: TuningQuery = {}): Promise<{
    mode: 'advisory';
    mutates: false;
    thresholds: unknown;
    recommendations: TuningRecommendation[];
    unobserved: { app: string; process: string; reason: string }[];
  }> {
    if (query.app !== undefined && getApp(this.options.db, query.app) === undefined) {
      throw new NotFoundError(`app "${query.app}" is not discovered under the apps folder`, {
        code: 'app_not_found',
        details: { app: query.app },
      });
    }
    const sizing = await resourceSuggestions({
      db: this.options.db,
      targets: this.options.targets,
      registry: this.options.registry,
    });
    const specs = new Map(listApps(this.options.db).map((app) => [app.name, app.spec]));
    const recommendations = sizing.suggestions
      .filter((s) => query.app === undefined || s.app === query.app)
      .map((s) => {
        const spec = specs.get(s.app) ?? undefined;
        const readings = spec ? this.options.signals?.readings(s.app, s.process, spec) : undefined;
        return recommendTuning(s, spec?.processes[s.process], readings);
      })
      .filter((r) => query.status === undefined || r.status === query.status);
    const observed = new Set(sizing.suggestions.map((s) => `${s.app}/${s.process}`));
    const unobserved = [...specs]
      .filter(([app]) => query.app === undefined || app === query.app)
      .flatMap(([app, spec]) =>
        Object.entries(spec?.processes ?? {})
          .filter(([name, p]) => p.tuning !== undefined && !observed.has(`${app}/${name}`))
          .map(([process]) => ({ app, process, reason: 'declares a tuning policy but has no running allocation' })),
      );
    return {
      mode: 'advisory',
      mutates: false,
      thresholds: sizing.thresholds,
      recommendations,
      unobserved: query.status === undefined ? unobserved : [],
    };
  }

  /** Refuses to serve anything that contains a secret configuration value (logs the variable names only). */
  #assertValueSafe(files: readonly { path: string; content: string }[]): void {
    const leaks = findSecretLeaks(files, this.options.secrets());
    if (leaks.length === 0) return;
    this.options.logger.error(
      { variables: leaks.map((l) => l.variable), files: [...new Set(leaks.flatMap((l) => l.files))] },
      'generated observability content contains a secret value; refused',
    );
    throw new Error(`generated observability content contains the value of ${leaks.map((l) => l.variable).join(', ')}`);
  }
}
