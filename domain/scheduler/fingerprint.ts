/**
 * Fingerprints: canonical text forms of jobs and task groups, so that "did this change?" is a
 * string comparison and re-submitting an identical job is a no-op.
 */
import { canonicalJson } from '../canonical-json.js';
import type { JobSpec, TaskGroupSpec } from './job.js';

export { canonicalJson };

/** The whole job: any difference means the submission is an update. */
export function jobFingerprint(job: JobSpec): string {
  return canonicalJson(job);
}

/**
 * What requires replacing a group's allocations: everything about the group and the job-level
 * placement except the count, canary count and rendered files (files restart in place).
 */
export function rollFingerprint(job: JobSpec, group: TaskGroupSpec): string {
  const { count: _count, canary: _canary, task, ...rest } = group;
  const { files: _files, ...taskRest } = task;
  return canonicalJson({
    placement: { region: job.region, datacenters: job.datacenters, nodePool: job.nodePool, type: job.type },
    group: rest,
    task: taskRest,
  });
}

/** The rendered files of a group: a change restarts tasks in place. */
export function filesFingerprint(group: TaskGroupSpec): string {
  return canonicalJson(group.task.files ?? []);
}
