/**
 * What the swarm driver runs (docs/drivers.md): service jobs, cron (periodic) jobs and dispatched batch
 * jobs (functions) of images. A job it cannot honour is refused with the reason, before anything is written.
 */
import { ValidationError } from '../../errors.js';
import type { JobSpec } from '../job.js';

/** Refuses a job the swarm driver cannot run. */
export function validateJobForSwarm(job: JobSpec): void {
  const problems: string[] = [];
  if (job.type === 'batch' && job.parameterized === undefined)
    problems.push(
      'job type "batch" without parameters: the swarm driver runs batch jobs only when dispatched (functions)',
    );
  for (const group of job.taskGroups) {
    if (group.task.image === undefined)
      problems.push(
        `task group "${group.name}" has no image: the swarm driver runs images, built and pushed by the deploy`,
      );
  }
  if (problems.length > 0)
    throw new ValidationError(`job "${job.id}" cannot run on the swarm driver: ${problems.join('; ')}`, {
      code: 'unsupported_by_driver',
      details: { driver: 'swarm', job: job.id, problems },
    });
}
