/**
 * Job normalization: the exact shape a driver stores and compares, whatever richer values the
 * translator passed in (e.g. parsed Go durations that also carry their text and nanoseconds).
 */
import type { Duration } from './duration.js';
import type { JobSpec, TaskGroupSpec } from './job.js';

/** A duration reduced to whole, non-negative milliseconds. */
export function normalizeDuration(value: Duration): Duration {
  return { milliseconds: Math.max(0, Math.round(value.milliseconds)) };
}

function normalizeGroup(group: TaskGroupSpec): TaskGroupSpec {
  const { task, drain, restart, services } = group;
  return {
    ...group,
    task: { ...task, ...(task.timeout ? { timeout: normalizeDuration(task.timeout) } : {}) },
    drain: { ...drain, timeout: normalizeDuration(drain.timeout) },
    ...(restart
      ? {
          restart: {
            initialDelay: normalizeDuration(restart.initialDelay),
            maxDelay: normalizeDuration(restart.maxDelay),
            resetAfter: normalizeDuration(restart.resetAfter),
            ...(restart.attempts !== undefined ? { attempts: restart.attempts } : {}),
            ...(restart.interval ? { interval: normalizeDuration(restart.interval) } : {}),
          },
        }
      : {}),
    services: services.map((s) =>
      s.check
        ? {
            ...s,
            check: {
              ...s.check,
              interval: normalizeDuration(s.check.interval),
              timeout: normalizeDuration(s.check.timeout),
            },
          }
        : s,
    ),
  };
}

/** The job with every duration reduced to `{ milliseconds }`, so equal jobs fingerprint equally and serialize as JSON. */
export function normalizeJob(job: JobSpec): JobSpec {
  return { ...job, taskGroups: job.taskGroups.map(normalizeGroup) };
}
