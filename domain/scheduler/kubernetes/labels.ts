/**
 * Kubernetes labels and annotations: how objects the kubernetes driver writes are found again and
 * mapped back to jobs, task groups, versions, allocations and executions.
 */

/** Labels on every object and pod the driver writes; values are {@link labelValue} forms. */
export const SvcLabel = {
  app: 'svc.dev/app',
  job: 'svc.dev/job',
  group: 'svc.dev/group',
  /** Short hash of the group's roll fingerprint: pods with another value run an older version. */
  version: 'svc.dev/version',
  /** What the object is: see {@link SvcRole}. */
  role: 'svc.dev/role',
  /** Short hash of an execution id (dispatched Jobs and their pods). */
  execution: 'svc.dev/execution',
  managedBy: 'app.kubernetes.io/managed-by',
  /**
   * The node label a job's `nodePool` (the spec's `placement.nodePool`) selects: pods run only on
   * nodes labelled `svc.dev/node-pool=<pool>` (docs/drivers.md).
   */
  nodePool: 'svc.dev/node-pool',
} as const;

/** Annotations carrying the exact (unsanitized) values and the driver's bookkeeping. */
export const SvcAnnotation = {
  jobId: 'svc.dev/job-id',
  app: 'svc.dev/app-name',
  group: 'svc.dev/group-name',
  /** Hash of the object as the driver last wrote it; equal means nothing to write. */
  fingerprint: 'svc.dev/fingerprint',
  /** Job version whose template a pod template (or the job record) holds. */
  jobVersion: 'svc.dev/job-version',
  executionId: 'svc.dev/execution-id',
  memoryMb: 'svc.dev/memory-mb',
  taskName: 'svc.dev/task',
  /** JSON list of `{ label, value }`: the container port of each port label. */
  ports: 'svc.dev/ports',
  /** Registry services (JSON list of `{ name, portLabel, tags, checked }`) a pod's instances are registered under. */
  services: 'svc.dev/services',
} as const;

/** Values of the `svc.dev/role` label. */
export const SvcRole = {
  stable: 'stable',
  canary: 'canary',
  dispatch: 'dispatch',
  periodic: 'periodic',
  files: 'files',
  record: 'job-record',
} as const;
export type SvcRole = (typeof SvcRole)[keyof typeof SvcRole];

/** Value of `app.kubernetes.io/managed-by` on everything the driver writes. */
export const MANAGED_BY = 'svc';

/** Where the allocation directory (rendered files, `local/`, `secrets/`) is mounted in containers. */
export const ALLOC_DIR = '/svc/alloc';

/** A label selector string from `key=value` pairs. */
export function selector(labels: Readonly<Record<string, string>>): string {
  return Object.entries(labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
}
