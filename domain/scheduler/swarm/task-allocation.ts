/**
 * A Swarm task read back as an allocation. A task's container labels (its spec's) name its app, job,
 * group, version and ports; its status names its state, container and the host ports the engine
 * published. States: `new` to `starting` are pending, `running` runs, `complete` and `shutdown` are
 * complete, `failed` and `rejected` failed, `orphaned` (its node gone) lost.
 */
import type { Allocation, AllocationStatus, TaskEvent, TaskEventType, TaskLifecycle } from '../allocation.js';
import { SwarmLabel } from './labels.js';

/** The parts of a Swarm task the driver reads (the Engine API's `Task`). */
export interface SwarmTask {
  readonly ID?: string;
  readonly ServiceID?: string;
  readonly NodeID?: string;
  readonly Slot?: number;
  readonly CreatedAt?: string;
  readonly UpdatedAt?: string;
  readonly DesiredState?: string;
  readonly Spec?: { readonly ContainerSpec?: { readonly Labels?: Readonly<Record<string, string>> } };
  readonly Status?: {
    readonly Timestamp?: string;
    readonly State?: string;
    readonly Message?: string;
    readonly Err?: string;
    readonly ContainerStatus?: { readonly ContainerID?: string; readonly PID?: number; readonly ExitCode?: number };
    readonly PortStatus?: {
      readonly Ports?: readonly { readonly TargetPort?: number; readonly PublishedPort?: number }[];
    };
  };
}

/** Where a driver's allocations are placed. */
export interface SwarmPlacement {
  readonly region: string;
  readonly datacenter: string;
  /** The address each node is reached at, by node id. */
  readonly nodeAddress: (nodeId: string) => string | undefined;
}

/** The allocation status of a task state. */
export function allocationStatusOf(state: string | undefined): AllocationStatus {
  if (state === 'running') return 'running';
  if (state === 'complete' || state === 'shutdown' || state === 'remove') return 'complete';
  if (state === 'failed' || state === 'rejected') return 'failed';
  if (state === 'orphaned') return 'lost';
  return 'pending';
}

function parse<T>(text: string | undefined, fallback: T): T {
  try {
    return text === undefined ? fallback : (JSON.parse(text) as T);
  } catch {
    return fallback;
  }
}

/** True when the task belongs to a service the driver wrote. */
export function isSvcTask(task: SwarmTask): boolean {
  return task.Spec?.ContainerSpec?.Labels?.[SwarmLabel.managedBy] !== undefined && task.ID !== undefined;
}

/** The allocation a task is. */
export function taskToAllocation(task: SwarmTask, placement: SwarmPlacement): Allocation {
  const labels = task.Spec?.ContainerSpec?.Labels ?? {};
  const state = task.Status?.State;
  const status = allocationStatusOf(state);
  const lifecycle: TaskLifecycle = status === 'running' ? 'running' : status === 'pending' ? 'pending' : 'dead';
  const at = task.Status?.Timestamp ?? task.UpdatedAt ?? task.CreatedAt ?? new Date(0).toISOString();
  const message = task.Status?.Err ?? task.Status?.Message ?? state ?? '';
  const events: TaskEvent[] = [
    { type: 'Received', message: 'Task received by the swarm driver', at: task.CreatedAt ?? at },
  ];
  const type: TaskEventType | undefined =
    status === 'running'
      ? 'Started'
      : status === 'failed'
        ? 'Terminated'
        : status === 'complete'
          ? 'Killed'
          : status === 'lost'
            ? 'Lost'
            : undefined;
  if (type) events.push({ type, message: `${message} (task ${state})`, at });
  const address = task.NodeID === undefined ? undefined : placement.nodeAddress(task.NodeID);
  const containerPorts = parse<{ label: string; value: number }[]>(labels[SwarmLabel.ports], []);
  const published = task.Status?.PortStatus?.Ports ?? [];
  const ports = containerPorts.flatMap((port) => {
    const bound = published.find((p) => p.TargetPort === port.value);
    return bound?.PublishedPort === undefined || address === undefined
      ? []
      : [{ label: port.label, value: bound.PublishedPort, hostIp: address }];
  });
  const memoryMb = Number(labels[SwarmLabel.memoryMb] ?? 0);
  const exitCode = task.Status?.ContainerStatus?.ExitCode;
  return {
    id: task.ID!,
    jobId: labels[SwarmLabel.job] ?? '',
    app: labels[SwarmLabel.app] ?? '',
    taskGroup: labels[SwarmLabel.group] ?? '',
    jobVersion: Number(labels[SwarmLabel.jobVersion] ?? 1),
    kind:
      labels[SwarmLabel.execution] === undefined
        ? 'group'
        : labels[SwarmLabel.kind] === 'periodic_child'
          ? 'periodic_child'
          : 'dispatch',
    ...(labels[SwarmLabel.execution] !== undefined ? { executionId: labels[SwarmLabel.execution] } : {}),
    index: Math.max(0, (task.Slot ?? 1) - 1),
    canary: false,
    status,
    desiredStatus: task.DesiredState === 'running' || task.DesiredState === 'ready' ? 'run' : 'stop',
    statusDescription: message,
    region: placement.region,
    datacenter: placement.datacenter,
    nodePool: 'default',
    ports,
    task: {
      name: labels[SwarmLabel.group] ?? '',
      state: lifecycle,
      failed: status === 'failed',
      restarts: 0,
      oomKilled: false,
      lastEventMessage: message,
      events,
      ...(task.Status?.ContainerStatus?.PID ? { pid: task.Status.ContainerStatus.PID } : {}),
      ...(task.Status?.ContainerStatus?.ContainerID && task.NodeID
        ? { container: { id: task.Status.ContainerStatus.ContainerID, node: task.NodeID } }
        : {}),
      ...(status === 'running' ? { startedAt: at } : {}),
      ...(lifecycle === 'dead' ? { finishedAt: at } : {}),
      ...(exitCode !== undefined && lifecycle === 'dead' ? { exitCode } : {}),
    },
    memory: { currentRssBytes: 0, peakRssBytes: 0, limitBytes: memoryMb * 1024 * 1024 },
    createdAt: task.CreatedAt ?? at,
    modifiedAt: task.UpdatedAt ?? at,
  };
}
