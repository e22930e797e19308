/**
 * Driver state: what the local driver persists so that an API restart loses nothing (jobs,
 * allocations with pid and process start time, ports, versions, execution records).
 */
import type {
  AllocatedPort,
  AllocationKind,
  AllocationStatus,
  DesiredStatus,
  ExecutionStatus,
  JobSpec,
  TaskEvent,
  TaskGroupSpec,
  TaskLifecycle,
} from '../../domain/scheduler/index.js';

/** A submitted job as the driver keeps it. */
export interface JobRecord {
  spec: JobSpec;
  version: number;
  fingerprint: string;
  status: 'running' | 'dead';
  paused: boolean;
  submittedAt: string;
  /** Task groups with canaries awaiting promotion. */
  awaitingPromotion: string[];
}

/** Mutable task state of a persisted allocation. */
export interface TaskRecord {
  name: string;
  state: TaskLifecycle;
  failed: boolean;
  restarts: number;
  lastRestartAt?: string;
  /** Epoch milliseconds of restarts inside the restart policy's window. */
  recentRestarts?: number[];
  oomKilled: boolean;
  events: TaskEvent[];
  pid?: number;
  /** `/proc/<pid>/stat` start time of `pid`. */
  pidStartTime?: string;
  startedAt?: string;
  finishedAt?: string;
  exitCode?: number | null;
  signal?: string | null;
}

/** A persisted allocation, with the group spec of the version it runs. */
export interface AllocationRecord {
  id: string;
  jobId: string;
  app: string;
  jobType: JobSpec['type'];
  taskGroup: string;
  jobVersion: number;
  kind: AllocationKind;
  index: number;
  canary: boolean;
  status: AllocationStatus;
  desiredStatus: DesiredStatus;
  statusDescription?: string;
  region: string;
  datacenter: string;
  nodePool: string;
  ports: AllocatedPort[];
  group: TaskGroupSpec;
  fingerprint: string;
  filesFingerprint: string;
  /** Per-run environment (dispatch payload and variables). */
  extraEnv: Record<string, string>;
  dir: string;
  task: TaskRecord;
  memory: { currentRssBytes: number; peakRssBytes: number; limitBytes: number; sampledAt?: string };
  /** CPU use of the process tree over the last sampling period (not saved state: a fresh driver samples anew). */
  cpu?: { percent: number; sampledAt: string };
  executionId?: string;
  /** Batch deadline (ISO 8601); survives driver restarts. */
  deadlineAt?: string;
  createdAt: string;
  modifiedAt: string;
}

/** A persisted execution record. */
export interface ExecutionRecord {
  id: string;
  jobId: string;
  taskGroup: string;
  allocationId: string;
  status: ExecutionStatus;
  exitCode: number | null;
  output: string;
  errorOutput: string;
  durationMs: number | null;
  startedAt: string;
  finishedAt?: string;
}

/** The whole persisted state (format version 1). */
export interface DriverState {
  formatVersion: 1;
  jobs: Record<string, JobRecord>;
  allocations: Record<string, AllocationRecord>;
  executions: Record<string, ExecutionRecord>;
}

/** An empty state. */
export function emptyDriverState(): DriverState {
  return { formatVersion: 1, jobs: {}, allocations: {}, executions: {} };
}
