/**
 * Job validation for the local driver: the rules a job must meet before the host can run it.
 */
import { Cron } from 'croner';
import { ValidationError } from '../../domain/errors.js';
import type { JobSpec } from '../../domain/scheduler/index.js';
import { assertSafeDestination, type HostVolume } from './tasks/task-environment.js';

const VOLUME_NAME = /^[a-zA-Z0-9][a-zA-Z0-9._-]{0,63}$/;
const ID = /^[a-zA-Z0-9][a-zA-Z0-9._-]{0,127}$/;
/** Job ids may also carry a region suffix `@<region>` (see ADR 0060). */
const JOB_ID = /^[a-zA-Z0-9][a-zA-Z0-9._-]{0,127}(@[a-zA-Z0-9][a-zA-Z0-9._-]{0,62})?$/;

/** Throws `ValidationError` naming the field when the local driver cannot run `job`. */
export function validateJobForLocalDriver(
  job: JobSpec,
  hostVolumes: Readonly<Record<string, HostVolume>>,
  runsImages = false,
): void {
  if (!JOB_ID.test(job.id))
    throw new ValidationError(
      `job.id: "${job.id}" must be 1-128 letters, digits, ".", "_" or "-", optionally followed by @<region>`,
    );
  if (job.taskGroups.length === 0) throw new ValidationError(`job ${job.id}: taskGroups must not be empty`);
  const names = new Set<string>();
  for (const group of job.taskGroups) {
    const at = `job ${job.id}: taskGroups.${group.name}`;
    if (!ID.test(group.name)) throw new ValidationError(`${at}: name must be 1-128 letters, digits, ".", "_" or "-"`);
    if (names.has(group.name)) throw new ValidationError(`${at}: duplicate task group name`);
    names.add(group.name);
    if (!Number.isInteger(group.count) || group.count < 0)
      throw new ValidationError(`${at}.count: ${group.count} must be a non-negative integer`);
    const task = group.task;
    if (task.image !== undefined && !runsImages) {
      throw new ValidationError(
        `${at}.task.image: "${task.image}" is a container image, and this local driver runs no containers (no container engine answers, or SVC_CONTAINER_RUNTIME=native; see \`svc doctor\`)`,
        { code: 'image_not_supported' },
      );
    }
    if (task.image !== undefined) {
      if (task.image === '' || /\s/.test(task.image))
        throw new ValidationError(`${at}.task.image: "${task.image}" is not an image reference`);
    } else if (
      task.command === undefined ||
      (Array.isArray(task.command) && task.command.length === 0) ||
      task.command === ''
    ) {
      throw new ValidationError(`${at}.task.command: the local driver needs a command (a release's CMD/ENTRYPOINT)`);
    }
    if (task.workdir !== undefined && !task.workdir.startsWith('/')) {
      throw new ValidationError(`${at}.task.workdir: "${task.workdir}" must be an absolute host path`);
    }
    if (!(task.resources.memoryMb > 0)) throw new ValidationError(`${at}.task.resources.memoryMb: must be positive`);
    for (const file of task.files ?? []) assertSafeDestination(file);
    for (const mount of task.volumes ?? []) {
      // A volume that is not a configured host folder is the app's own folder, named after the volume.
      if (!hostVolumes[mount.volume] && !VOLUME_NAME.test(mount.volume)) {
        throw new ValidationError(
          `${at}.task.volumes: "${mount.volume}" must be 1-64 letters, digits, ".", "_" or "-" starting with a letter or digit (it names the app's volume folder)`,
        );
      }
    }
    const labels = new Set<string>();
    for (const port of group.ports) {
      if (labels.has(port.label)) throw new ValidationError(`${at}.ports: duplicate label "${port.label}"`);
      labels.add(port.label);
      if (port.static !== undefined) {
        if (!Number.isInteger(port.static) || port.static < 1 || port.static > 65535) {
          throw new ValidationError(`${at}.ports.${port.label}.static: ${port.static} is not a port number`);
        }
        if (group.count > 1 || (group.canary ?? 0) > 0) {
          throw new ValidationError(
            `${at}.ports.${port.label}.static: a static port allows one allocation, count is ${group.count}`,
          );
        }
      }
    }
    for (const service of group.services) {
      if (!labels.has(service.portLabel))
        throw new ValidationError(`${at}.services.${service.name}.portLabel: no port labelled "${service.portLabel}"`);
    }
  }
  if (job.type === 'periodic') {
    if (!job.periodic) throw new ValidationError(`job ${job.id}: a periodic job needs periodic.cron`);
    try {
      new Cron(job.periodic.cron, {
        paused: true,
        ...(job.periodic.timeZone ? { timezone: job.periodic.timeZone } : {}),
      }).stop();
    } catch (error) {
      throw new ValidationError(
        `job ${job.id}: periodic.cron "${job.periodic.cron}" is not a cron expression: ${(error as Error).message}`,
        {
          cause: error,
        },
      );
    }
  } else if (job.periodic) {
    throw new ValidationError(`job ${job.id}: periodic is only valid for periodic jobs`);
  }
  if (job.parameterized && job.type !== 'batch')
    throw new ValidationError(`job ${job.id}: parameterized is only valid for batch jobs`);
}
