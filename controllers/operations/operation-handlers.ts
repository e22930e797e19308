/**
 * The operation worker's handlers, by kind: a pluggable registry so later capabilities (snapshots,
 * restores, migrations, platform lanes) add their handler without touching the worker.
 */
import type { Operation, OperationKind, RecoveryDecision } from '../../domain/operations/index.js';
import type { Logger } from '../../platform/logger.js';

/** What a handler gets for one attempt. */
export interface OperationContext {
  readonly operation: Operation;
  /** Aborted when the worker stops or loses the lease; handlers stop at the next safe point. */
  readonly signal: AbortSignal;
  readonly logger: Logger;
  /** Records the stage the attempt enters; `mutable` marks that it changes the runtime or data. */
  readonly stage: (stage: string, mutable: boolean) => void;
}

/** A handler: resolves with a receipt (stored as the result) or throws to fail the operation. */
export interface OperationHandler {
  run(context: OperationContext): Promise<Readonly<Record<string, unknown>> | void>;
  /** Called after recovery requeued or failed an interrupted attempt, to update the handler's own records. */
  recovered?(operation: Operation, decision: RecoveryDecision): void;
  /** Called after the operation failed without running (cancelled, or what it waited on failed). */
  abandoned?(operation: Operation, reason: string): void;
}

/** Handlers by kind. */
export class OperationHandlers {
  readonly #handlers = new Map<OperationKind, OperationHandler>();

  /** Registers the handler of `kind` (replacing an earlier one). */
  register(kind: OperationKind, handler: OperationHandler): this {
    this.#handlers.set(kind, handler);
    return this;
  }

  /** The handler of `kind`, if any. */
  get(kind: OperationKind): OperationHandler | undefined {
    return this.#handlers.get(kind);
  }

  /** Kinds with a handler. */
  kinds(): OperationKind[] {
    return [...this.#handlers.keys()];
  }
}
