/**
 * The error classes of controllers/, in one place: failures that steer the controller runtime, the
 * operation worker and the deploy pipeline. Errors a caller sees are domain errors (domain/errors.ts);
 * `StepFailure` is one of them (422) that also keeps the failed step's output.
 */
import { UnprocessableError } from '../domain/errors.js';

/** Thrown by a reconcile that must not be retried until the key changes again. */
export class TerminalReconcileError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TerminalReconcileError';
  }
}

/** Thrown by a handler for a transient failure: the attempt is retried later while attempts remain. */
export class RetryableOperationError extends Error {
  constructor(
    message: string,
    readonly retryAfterMs = 1000,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'RetryableOperationError';
  }
}

/** A step failed; `output` (a tail) is kept with the step. */
export class StepFailure extends UnprocessableError {
  constructor(
    message: string,
    readonly output?: string,
    options: { code?: string; cause?: unknown } = {},
  ) {
    super(message, {
      code: options.code ?? 'step_failed',
      ...(options.cause !== undefined ? { cause: options.cause } : {}),
    });
  }
}
