/**
 * Durable operations: the worker, its pluggable handlers and the operations service.
 */
export { DrainMode, OperationWorker } from './operation-worker.js';
export type { DrainState, OperationWorkerOptions } from './operation-worker.js';
export { OperationHandlers } from './operation-handlers.js';
export { RetryableOperationError } from '../errors.js';
export type { OperationContext, OperationHandler } from './operation-handlers.js';
export { OperationsService } from './operations-service.js';
export { sqliteIdempotencyKeys } from './idempotency-service.js';
export type { IdempotencyBegin, IdempotencyKeys } from './idempotency-service.js';
