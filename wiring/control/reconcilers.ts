/**
 * Starts the reconciler core on the embedded local substrate: the local registry, one local
 * scheduler per region, the spec controller fed by the apps-folder watcher, and the app controller
 * fed by spec changes, allocation changes and registry health changes.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Db } from '../../store/database.js';
import type { Logger } from '../../platform/logger.js';
import type { SvcConfig } from '../../platform/config.js';
import { LocalRegistry } from '../../platform/local-registry/index.js';
import { LocalScheduler, type AppIdentities } from '../../platform/local-scheduler/index.js';
import type { LogSink } from '../../domain/logs/index.js';
import { watchSpecs } from '../../platform/spec-watcher.js';
import { Controller } from '../../controllers/runtime/controller.js';
import { createAppReconciler, type InfrastructureSettings } from '../../controllers/apps/app-reconciler.js';
import { createSpecReconciler } from '../../controllers/apps/spec-reconciler.js';
import { LOCAL_REGION } from '../../domain/scheduler/index.js';
import { SchedulerTargets } from '../../controllers/apps/scheduler-targets.js';
import type { ContainerRuntime } from '../../platform/local-scheduler/containers/container-runtime.js';
import type { GatewayScale } from '../../controllers/routing/gateway-scale.js';

export interface ReconcilersOptions {
  readonly db: Db;
  readonly appsDir: string;
  readonly dataDir: string;
  readonly logger: Logger;
  /** Connection settings of declared infrastructure (per app with the managed PostgreSQL server). */
  readonly infrastructure?: InfrastructureSettings;
  /** Full resync period of both controllers. @default 30000 */
  readonly resyncMs?: number;
  /** Longest quiet period of a spec file's events before it is read (the first is 5 ms, ADR 0195). @default 20 */
  readonly debounceMs?: number;
  /** Poll period while an app is unhealthy. @default 1000 */
  readonly unhealthyRequeueMs?: number;
  /** Counts of gateway-managed processes; each change enqueues the app (ADR 0091). */
  readonly gatewayScale?: GatewayScale;
  /** Whether the control plane reads Kafka consumer lag (SVC_KAFKA_EXPORTER_URL): false refuses kafka_lag. @default not judged */
  readonly kafkaLagSource?: boolean;
  /** Scheduler driver of every region (`SVC_SCHEDULER_DRIVER`, docs/kubernetes.md). @default local */
  readonly scheduler?: SchedulerDriverOptions;
  /** Where local drivers deliver captured app output (docs/adr/0165). @default not captured */
  readonly logs?: LogSink;
  /** Who the local driver runs apps as (ADR 0047). @default detected: each app's own user when root */
  readonly identities?: AppIdentities;
  /** Runs image releases as podman containers on the local driver (ADR 0219). @default host processes only */
  readonly containers?: ContainerRuntime;
}

/** Which driver runs apps: host processes, or a Kubernetes cluster (a region uses the kubeconfig context of its name when there is one). */
export type SchedulerDriverOptions =
  | { readonly driver: 'local' }
  | { readonly driver: 'kubernetes'; readonly kubeconfig?: string; readonly namespace: string }
  /** A Docker Swarm manager at `host` (unset: Docker's `DOCKER_HOST`; docs/swarm.md). */
  | { readonly driver: 'swarm'; readonly host?: string; readonly registry?: string };

/** The scheduler driver `SVC_SCHEDULER_DRIVER` names, with the cluster settings of `kubernetes`. */
export function schedulerDriverOf(
  config: Pick<SvcConfig, 'schedulerDriver' | 'kubeconfig' | 'kubernetesNamespace' | 'swarmHost' | 'swarmRegistry'>,
): SchedulerDriverOptions {
  if (config.schedulerDriver === 'swarm')
    return {
      driver: 'swarm',
      ...(config.swarmHost !== undefined ? { host: config.swarmHost } : {}),
      ...(config.swarmRegistry !== undefined ? { registry: config.swarmRegistry } : {}),
    };
  return config.schedulerDriver === 'kubernetes'
    ? {
        driver: 'kubernetes',
        ...(config.kubeconfig === undefined ? {} : { kubeconfig: config.kubeconfig }),
        namespace: config.kubernetesNamespace,
      }
    : { driver: 'local' };
}

/** The running reconciler core. */
export interface Reconcilers {
  readonly registry: LocalRegistry;
  readonly targets: SchedulerTargets;
  readonly specController: Controller;
  readonly appController: Controller;
  /** Resolves when both controllers have nothing queued or running. */
  whenIdle(): Promise<void>;
  /** Stops watching and reconciling; app processes keep running. */
  close(): Promise<void>;
}

/** The data folder of a region's local target: the data dir itself for the default region. */
export function regionDataDir(dataDir: string, region: string): string {
  return region === LOCAL_REGION ? dataDir : path.join(dataDir, 'regions', region);
}

/** Starts the registry, schedulers, controllers and the watcher. */
export async function startReconcilers(options: ReconcilersOptions): Promise<Reconcilers> {
  const log = options.logger;
  const registry = new LocalRegistry();
  const unsubscribes: (() => void)[] = [];
  const schedulers: { close(): Promise<void> }[] = [];
  const driver = options.scheduler ?? { driver: 'local' };
  // eslint-disable-next-line prefer-const
  let appController: Controller;
  const targets = new SchedulerTargets(
    async (region) => {
      if (driver.driver === 'swarm') {
        // The engine client is loaded only when that driver is chosen.
        const swarm = await import('../../platform/swarm-scheduler/index.js');
        const host = driver.host ?? process.env.DOCKER_HOST ?? 'unix:///var/run/docker.sock';
        const engine = swarm.engineAt(driver.host);
        await swarm.requireSwarmManager(engine, host);
        const scheduler = await swarm.SwarmScheduler.open({
          engine,
          dataDir: path.join(regionDataDir(options.dataDir, region), 'swarm'),
          appSecretsDir: path.join(options.dataDir, 'secrets'),
          registry,
          region,
          logger: log.child({ driver: 'swarm', region }),
          ...(options.logs ? { logs: options.logs } : {}),
          ...(driver.registry !== undefined ? { nodeRegistry: driver.registry } : {}),
        });
        schedulers.push(scheduler);
        unsubscribes.push(scheduler.watch((change) => appController.enqueue(change.allocation.app)));
        return scheduler;
      }
      // The Kubernetes client is 800 module files: loaded only when that driver is chosen.
      const kubernetes =
        driver.driver === 'kubernetes' ? await import('../../platform/kubernetes-scheduler/index.js') : undefined;
      const scheduler =
        kubernetes && driver.driver === 'kubernetes'
          ? await kubernetes.KubernetesScheduler.open({
              kubeConfig: kubernetes.kubeConfigForRegion(
                { ...(driver.kubeconfig !== undefined ? { kubeconfigPath: driver.kubeconfig } : {}) },
                region,
              ),
              namespace: driver.namespace,
              registry,
              region,
              logger: log.child({ driver: 'kubernetes', region }),
            })
          : await LocalScheduler.open({
              dataDir: regionDataDir(options.dataDir, region),
              registry,
              logger: log.child({ driver: 'local', region }),
              region,
              releasesDir: path.join(options.dataDir, 'releases'),
              appSecretsDir: path.join(options.dataDir, 'secrets'),
              ...(options.identities ? { identities: options.identities } : {}),
              ...(options.logs ? { logs: options.logs } : {}),
              ...(options.containers ? { containers: options.containers } : {}),
            });
      schedulers.push(scheduler);
      unsubscribes.push(scheduler.watch((change) => appController.enqueue(change.allocation.app)));
      return scheduler;
    },
    driver.driver !== 'local' || options.containers !== undefined,
    driver.driver === 'local',
  );
  appController = new Controller(
    createAppReconciler({
      db: options.db,
      targets,
      registry,
      logger: log.child({ controller: 'app' }),
      ...(options.infrastructure === undefined ? {} : { infrastructure: options.infrastructure }),
      unhealthyRequeueMs: options.unhealthyRequeueMs,
      gatewayScale: options.gatewayScale,
    }),
    log,
    { workers: 2, resyncMs: options.resyncMs ?? 30_000 },
  );
  const specController = new Controller(
    createSpecReconciler({
      db: options.db,
      appsDir: options.appsDir,
      onAppChanged: (app) => appController.enqueue(app),
      driver: driver.driver,
      ...(options.kafkaLagSource === undefined ? {} : { kafkaLagSource: options.kafkaLagSource }),
    }),
    log,
    { workers: 2, resyncMs: options.resyncMs ?? 30_000 },
  );
  // Open the default target and every region that has state, so their processes are re-adopted.
  if (driver.driver !== 'local') {
    // A cluster that is down now must not keep the control plane down: apps say so and are retried.
    await targets
      .get(LOCAL_REGION)
      .catch((error: unknown) =>
        log.error({ err: error }, `the ${driver.driver} cluster cannot be reached; apps are reconciled once it can`),
      );
  } else {
    await targets.get(LOCAL_REGION);
  }
  const regionsDir = path.join(options.dataDir, 'regions');
  if (driver.driver === 'local' && fs.existsSync(regionsDir))
    for (const region of fs.readdirSync(regionsDir)) await targets.get(region);
  unsubscribes.push(
    registry.watch((change) => {
      const app = change.instance?.app;
      if (app) appController.enqueue(app);
    }),
  );
  if (options.gatewayScale) unsubscribes.push(options.gatewayScale.onChange((app) => appController.enqueue(app)));
  await appController.start();
  await specController.start();
  const watcher = await watchSpecs(
    options.appsDir,
    (key) => specController.enqueue(key.startsWith('app:') ? key.slice('app:'.length) : key),
    { debounceMs: options.debounceMs ?? 20 },
  );
  log.info({ appsDir: options.appsDir }, 'reconcilers started');
  return {
    registry,
    targets,
    specController,
    appController,
    async whenIdle() {
      for (;;) {
        await specController.whenIdle();
        await appController.whenIdle();
        if (specController.queue.depth === 0 && appController.queue.depth === 0) return;
      }
    },
    async close() {
      await watcher.close();
      await specController.stop();
      await appController.stop();
      for (const unsubscribe of unsubscribes) unsubscribe();
      await Promise.all(schedulers.map((s) => s.close()));
    },
  };
}
