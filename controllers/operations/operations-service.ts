/**
 * The operations service behind the API: one operation, the active queue with the drain state,
 * and cancelling a queued operation.
 */
import { ConflictError, NotFoundError } from '../../domain/errors.js';
import type { Operation, OperationStatus } from '../../domain/operations/index.js';
import type { Db } from '../../store/database.js';
import {
  cancelQueuedOperation,
  countOperations,
  getOperation,
  listAttempts,
  listOperations,
  type OperationAttempt,
} from '../../store/control/operations/operations.js';
import type { OperationHandlers } from './operation-handlers.js';
import type { DrainState, OperationWorker } from './operation-worker.js';

/** The operation queue: active operations, counts per status and the drain state. */
export interface ActiveOperations {
  readonly operations: Operation[];
  readonly counts: Record<OperationStatus, number>;
  readonly drain: DrainState;
}

/** The operations service. */
export class OperationsService {
  constructor(
    private readonly db: Db,
    private readonly handlers: OperationHandlers,
    private readonly worker: OperationWorker,
  ) {}

  /** One operation with its attempts. */
  get(id: string): Operation & { attemptHistory: OperationAttempt[] } {
    const op = getOperation(this.db, id);
    if (!op) throw new NotFoundError(`operation "${id}" does not exist`, { code: 'operation_not_found' });
    return { ...op, attemptHistory: listAttempts(this.db, id) };
  }

  /** Queued and running operations, counts by status and the drain state. */
  active(): ActiveOperations {
    return {
      operations: listOperations(this.db, { status: ['running', 'queued'], limit: 500 }),
      counts: countOperations(this.db),
      drain: this.worker.drainState(),
    };
  }

  /** Recent operations, oldest first within the page. */
  list(filter: { app?: string; limit?: number; offset?: number }): Operation[] {
    return listOperations(this.db, filter);
  }

  /** Cancels a queued operation; a running or finished one is a conflict. */
  cancel(id: string, reason = 'cancelled by an operator'): Operation {
    const outcome = cancelQueuedOperation(this.db, id, reason);
    if (!outcome.cancelled && outcome.status === 'not_found')
      throw new NotFoundError(`operation "${id}" does not exist`, { code: 'operation_not_found' });
    if (!outcome.cancelled)
      throw new ConflictError(`operation "${id}" is ${outcome.status}: only a queued operation can be cancelled`, {
        code: 'operation_not_cancellable',
        details: { status: outcome.status },
      });
    const op = getOperation(this.db, id)!;
    this.handlers.get(op.kind)?.abandoned?.(op, reason);
    // Operations that waited on this one fail at their next claim; wake the worker to settle them.
    this.worker.wake();
    return op;
  }
}
