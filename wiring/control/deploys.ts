/**
 * Starts the durable operations and the deploy pipeline on top of the reconciler core: the
 * handlers registry (deploy, preflight, rollback), the worker (which recovers interrupted
 * operations first), and the services the API, the webhooks and the CLI use.
 */
import { HOLD_STAGES } from '../../domain/platform/index.js';
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
import type { AuditReceipts } from '../../controllers/audit/audit-receipts.js';
import type { ImageBuilder } from '../../platform/containers/image-builder.js';

/** Options of `startDeploys`. */
export interface StartDeploysOptions {
  readonly db: Db;
  readonly appsDir: string;
  readonly dataDir: string;
  readonly profile: string;
  /** `SVC_SOURCE_ALLOWED_SIGNERS` (production source admission). */
  readonly allowedSignersFile?: string;
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
  readonly route?: PipelineDependencies['route'];
  /** Audit receipts reserved before each mutating operation (production profile, ADR 0187). */
  readonly receipts?: AuditReceipts;
  /** Builds Dockerfiles into images in the managed registry (ADR 0219); undefined: native releases. */
  readonly images?: ImageBuilder;
  /** Extra handlers (snapshots, restores, migrations) registered before the worker starts. */
  readonly register?: (handlers: OperationHandlers, wake: () => void) => void;
}

/** Wires handlers, worker and services, then starts the worker. */
export function startDeploys(options: StartDeploysOptions): Deploys {
  const log = options.logger.child({ component: 'deploys' });
  const handlers = new OperationHandlers();
  // The worker reads the handlers registry when it claims, so it is built first and started last,
  // after every handler is registered; the pipeline and the extra handlers wake it.
  const worker = new OperationWorker({
    db: options.db,
    handlers,
    logger: log,
    ...(options.workers !== undefined ? { concurrency: options.workers } : {}),
    ...(options.leaseMs !== undefined ? { leaseMs: options.leaseMs } : {}),
    ...(options.drainMode !== undefined ? { drainMode: options.drainMode } : {}),
    ...(options.workerEnabled !== undefined ? { enabled: options.workerEnabled } : {}),
    // App operations wait while the host agent drains, promotes and restarts the API (ADR 0086).
    holdStages: HOLD_STAGES,
    ...(options.receipts ? { receipts: options.receipts } : {}),
  });
  const deps = {
    db: options.db,
    appsDir: options.appsDir,
    dataDir: options.dataDir,
    profile: options.profile,
    ...(options.allowedSignersFile !== undefined ? { allowedSignersFile: options.allowedSignersFile } : {}),
    targets: options.reconcilers.targets,
    registry: options.reconcilers.registry,
    appController: options.reconcilers.appController,
    builder: new ReleaseBuilder({
      dataDir: options.dataDir,
      logger: log,
      ...(options.images ? { images: options.images } : {}),
    }),
    ...(options.images
      ? {
          verifyImage: (image: string, commit: string) => options.images!.verify(image, commit),
          pruneImages: (images: readonly string[]) => options.images!.remove(images),
        }
      : {}),
    events: options.events,
    logger: log,
    ...(options.healthyTimeoutMs !== undefined ? { healthyTimeoutMs: options.healthyTimeoutMs } : {}),
    ...(options.testTimeoutMs !== undefined ? { testTimeoutMs: options.testTimeoutMs } : {}),
    wake: () => worker.wake(),
    ...(options.snapshot ? { snapshot: options.snapshot } : {}),
    ...(options.migrate ? { migrate: options.migrate } : {}),
    ...(options.route ? { route: options.route } : {}),
  };
  const pipeline = createPipelineHandlers(deps);
  handlers
    .register('app.deploy', pipeline.deploy)
    .register('app.preflight', pipeline.preflight)
    .register('app.rollback', pipeline.rollback);
  options.register?.(handlers, () => worker.wake());
  const deploys = new DeployService(deps);
  // A request in flight when the previous process died will never complete: free its key so the
  // client's retry runs (one control plane serves a data folder).
  releaseInFlightIdempotencyKeys(options.db);
  worker.start();
  return {
    handlers,
    worker,
    operations: new OperationsService(options.db, handlers, worker),
    deploys,
    webhooks: new WebhookReceiver({ db: options.db, deploys, secret: options.webhookSecret, logger: log }),
    idempotencyKeys: sqliteIdempotencyKeys(options.db),
    close: () => worker.stop(),
  };
}
