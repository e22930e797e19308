/**
 * Pod and Job views: how pods of the kubernetes driver map back to allocations (status from the pod
 * phase and container states, OOM kills reported like the local driver's), and Jobs to executions.
 */
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import type {
  Allocation,
  AllocatedPort,
  AllocationKind,
  AllocationStatus,
  TaskEvent,
  TaskLifecycle,
} from '../allocation.js';
import type { Execution, ExecutionStatus } from '../dispatch.js';
import { SvcAnnotation, SvcLabel, SvcRole } from './labels.js';
import { memoryLimitBytes } from './translate-job.js';

/** Where allocations are reported to run. */
export interface AllocationPlacement {
  readonly region: string;
  readonly datacenter: string;
}

/** A date as an ISO 8601 string: client-node gives `Date` objects on typed reads and strings on watches. */
export function isoTime(value: Date | string | undefined | null): string | undefined {
  if (value === undefined || value === null) return undefined;
  return value instanceof Date ? value.toISOString() : new Date(value).toISOString();
}

function kindOf(role: string | undefined): AllocationKind {
  if (role === SvcRole.dispatch) return 'dispatch';
  if (role === SvcRole.periodic) return 'periodic_child';
  return 'group';
}

/** True when a pod was written by the driver for a job (it carries the job annotation). */
export function isSvcPod(pod: V1Pod): boolean {
  return pod.metadata?.annotations?.[SvcAnnotation.jobId] !== undefined;
}

/** The allocation a pod stands for. */
export function podToAllocation(pod: V1Pod, placement: AllocationPlacement): Allocation {
  const metadata = pod.metadata ?? {};
  const annotations = metadata.annotations ?? {};
  const labels = metadata.labels ?? {};
  const status = pod.status ?? {};
  const cs = status.containerStatuses?.[0];
  const memoryMb = Number(annotations[SvcAnnotation.memoryMb] ?? 0);
  const createdAt = isoTime(metadata.creationTimestamp) ?? new Date(0).toISOString();
  const events: TaskEvent[] = [{ type: 'Received', message: 'Pod created by the kubernetes driver', at: createdAt }];
  const running = cs?.state?.running;
  const terminated = cs?.state?.terminated;
  const waiting = cs?.state?.waiting;
  const lastTerminated = cs?.lastState?.terminated;
  const restarts = cs?.restartCount ?? 0;
  const oomMessage = `OOM Killed: memory exceeded the limit of ${memoryMb} MB`;
  if (lastTerminated) {
    const at = isoTime(lastTerminated.finishedAt) ?? createdAt;
    events.push(
      lastTerminated.reason === 'OOMKilled'
        ? { type: 'OOM Killed', message: oomMessage, at }
        : { type: 'Terminated', message: `Exit code ${lastTerminated.exitCode}`, at },
    );
    events.push({ type: 'Restarting', message: `Restarted by the kubelet (${restarts} restarts)`, at });
  }
  if (running) events.push({ type: 'Started', message: 'Task started', at: isoTime(running.startedAt) ?? createdAt });
  if (terminated) {
    const at = isoTime(terminated.finishedAt) ?? createdAt;
    events.push(
      terminated.reason === 'OOMKilled'
        ? { type: 'OOM Killed', message: oomMessage, at }
        : {
            type: 'Terminated',
            message: `Exit code ${terminated.exitCode}${terminated.reason ? ` (${terminated.reason})` : ''}`,
            at,
          },
    );
  }
  if (waiting?.reason && waiting.reason !== 'ContainerCreating') {
    events.push({
      type: waiting.reason === 'CrashLoopBackOff' ? 'Restarting' : 'Driver Failure',
      message: `${waiting.reason}${waiting.message ? `: ${waiting.message}` : ''}`,
      at: isoTime(status.startTime) ?? createdAt,
    });
  }
  const phase = status.phase ?? 'Pending';
  const allocationStatus: AllocationStatus =
    phase === 'Succeeded'
      ? 'complete'
      : phase === 'Failed'
        ? 'failed'
        : phase === 'Unknown'
          ? 'lost'
          : phase === 'Running' && running
            ? 'running'
            : 'pending';
  const state: TaskLifecycle = running
    ? 'running'
    : terminated || phase === 'Succeeded' || phase === 'Failed'
      ? 'dead'
      : 'pending';
  // The latest exit decides, as with the local driver: an OOM kill until the task exits otherwise.
  const oomKilled = terminated ? terminated.reason === 'OOMKilled' : lastTerminated?.reason === 'OOMKilled';
  const exitCode = terminated?.exitCode ?? (lastTerminated && !running ? lastTerminated.exitCode : undefined);
  let ports: AllocatedPort[] = [];
  try {
    const declared = JSON.parse(annotations[SvcAnnotation.ports] ?? '[]') as { label: string; value: number }[];
    ports = declared.map((p) => ({ label: p.label, value: p.value, hostIp: status.podIP ?? '' }));
  } catch {
    ports = [];
  }
  const last = events[events.length - 1]!;
  const modifiedAt = [
    createdAt,
    ...events.map((e) => e.at),
    ...(status.conditions ?? []).map((c) => isoTime(c.lastTransitionTime) ?? createdAt),
  ]
    .sort()
    .at(-1)!;
  const role = labels[SvcLabel.role];
  const executionId =
    annotations[SvcAnnotation.executionId] ?? (role === SvcRole.periodic ? labels['job-name'] : undefined);
  return {
    id: metadata.name ?? '',
    jobId: annotations[SvcAnnotation.jobId] ?? '',
    app: annotations[SvcAnnotation.app] ?? '',
    taskGroup: annotations[SvcAnnotation.group] ?? '',
    jobVersion: Number(annotations[SvcAnnotation.jobVersion] ?? 0),
    kind: kindOf(role),
    index: 0,
    canary: role === SvcRole.canary,
    status: allocationStatus,
    desiredStatus: metadata.deletionTimestamp ? 'stop' : 'run',
    ...(waiting?.reason
      ? { statusDescription: waiting.reason }
      : status.reason
        ? { statusDescription: status.reason }
        : {}),
    region: placement.region,
    datacenter: placement.datacenter,
    nodePool: pod.spec?.nodeName ?? 'default',
    ports,
    task: {
      name: annotations[SvcAnnotation.taskName] ?? pod.spec?.containers[0]?.name ?? '',
      state,
      failed: phase === 'Failed' || (terminated !== undefined && terminated.exitCode !== 0),
      restarts,
      ...(lastTerminated?.finishedAt ? { lastRestartAt: isoTime(lastTerminated.finishedAt)! } : {}),
      oomKilled,
      lastEventMessage: last.message,
      events,
      ...(running?.startedAt
        ? { startedAt: isoTime(running.startedAt)! }
        : terminated?.startedAt
          ? { startedAt: isoTime(terminated.startedAt)! }
          : {}),
      ...(terminated?.finishedAt ? { finishedAt: isoTime(terminated.finishedAt)! } : {}),
      ...(exitCode !== undefined ? { exitCode } : {}),
    },
    memory: { currentRssBytes: 0, peakRssBytes: 0, limitBytes: memoryLimitBytes(memoryMb) },
    ...(executionId !== undefined ? { executionId } : {}),
    createdAt,
    modifiedAt,
  };
}

/** Execution status from Job conditions: Complete, Failed (DeadlineExceeded is a timeout), else running. */
export function jobExecutionStatus(job: V1Job): ExecutionStatus {
  const conditions = (job.status?.conditions ?? []).filter((c) => c.status === 'True');
  if (conditions.some((c) => c.type === 'Complete' || c.type === 'SuccessCriteriaMet')) return 'succeeded';
  const failed = conditions.find((c) => c.type === 'Failed' || c.type === 'FailureTarget');
  if (failed) return failed.reason === 'DeadlineExceeded' ? 'timed_out' : 'failed';
  return 'running';
}

/** The execution record of a Job (a dispatch or periodic child), with its pod and log when known. */
export function jobToExecution(job: V1Job, pod: V1Pod | undefined, output: string): Execution {
  const annotations = job.metadata?.annotations ?? {};
  const status = jobExecutionStatus(job);
  const startedAt =
    isoTime(job.status?.startTime) ?? isoTime(job.metadata?.creationTimestamp) ?? new Date(0).toISOString();
  const endCondition = (job.status?.conditions ?? []).find(
    (c) => c.status === 'True' && (c.type === 'Complete' || c.type === 'Failed'),
  );
  const finishedAt =
    status === 'running'
      ? undefined
      : (isoTime(job.status?.completionTime) ?? isoTime(endCondition?.lastTransitionTime));
  const terminated = pod?.status?.containerStatuses?.[0]?.state?.terminated;
  return {
    id: annotations[SvcAnnotation.executionId] ?? job.metadata?.name ?? '',
    jobId: annotations[SvcAnnotation.jobId] ?? '',
    taskGroup: annotations[SvcAnnotation.group] ?? '',
    allocationId: pod?.metadata?.name ?? '',
    status,
    exitCode: terminated?.exitCode ?? null,
    output,
    // Pod logs interleave standard output and error; everything is reported as output.
    errorOutput: '',
    durationMs: finishedAt ? Date.parse(finishedAt) - Date.parse(startedAt) : null,
    startedAt,
    ...(finishedAt ? { finishedAt } : {}),
  };
}
