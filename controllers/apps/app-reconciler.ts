/**
 * The app controller: keeps the scheduler's jobs equal to the translation of each deployable app's
 * spec at its current release, stops the jobs of apps that are no longer deployable or whose spec
 * was deleted (then drops the finalizer), and writes `Deployed`, `Healthy` and `Ready` (`Routed` belongs
 * to the routing controller).
 *
 * Config-only changes (scaling, env, resources) are applied to the running release: the
 * translation changes and the scheduler applies only the difference; nothing is rebuilt.
 */
import type { CanonicalAppSpec } from '../../domain/spec/index.js';
import { LOCAL_REGION, type JobSpec } from '../../domain/scheduler/index.js';
import type { AppRelease } from '../../domain/apps/index.js';
import type { Registry } from '../../domain/registry/index.js';
import { translateApp, type TranslationInfrastructure, type TranslationInput } from '../../domain/translate/index.js';
import { setCondition, summarizeReady, type ConditionInput } from '../../domain/status/conditions.js';
import { isDomainError, TimeoutError, UnavailableError } from '../../domain/errors.js';
import { readReleaseManifest, releaseLaunch } from '../../platform/release-builder/index.js';
import type { Logger } from '../../platform/logger.js';
import type { Db } from '../../store/database.js';
import {
  getApp,
  listApps,
  removeApp,
  removeAppFinalizer,
  setAppStatus,
  type AppRow,
} from '../../store/control/apps.js';
import { writeRederivable } from '../../store/rederivable-writes.js';
import type { Reconciler, ReconcileResult } from '../runtime/controller.js';
import { assessHealth, observeApp } from './observe-app.js';
import type { SchedulerTargets } from './scheduler-targets.js';
import { STOP_JOBS_FINALIZER } from './spec-reconciler.js';
import { withGatewayCounts, type GatewayScale } from '../routing/gateway-scale.js';
import { applyScheduleOverrides } from '../cron/cron-service.js';
import { traceMark } from '../../domain/observability/trace-marks.js';

export interface AppReconcilerOptions {
  readonly db: Db;
  readonly targets: SchedulerTargets;
  readonly registry: Registry;
  readonly logger: Logger;
  /**
   * Connection settings of the infrastructure apps declare: the same for every app, or per app (the
   * managed PostgreSQL server creates each app's database and role before it answers).
   */
  readonly infrastructure?: InfrastructureSettings;
  /** Poll period while an app is not yet healthy. @default 1000 */
  readonly unhealthyRequeueMs?: number;
  readonly now?: () => Date;
  /** Counts of gateway-managed processes (`scaling.min: 0`) set by the wake gateway and idle scaler (ADR 0091). */
  readonly gatewayScale?: GatewayScale;
}

/** Infrastructure settings for every app, or a function giving an app's own (it may provision them first). */
export type InfrastructureSettings =
  TranslationInfrastructure | ((app: string, spec: CanonicalAppSpec) => Promise<TranslationInfrastructure>);

/** Creates the app controller's reconciler (keys are app names). */
export function createAppReconciler(options: AppReconcilerOptions): Reconciler {
  const now = options.now ?? (() => new Date());
  return {
    name: 'app',
    listKeys: () => listApps(options.db).map((a) => a.name),
    async reconcile(name): Promise<ReconcileResult | void> {
      traceMark(`app:reconcile ${name}`);
      const app = getApp(options.db, name);
      if (!app) return;
      const spec = app.spec;
      if (app.deletedAt !== null) {
        await stopJobs(options, name, new Set());
        if (removeAppFinalizer(options.db, name, STOP_JOBS_FINALIZER).length === 0) removeApp(options.db, name);
        options.logger.info({ app: name }, 'spec deleted: jobs stopped and app removed');
        return;
      }
      if (!spec) {
        writeStatus(
          options,
          app,
          [
            { type: 'Deployed', status: 'Unknown', reason: 'NoValidSpec', message: 'the spec has never been valid' },
            { type: 'Healthy', status: 'Unknown', reason: 'NotDeployed', message: 'not deployed' },
          ],
          now(),
        );
        return;
      }
      if (!spec.deploy) {
        const stopped = await stopJobs(options, name, new Set());
        writeStatus(
          options,
          app,
          [
            {
              type: 'Deployed',
              status: 'False',
              reason: 'DeployDisabled',
              message: `deploy is false in the spec${stopped > 0 ? `; stopped ${stopped} job(s)` : ''}`,
            },
            { type: 'Healthy', status: 'Unknown', reason: 'NotDeployed', message: 'not deployed' },
          ],
          now(),
        );
        return;
      }
      const release = app.release;
      if (!release) {
        // A first deploy that failed its health gate clears the release: no half-new app stays.
        const stopped = await stopJobs(options, name, new Set());
        writeStatus(
          options,
          app,
          [
            {
              type: 'Deployed',
              status: 'False',
              reason: 'NoRelease',
              message: `no release yet: deploy a commit to build one${stopped > 0 ? `; stopped ${stopped} job(s)` : ''}`,
            },
            { type: 'Healthy', status: 'Unknown', reason: 'NotDeployed', message: 'not deployed' },
          ],
          now(),
        );
        return;
      }
      let infrastructure: TranslationInfrastructure | undefined;
      try {
        infrastructure =
          typeof options.infrastructure === 'function'
            ? await options.infrastructure(name, spec)
            : options.infrastructure;
      } catch (error) {
        // The app's backing services are not ready (the managed server restarting): its jobs stay as they are.
        options.logger.warn({ app: name, err: error }, 'infrastructure settings unavailable: retrying');
        writeStatus(
          options,
          app,
          [
            {
              type: 'Deployed',
              status: 'False',
              reason: 'InfrastructureUnavailable',
              message: `the app's infrastructure is not ready: ${(error as Error).message}`,
            },
          ],
          now(),
        );
        return { requeueAfterMs: UNAVAILABLE_REQUEUE_MS };
      }
      let jobs: JobSpec[];
      try {
        jobs = await withGatewayCounts(
          spec,
          applyScheduleOverrides(
            options.db,
            name,
            spec,
            desiredJobs(spec, release, infrastructure, options.targets.runsImages),
          ),
          options.gatewayScale,
          (job) => options.targets.get(job.region ?? LOCAL_REGION),
        );
      } catch (error) {
        if (isSchedulerUnavailable(error)) return schedulerUnavailable(options, app, error, now());
        if (!isDomainError(error)) throw error;
        writeStatus(
          options,
          app,
          [
            { type: 'Deployed', status: 'False', reason: 'ReleaseNotRunnable', message: error.message },
            { type: 'Healthy', status: 'Unknown', reason: 'NotDeployed', message: 'not deployed' },
          ],
          now(),
        );
        return;
      }
      const submitted: string[] = [];
      try {
        for (const job of jobs) {
          const scheduler = await options.targets.get(job.region ?? LOCAL_REGION);
          traceMark(`app:submit ${name}`);
          const result = await scheduler.submitJob(job);
          traceMark(`app:submitted ${name}`);
          if (result.outcome !== 'unchanged') {
            submitted.push(`${job.id} ${result.outcome}`);
            options.logger.info(
              { app: name, job: job.id, outcome: result.outcome, scaled: result.scaled, rolled: result.rolled },
              'job submitted',
            );
          }
        }
      } catch (error) {
        if (isSchedulerUnavailable(error)) return schedulerUnavailable(options, app, error, now());
        throw error;
      }
      await stopJobs(options, name, new Set(jobs.map((j) => j.id)));
      const observed = await observeApp(name, options.targets, options.registry);
      const health = assessHealth(jobs, observed);
      writeStatus(
        options,
        app,
        [
          {
            type: 'Deployed',
            status: 'True',
            reason: 'JobsSubmitted',
            message: `release ${release.commit.slice(0, 12)}: ${jobs.map((j) => j.id).join(', ')}`,
          },
          {
            type: 'Healthy',
            status: health.healthy ? 'True' : 'False',
            reason: health.reason,
            message: health.message,
          },
        ],
        now(),
      );
      return health.healthy ? undefined : { requeueAfterMs: options.unhealthyRequeueMs ?? 1000 };
    },
  };
}

/** Retry period while a scheduler target (a cluster) cannot be reached. */
const UNAVAILABLE_REQUEUE_MS = 2_000;

/** True for a scheduler target that is down or slow (a cluster API), as opposed to a refused job. */
function isSchedulerUnavailable(error: unknown): error is UnavailableError | TimeoutError {
  return error instanceof UnavailableError || error instanceof TimeoutError;
}

/** Says why nothing could be submitted and retries soon: the jobs already running are left as they are. */
function schedulerUnavailable(
  options: AppReconcilerOptions,
  app: AppRow,
  error: UnavailableError | TimeoutError,
  at: Date,
): ReconcileResult {
  options.logger.warn({ app: app.name, err: error }, 'scheduler unavailable: retrying');
  writeStatus(
    options,
    app,
    [
      {
        type: 'Deployed',
        status: 'False',
        reason: 'SchedulerUnavailable',
        message: `the scheduler cannot be reached: ${error.message}`,
      },
    ],
    at,
  );
  return { requeueAfterMs: UNAVAILABLE_REQUEUE_MS };
}

/** The jobs the scheduler should run for `spec` at `release` (per-region overrides replace that region's jobs). */
export function desiredJobs(
  spec: CanonicalAppSpec,
  release: AppRelease,
  infrastructure?: TranslationInput['infrastructure'],
  runsImages = false,
): JobSpec[] {
  const translate = (at: { commit: string; dir: string }): JobSpec[] => {
    const manifest = readReleaseManifest(at.dir);
    if (!manifest) throw new Error(`release ${at.dir} has no manifest`);
    // An image release runs as image tasks on a driver that runs images; a host driver needs a native launch.
    const imageRelease =
      runsImages && manifest.builder !== 'native' && manifest.image !== null && manifest.image !== undefined;
    const launch = imageRelease ? undefined : releaseLaunch(at.dir, manifest);
    return translateApp(spec, {
      release: launch
        ? {
            commit: at.commit,
            workdir: launch.workdir,
            command: launch.command,
            env: { ...launch.env },
            ...(manifest.user ? { user: manifest.user } : {}),
          }
        : {
            commit: at.commit,
            image: manifest.image!,
            env: { ...manifest.env },
            ...(manifest.command && manifest.command.length > 0 ? { command: manifest.command } : {}),
          },
      ...(infrastructure ? { infrastructure } : {}),
    }).jobs;
  };
  const overrides = release.regions ?? {};
  const regionOf = (job: JobSpec) => job.meta?.['svc.region'] ?? '';
  let jobs = translate(release).filter((job) => !(regionOf(job) in overrides));
  for (const [region, at] of Object.entries(overrides))
    jobs.push(...translate(at).filter((job) => regionOf(job) === region));
  jobs = jobs.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  if (!release.direct) return jobs;
  return jobs.map((job) => ({ ...job, taskGroups: job.taskGroups.map((g) => ({ ...g, canary: 0 })) }));
}

async function stopJobs(options: AppReconcilerOptions, app: string, keep: ReadonlySet<string>): Promise<number> {
  let stopped = 0;
  for (const { scheduler } of await options.targets.all()) {
    for (const job of await scheduler.listJobs({ app })) {
      if (!keep.has(job.spec.id) && job.status === 'running') {
        await scheduler.stopJob(job.spec.id, { purge: true });
        options.logger.info({ app, job: job.spec.id }, 'job stopped');
        stopped += 1;
      }
    }
  }
  return stopped;
}

function writeStatus(options: AppReconcilerOptions, app: AppRow, inputs: readonly ConditionInput[], now: Date): void {
  // Re-read: the spec controller may have written `Valid` since this reconcile began.
  const current = getApp(options.db, app.name)?.conditions ?? app.conditions;
  let conditions = current;
  for (const input of inputs) conditions = setCondition(conditions, input, now);
  // Status is observed again on every reconcile: committed without an fsync of its own (ADR 0195).
  writeRederivable(options.db, () =>
    setAppStatus(
      options.db,
      app.name,
      { conditions: summarizeReady(conditions, now), observedGeneration: app.generation },
      now,
    ),
  );
}
