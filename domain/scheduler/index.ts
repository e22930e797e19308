/**
 * Scheduler port: jobs, task groups, allocations, executions and the interface drivers implement.
 */
export { milliseconds, seconds } from './duration.js';
export type { Duration } from './duration.js';
export { JobType } from './job.js';
export type {
  DrainSpec,
  HttpCheckSpec,
  JobSpec,
  ParameterizedSpec,
  PeriodicSpec,
  PortSpec,
  ResourcesSpec,
  RestartPolicySpec,
  ServiceRegistrationSpec,
  TaskGroupSpec,
  TaskSpec,
  TemplateFileSpec,
  VolumeMountSpec,
} from './job.js';
export {
  AllocationKind,
  AllocationStatus,
  DesiredStatus,
  TaskEventType,
  TaskLifecycle,
  TERMINAL_ALLOCATION_STATUSES,
  isTerminalAllocation,
} from './allocation.js';
export type {
  AllocatedPort,
  Allocation,
  AllocationChange,
  MemoryUsage,
  CpuUsage,
  TaskEvent,
  TaskContainer,
  TaskState,
} from './allocation.js';
export { ExecutionStatus } from './dispatch.js';
export type { DispatchRequest, Execution } from './dispatch.js';
export { WriteOutcome } from './scheduler.js';
export type { AllocationFilter, JobFilter, JobStatus, Scheduler, SubmitResult, Unsubscribe } from './scheduler.js';
export { canonicalJson, filesFingerprint, jobFingerprint, rollFingerprint } from './fingerprint.js';
export { normalizeDuration, normalizeJob } from './normalize-job.js';
export { isEmptyGroupPlan, planGroup } from './plan-group.js';
export type { GroupDesire, GroupPlan, PlannedAllocation, Placement } from './plan-group.js';
export { LOCAL_REGION } from './local-region.js';
export { waitForAllocations } from './wait-for-allocations.js';
export type { WaitForAllocationsOptions } from './wait-for-allocations.js';
