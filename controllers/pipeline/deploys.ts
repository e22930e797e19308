/**
 * The running deploy machinery as the API sees it: operations, the deploy pipeline, the worker and
 * the push webhooks. `wiring/control/deploys.ts` builds it.
 */
import type { OperationHandlers } from '../operations/operation-handlers.js';
import type { OperationWorker } from '../operations/operation-worker.js';
import type { OperationsService } from '../operations/operations-service.js';
import type { IdempotencyKeys } from '../operations/idempotency-service.js';
import type { WebhookReceiver } from '../webhooks/webhook-receiver.js';
import type { DeployService } from './deploy-service.js';

/** The running deploy machinery. */
export interface Deploys {
  readonly handlers: OperationHandlers;
  readonly worker: OperationWorker;
  readonly operations: OperationsService;
  readonly deploys: DeployService;
  readonly webhooks: WebhookReceiver;
  readonly idempotencyKeys: IdempotencyKeys;
  /** Stops the worker; interrupted operations are recovered like after a crash. */
  close(): Promise<void>;
}
