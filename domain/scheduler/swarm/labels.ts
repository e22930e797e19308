/**
 * Swarm labels: how the services, secrets and containers the swarm driver writes are found again and
 * mapped back to jobs, task groups and versions (docs/drivers.md). Labels carry exact values: Swarm
 * label values are free text.
 */

/** Labels on every service and secret the driver writes, and on its tasks' containers. */
export const SwarmLabel = {
  managedBy: 'io.svc.managed-by',
  app: 'io.svc.app',
  job: 'io.svc.job',
  group: 'io.svc.group',
  /** Short hash of what replaces a group's tasks (its roll fingerprint and files): see `groupVersionHash`. */
  version: 'io.svc.version',
  /** Job version whose template the service runs. */
  jobVersion: 'io.svc.job-version',
  /** JSON list of `{ label, value }`: the container port of each port label. */
  ports: 'io.svc.ports',
  /** Registry services (JSON list of `{ name, portLabel, tags, checked }`) a task's instances are registered under. */
  services: 'io.svc.services',
  /** Memory limit in MB, reported on allocations. */
  memoryMb: 'io.svc.memory-mb',
  /** Hash of the service spec as the driver last wrote it: equal means nothing to write. */
  fingerprint: 'io.svc.fingerprint',
  /** The execution (a dispatch or a cron tick) a run-once service and its task are. */
  execution: 'io.svc.execution',
  /** What a run-once service is: `dispatch` (a function invocation) or `periodic_child` (a cron tick). */
  kind: 'io.svc.kind',
  /** The secret's key (an app secret file or a rendered file), on secrets the driver writes. */
  secretOf: 'io.svc.secret-of',
} as const;

/** Value of {@link SwarmLabel.managedBy} on everything the driver writes. */
export const MANAGED_BY = 'svc';

/**
 * The node label a job's `nodePool` (the spec's `placement.nodePool`) selects: tasks run only on nodes
 * labelled `svc.node-pool=<pool>` (`docker node update --label-add svc.node-pool=<pool> <node>`).
 */
export const NODE_POOL_LABEL = 'svc.node-pool';

/** Where the allocation folder (`secrets/`, rendered files) is in a task's container. */
export const ALLOC_DIR = '/svc/alloc';

/** First container port handed to ports without a static number (each task has its own network namespace). */
export const FIRST_DYNAMIC_PORT = 8080;
