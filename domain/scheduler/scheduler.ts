/**
 * Scheduler port: the substrate the control plane submits jobs to and observes allocations from.
 * Implemented by the local driver (host processes) and, later, other drivers.
 */
import type { Allocation, AllocationChange, MemoryUsage } from './allocation.js';
import type { DispatchRequest, Execution } from './dispatch.js';
import type { JobSpec } from './job.js';

/** Outcome of an idempotent write: nothing differs, a new thing, a change, or a removal. */
export const WriteOutcome = {
  unchanged: 'unchanged',
  created: 'created',
  updated: 'updated',
  deleted: 'deleted',
} as const;
export type WriteOutcome = (typeof WriteOutcome)[keyof typeof WriteOutcome];

/** What a submission did, per task group. */
export interface SubmitResult {
  readonly outcome: WriteOutcome;
  readonly jobVersion: number;
  /** Task groups whose count changed without restarting existing allocations. */
  readonly scaled: readonly string[];
  /** Task groups whose allocations were replaced (or got canaries) because the group changed. */
  readonly rolled: readonly string[];
  /** Task groups whose tasks were restarted in place because only rendered files changed. */
  readonly restarted: readonly string[];
  /** Task groups now waiting for canary promotion. */
  readonly awaitingPromotion: readonly string[];
}

/** A submitted job and its scheduler-side state. */
export interface JobStatus {
  readonly spec: JobSpec;
  readonly version: number;
  /** `running` while the job is registered; `dead` after it was stopped. */
  readonly status: 'running' | 'dead';
  /** Periodic jobs only: true while paused. */
  readonly paused: boolean;
  /** Task groups with unpromoted canaries. */
  readonly awaitingPromotion: readonly string[];
  readonly submittedAt: string;
  /** Periodic jobs only: next planned launch (ISO 8601), absent while paused. */
  readonly nextLaunchAt?: string;
}

/** Filter for listing jobs. */
export interface JobFilter {
  /** Only the jobs of this app. */
  readonly app?: string;
}

/** Filter for listing allocations. */
export interface AllocationFilter {
  /** Only the allocations of this app. */
  readonly app?: string;
  readonly jobId?: string;
  readonly taskGroup?: string;
  /** Include terminal allocations; @default false */
  readonly includeTerminal?: boolean;
  /**
   * Read current CPU and memory use for the allocations on drivers that read it on demand (the
   * Kubernetes metrics API); drivers that sample continuously report it anyway. @default false
   */
  readonly usage?: boolean;
}

/** Removes a listener. */
export type Unsubscribe = () => void;

/** The scheduler port. All methods reject with domain errors (`NotFoundError`, `ValidationError`, `ConflictError`). */
export interface Scheduler {
  /** Registers or updates a job; identical specs report `unchanged`, and only what changed is applied. */
  submitJob(job: JobSpec): Promise<SubmitResult>;
  /** Stops every allocation of a job (draining each) and marks it dead; `purge` also forgets it. */
  stopJob(jobId: string, options?: { readonly purge?: boolean }): Promise<WriteOutcome>;
  getJob(jobId: string): Promise<JobStatus | undefined>;
  listJobs(filter?: JobFilter): Promise<readonly JobStatus[]>;
  listAllocations(filter?: AllocationFilter): Promise<readonly Allocation[]>;
  getAllocation(allocationId: string): Promise<Allocation | undefined>;
  /** Sets a task group's count (0 scales to zero) without restarting the other allocations. */
  scale(jobId: string, taskGroup: string, count: number): Promise<WriteOutcome>;
  /** Replaces old allocations by the canaries of the new version in every awaiting task group. */
  promoteCanaries(jobId: string): Promise<WriteOutcome>;
  /** Pauses a periodic job's launches; running children continue. */
  pausePeriodic(jobId: string): Promise<WriteOutcome>;
  resumePeriodic(jobId: string): Promise<WriteOutcome>;
  /** Launches a periodic child now, paused or not; returns its execution. */
  forcePeriodic(jobId: string): Promise<Execution>;
  /** Runs one execution of a parameterized batch job. */
  dispatch(jobId: string, request?: DispatchRequest): Promise<Execution>;
  getExecution(executionId: string): Promise<Execution | undefined>;
  listExecutions(jobId: string): Promise<readonly Execution[]>;
  /** Current and peak RSS of an allocation's process tree against its limit. */
  memoryUsage(allocationId: string): Promise<MemoryUsage>;
  /** Calls `listener` on every allocation or task-state change. */
  watch(listener: (change: AllocationChange) => void): Unsubscribe;
}
