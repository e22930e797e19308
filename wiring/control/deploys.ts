/**
 * Starts the durable operations and the deploy pipeline on top of the reconciler core: the
 * handlers registry (deploy, preflight, rollback), the worker (which recovers interrupted
 * operations first), and the services the API, the webhooks and the CLI use.
 */
import type { EventEmitterPort } from '../../domain/events/index.js';
import type { Logger } from '../../platform/logger.js';
import { ReleaseBuilder } from '../../platform/release-builder/index.js';
import type { Db } from '../../store/database.js';
import type { Reconcilers } from './reconcilers.js';
import { OperationHandlers } from '../../controllers/operations/operation-handlers.js';
import { OperationWorker, type DrainMode } from '../../controllers/operations/operation-worker.js';
import { OperationsService } from '../../controllers/operations/operations-service.js';
import { sqliteIdempotencyKeys } from '../../controllers/operations/idempotency-service.js';
import { WebhookReceiver } from '../../controllers/webhooks/webhook-receiver.js';
import { createPipelineHandlers } from '../../controllers/pipeline/deploy-pipeline.js';
import { DeployService } from '../../controllers/pipeline/deploy-service.js';
import type { PipelineDependencies } from '../../controllers/pipeline/pipeline-context.js';
import { releaseInFlightIdempotencyKeys } from '../../store/control/idempotency.js';
import type { Deploys } from '../../controllers/pipeline/deploys.js';

/** Options of `startDeploys`. */
export interface StartDeploysOptions {
  readonly db: Db;
  readonly appsDir: string;
  readonly dataDir: string;
  readonly profile: string;
  readonly reconcilers: Reconcilers;
  readonly logger: Logger;
  /** @default discard */
  readonly events: EventEmitterPort;
  readonly webhookSecret: string | undefined;
  readonly workers?: number;
  readonly leaseMs?: number;
  readonly drainMode?: DrainMode;
  readonly workerEnabled?: boolean;
  readonly healthyTimeoutMs?: number;
  readonly testTimeoutMs?: number;
  /** Pipeline capabilities provided by other parts of the platform (see `PipelineDependencies`). */
  readonly snapshot?: PipelineDependencies['snapshot'];
  readonly migrate?: PipelineDependencies['migrate'];
  readonly forge?: PipelineDependencies['forge'];
  /** Extra handlers (snapshots, restores, migrations) registered before the worker starts. */
  readonly register?: (handlers: OperationHandlers) => void;
}

/** Wires handlers, worker and services, then starts the worker. */
export function startDeploys(options: StartDeploysOptions): Deploys {
  const log = options.logger.child({ component: 'deploys' });
  const handlers = new OperationHandlers();
  // The pipeline wakes the worker, which is created after the pipeline's handlers.
  const holder: { worker?: OperationWorker } = {};
  const deps = {
    db: options.db,
    appsDir: options.appsDir,
    dataDir: options.dataDir,
    profile: options.profile,
    targets: options.reconcilers.targets,
    registry: options.reconcilers.registry,
    appController: options.reconcilers.appController,
    builder: new ReleaseBuilder({ dataDir: options.dataDir, logger: log, engine: 'native' }),
    events: options.events,
    logger: log,
    ...(options.healthyTimeoutMs !== undefined ? { healthyTimeoutMs: options.healthyTimeoutMs } : {}),
    ...(options.testTimeoutMs !== undefined ? { testTimeoutMs: options.testTimeoutMs } : {}),
    wake: () => holder.worker?.wake(),
    ...(options.snapshot ? { snapshot: options.snapshot } : {}),
    ...(options.migrate ? { migrate: options.migrate } : {}),
    ...(options.forge ? { forge: options.forge } : {}),
  };
  const pipeline = createPipelineHandlers(deps);
  handlers.register('app.deploy', pipeline.deploy).register('app.preflight', pipeline.preflight).register('app.rollback', pipeline.rollback);
  options.register?.(handlers);
  const worker = new OperationWorker({
    db: options.db,
    handlers,
    logger: log,
    ...(options.workers !== undefined ? { concurrency: options.workers } : {}),
    ...(options.leaseMs !== undefined ? { leaseMs: options.leaseMs } : {}),
    ...(options.drainMode !== undefined ? { drainMode: options.drainMode } : {}),
    ...(options.workerEnabled !== undefined ? { enabled: options.workerEnabled } : {}),
  });
  holder.worker = worker;
  const deploys = new DeployService(deps);
  const started = worker;
  // A request in flight when the previous process died will never complete: free its key so the
  // client's retry runs (one control plane serves a data folder).
  releaseInFlightIdempotencyKeys(options.db);
  started.start();
  return {
    handlers,
    worker: started,
    operations: new OperationsService(options.db, handlers, started),
    deploys,
    webhooks: new WebhookReceiver({ db: options.db, deploys, secret: options.webhookSecret, logger: log }),
    idempotencyKeys: sqliteIdempotencyKeys(options.db),
    close: () => started.stop(),
  };
}
