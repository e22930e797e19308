/**
 * Durable operations: the worker, its pluggable handlers and the operations service.
 */
export { DrainMode, OperationWorker } from './operation-worker.js';
export type { DrainState, OperationWorkerOptions } from './operation-worker.js';
export { OperationHandlers, RetryableOperationError } from './operation-handlers.js';
export type { OperationContext, OperationHandler } from './operation-handlers.js';
export { OperationsService } from './operations-service.js';
export { sqliteIdempotencyKeys } from './idempotency-service.js';
export type { IdempotencyBegin, IdempotencyKeys } from './idempotency-service.js';
