/**
 * The platform's variables of a task in a container (the kubernetes and swarm drivers): where its
 * allocation folder is mounted, which job and group it runs, its region, datacenter and memory limit.
 */
import type { JobSpec, TaskGroupSpec } from './job.js';

/** The `SVC_*` variables of `group`'s task, its allocation folder mounted at `allocDir`. */
export function containerTaskVariables(
  job: JobSpec,
  group: TaskGroupSpec,
  region: string,
  allocDir: string,
): Record<string, string> {
  return {
    SVC_ALLOC_DIR: allocDir,
    SVC_SECRETS_DIR: `${allocDir}/secrets`,
    SVC_TASK_DIR: `${allocDir}/local`,
    SVC_JOB_ID: job.id,
    SVC_TASK_GROUP: group.name,
    SVC_REGION: job.region ?? region,
    SVC_DC: job.datacenters?.[0] ?? 'dc1',
    SVC_MEMORY_LIMIT_MB: String(group.task.resources.memoryMb),
  };
}
