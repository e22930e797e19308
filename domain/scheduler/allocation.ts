/**
 * Allocation: one placed instance of a task group (a running copy of a process, a periodic child
 * run, or one dispatched batch execution) and the observed state of its task.
 */

/** Client status of an allocation. */
export const AllocationStatus = {
  pending: 'pending',
  running: 'running',
  complete: 'complete',
  failed: 'failed',
  lost: 'lost',
} as const;
export type AllocationStatus = (typeof AllocationStatus)[keyof typeof AllocationStatus];

/** Statuses after which an allocation never runs again. */
export const TERMINAL_ALLOCATION_STATUSES: ReadonlySet<AllocationStatus> = new Set(['complete', 'failed', 'lost']);

/** True when an allocation reached a status it never leaves. */
export function isTerminalAllocation(status: AllocationStatus): boolean {
  return TERMINAL_ALLOCATION_STATUSES.has(status);
}

/** Why an allocation exists: a copy of a service or batch group, a periodic child, or a dispatch. */
export const AllocationKind = {
  group: 'group',
  periodicChild: 'periodic_child',
  dispatch: 'dispatch',
} as const;
export type AllocationKind = (typeof AllocationKind)[keyof typeof AllocationKind];

/** Whether the scheduler wants the allocation running. */
export const DesiredStatus = { run: 'run', stop: 'stop' } as const;
export type DesiredStatus = (typeof DesiredStatus)[keyof typeof DesiredStatus];

/** Lifecycle state of the task inside an allocation. */
export const TaskLifecycle = { pending: 'pending', running: 'running', dead: 'dead' } as const;
export type TaskLifecycle = (typeof TaskLifecycle)[keyof typeof TaskLifecycle];

/** Kinds of task event, mirroring what operators see in a scheduler's task history. */
export const TaskEventType = {
  received: 'Received',
  started: 'Started',
  terminated: 'Terminated',
  restarting: 'Restarting',
  killing: 'Killing',
  killed: 'Killed',
  oomKilled: 'OOM Killed',
  restartSignaled: 'Restart Signaled',
  adopted: 'Adopted',
  lost: 'Lost',
  driverFailure: 'Driver Failure',
  timedOut: 'Timed Out',
} as const;
export type TaskEventType = (typeof TaskEventType)[keyof typeof TaskEventType];

/** One entry of a task's history. */
export interface TaskEvent {
  readonly type: TaskEventType;
  readonly message: string;
  /** ISO 8601 UTC. */
  readonly at: string;
}

/** Observed state of one task: what the allocation watcher reads for restart and OOM events. */
export interface TaskState {
  readonly name: string;
  readonly state: TaskLifecycle;
  readonly failed: boolean;
  /** Restarts since the allocation was placed. */
  readonly restarts: number;
  readonly lastRestartAt?: string;
  /** True when the latest exit was a kill for exceeding the memory limit. */
  readonly oomKilled: boolean;
  /** Message of the latest task event. */
  readonly lastEventMessage?: string;
  /** Recent events, oldest first (bounded). */
  readonly events: readonly TaskEvent[];
  /** The task's process id, on the node it runs on. */
  readonly pid?: number;
  /** The container the task runs in and its node, where a driver runs tasks on several nodes (swarm). */
  readonly container?: TaskContainer;
  readonly startedAt?: string;
  readonly finishedAt?: string;
  readonly exitCode?: number | null;
  readonly signal?: string | null;
}

/** A task's container and the node whose engine runs it. */
export interface TaskContainer {
  readonly id: string;
  readonly node: string;
}

/** A port assigned to an allocation. */
export interface AllocatedPort {
  readonly label: string;
  readonly value: number;
  readonly hostIp: string;
}

/** Memory observed for an allocation's process tree, for right-sizing. */
export interface MemoryUsage {
  readonly currentRssBytes: number;
  /** Highest resident set size seen since the allocation was placed. */
  readonly peakRssBytes: number;
  readonly limitBytes: number;
  /** ISO 8601 UTC of the last sample; absent when never sampled. */
  readonly sampledAt?: string;
}

/** CPU use of an allocation's process tree. */
export interface CpuUsage {
  /** Percent of one core over the last sampling period (200 is two cores busy). */
  readonly percent: number;
  /** ISO 8601 UTC of the sample. */
  readonly sampledAt: string;
}

/** An allocation as reported by a scheduler. */
export interface Allocation {
  readonly id: string;
  readonly jobId: string;
  readonly app: string;
  readonly taskGroup: string;
  readonly jobVersion: number;
  readonly kind: AllocationKind;
  /** Slot within the group (0-based) for group allocations. */
  readonly index: number;
  readonly canary: boolean;
  readonly status: AllocationStatus;
  readonly desiredStatus: DesiredStatus;
  readonly statusDescription?: string;
  readonly region: string;
  readonly datacenter: string;
  readonly nodePool: string;
  readonly ports: readonly AllocatedPort[];
  readonly task: TaskState;
  readonly memory: MemoryUsage;
  /** CPU use, on drivers that sample it (the local driver, about every second); absent until sampled. */
  readonly cpu?: CpuUsage;
  /** Dispatch or periodic child this allocation runs for. */
  readonly executionId?: string;
  readonly createdAt: string;
  readonly modifiedAt: string;
}

/** A change observed on an allocation, delivered to watchers. */
export interface AllocationChange {
  readonly allocation: Allocation;
  readonly previousStatus?: AllocationStatus;
  /** The task event that caused the change, when there is one. */
  readonly event?: TaskEvent;
}
