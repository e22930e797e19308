/**
 * What the kubernetes driver can run: a job it cannot (no image, host volumes, a cron with seconds,
 * a plain batch job) is refused before anything is applied, naming the field.
 */
import { ValidationError } from '../../errors.js';
import type { JobSpec } from '../job.js';

/** Throws `ValidationError` naming the field when the kubernetes driver cannot run `job`. */
export function validateJobForKubernetes(job: JobSpec): void {
  if (job.taskGroups.length === 0) throw new ValidationError(`job ${job.id}: taskGroups must not be empty`);
  const names = new Set<string>();
  for (const group of job.taskGroups) {
    const at = `job ${job.id}: taskGroups.${group.name}`;
    if (names.has(group.name)) throw new ValidationError(`${at}: duplicate task group name`);
    names.add(group.name);
    if (!Number.isInteger(group.count) || group.count < 0)
      throw new ValidationError(`${at}.count: ${group.count} must be a non-negative integer`);
    const task = group.task;
    if (task.image === undefined || task.image === '') {
      throw new ValidationError(
        `${at}.task ${task.name}: the release has no container image; the kubernetes driver needs an image release (a native local release runs only on the local driver)`,
        { code: 'image_required' },
      );
    }
    if ((task.volumes ?? []).length > 0) {
      throw new ValidationError(
        `${at}.task.volumes: host volumes are not supported by the kubernetes driver (volume "${task.volumes![0]!.volume}")`,
        { code: 'volumes_not_supported' },
      );
    }
    if (!(task.resources.memoryMb > 0)) throw new ValidationError(`${at}.task.resources.memoryMb: must be positive`);
    for (const file of task.files ?? []) {
      if (file.destination.startsWith('/') || file.destination.split('/').includes('..') || file.destination === '') {
        throw new ValidationError(
          `${at}.task.files.destination: "${file.destination}" must be a relative path inside the allocation directory without ".."`,
        );
      }
    }
    const labels = new Set(group.ports.map((p) => p.label));
    for (const service of group.services) {
      if (!labels.has(service.portLabel))
        throw new ValidationError(`${at}.services.${service.name}.portLabel: no port labelled "${service.portLabel}"`);
    }
  }
  if (job.type === 'periodic') {
    if (!job.periodic) throw new ValidationError(`job ${job.id}: a periodic job needs periodic.cron`);
    if (job.periodic.cron.trim().split(/\s+/).length !== 5 && !job.periodic.cron.trim().startsWith('@')) {
      throw new ValidationError(
        `job ${job.id}: periodic.cron "${job.periodic.cron}" must have 5 fields on the kubernetes driver (CronJobs have no seconds field)`,
      );
    }
  }
  if (job.type === 'batch' && !job.parameterized) {
    throw new ValidationError(
      `job ${job.id}: batch jobs that are neither periodic nor parameterized are not supported by the kubernetes driver`,
      { code: 'batch_not_supported' },
    );
  }
}
