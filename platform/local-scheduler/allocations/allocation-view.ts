/**
 * Allocation views: the read-only port shapes built from the driver's persisted records.
 */
import type { Allocation, Execution, JobStatus } from '../../../domain/scheduler/index.js';
import type { AllocationRecord, ExecutionRecord, JobRecord } from '../driver-state.js';

/** A deep, detached copy of an allocation record in port form. */
export function toAllocation(rec: AllocationRecord): Allocation {
  const last = rec.task.events[rec.task.events.length - 1];
  return structuredClone({
    id: rec.id,
    jobId: rec.jobId,
    app: rec.app,
    taskGroup: rec.taskGroup,
    jobVersion: rec.jobVersion,
    kind: rec.kind,
    index: rec.index,
    canary: rec.canary,
    status: rec.status,
    desiredStatus: rec.desiredStatus,
    ...(rec.statusDescription !== undefined ? { statusDescription: rec.statusDescription } : {}),
    region: rec.region,
    datacenter: rec.datacenter,
    nodePool: rec.nodePool,
    ports: rec.ports,
    task: {
      name: rec.task.name,
      state: rec.task.state,
      failed: rec.task.failed,
      restarts: rec.task.restarts,
      ...(rec.task.lastRestartAt !== undefined ? { lastRestartAt: rec.task.lastRestartAt } : {}),
      oomKilled: rec.task.oomKilled,
      ...(last ? { lastEventMessage: last.message } : {}),
      events: rec.task.events,
      ...(rec.task.pid !== undefined ? { pid: rec.task.pid } : {}),
      ...(rec.task.startedAt !== undefined ? { startedAt: rec.task.startedAt } : {}),
      ...(rec.task.finishedAt !== undefined ? { finishedAt: rec.task.finishedAt } : {}),
      ...(rec.task.exitCode !== undefined ? { exitCode: rec.task.exitCode } : {}),
      ...(rec.task.signal !== undefined ? { signal: rec.task.signal } : {}),
    },
    memory: rec.memory,
    ...(rec.cpu !== undefined ? { cpu: rec.cpu } : {}),
    ...(rec.executionId !== undefined ? { executionId: rec.executionId } : {}),
    createdAt: rec.createdAt,
    modifiedAt: rec.modifiedAt,
  });
}

/** A copy of an execution record in port form. */
export function toExecution(rec: ExecutionRecord): Execution {
  return structuredClone(rec);
}

/** A copy of a job record in port form. */
export function toJobStatus(rec: JobRecord, nextLaunchAt: Date | null | undefined): JobStatus {
  return structuredClone({
    spec: rec.spec,
    version: rec.version,
    status: rec.status,
    paused: rec.paused,
    awaitingPromotion: rec.awaitingPromotion,
    submittedAt: rec.submittedAt,
    ...(nextLaunchAt ? { nextLaunchAt: nextLaunchAt.toISOString() } : {}),
  });
}
