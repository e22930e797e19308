/**
 * Dispatch: one on-demand run of a parameterized batch job (a function invocation) and its
 * execution record.
 */
import type { Duration } from './duration.js';

/** Status of one execution: running, then succeeded, failed or timed_out. */
export const ExecutionStatus = {
  running: 'running',
  succeeded: 'succeeded',
  failed: 'failed',
  timedOut: 'timed_out',
} as const;
export type ExecutionStatus = (typeof ExecutionStatus)[keyof typeof ExecutionStatus];

/** What to run a parameterized job with. */
export interface DispatchRequest {
  /** Delivered to the task as `SVC_DISPATCH_PAYLOAD` and the file `local/payload`. */
  readonly payload?: string;
  /** Extra environment for this run only (e.g. `SVC_REQUEST_BODY`). */
  readonly env?: Readonly<Record<string, string>>;
  /** Overrides the task's `timeout`. */
  readonly timeout?: Duration;
  /** Caller-chosen execution id; @default a random id */
  readonly executionId?: string;
}

/** The execution record of a dispatch or periodic child run. */
export interface Execution {
  readonly id: string;
  readonly jobId: string;
  readonly taskGroup: string;
  readonly allocationId: string;
  readonly status: ExecutionStatus;
  readonly exitCode: number | null;
  /** Standard output of the run (truncated to the driver's output limit). */
  readonly output: string;
  /** Standard error of the run (truncated likewise). */
  readonly errorOutput: string;
  readonly durationMs: number | null;
  readonly startedAt: string;
  readonly finishedAt?: string;
}
