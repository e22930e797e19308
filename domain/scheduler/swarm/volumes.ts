/**
 * Swarm volumes (ADR 0229): each of an app's volumes is a named volume of the engine's `local` driver,
 * `svc-<app>-<volume>`, kept on the node where a task mounted it (its data does not follow a task to
 * another node: pin such an app with `placement.nodePool`). Every process of the app mounts the same
 * volume at its `mount` path, read-only where the spec says so.
 *
 * Tasks never run as root, and a new volume's root folder belongs to root. So before a version whose
 * group mounts volumes starts, the driver runs a global job of the app's own image as root on every
 * node that may run the group: it hands each volume's root folder (not its contents) to the task's
 * user. Docker's copy of the image's folder into a new volume is off (`NoCopy`): that copy would give
 * the folder back to the image's owner, and a volume starts empty, as a host folder does on the local
 * driver.
 */
import type Dockerode from 'dockerode';
import type { JobSpec, TaskGroupSpec } from '../job.js';
import { MANAGED_BY, NODE_POOL_LABEL, SwarmLabel } from './labels.js';
import { shortHash } from './names.js';
import { imageForNodes } from './node-registry.js';

/** Labels of a volume the driver mounts: the app it belongs to and the volume's own name. */
export const VolumeLabel = { volume: 'io.svc.volume', purpose: 'io.svc.purpose' } as const;

/** The engine volume that holds an app's volume `volume`. */
export function volumeName(app: string, volume: string): string {
  const raw = `svc-${app}-${volume}`;
  const clean = raw.replace(/[^a-zA-Z0-9_.-]/g, '-');
  return clean === raw && clean.length <= 128 ? clean : `${clean.slice(0, 119)}-${shortHash(raw)}`;
}

/** `SVC_VOLUME_<NAME>`: the variable that gives a task its volume's mount path. */
export function volumeVariable(volume: string): string {
  return `SVC_VOLUME_${volume.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
}

function mountPath(destination: string): string {
  return destination.startsWith('/') ? destination : `/${destination}`;
}

/** The mounts of a group's volumes, as its tasks have them. */
export function volumeMounts(job: JobSpec, group: TaskGroupSpec): Dockerode.MountSettings[] {
  return (group.task.volumes ?? []).map((mount) => ({
    Type: 'volume' as const,
    Source: volumeName(job.app, mount.volume),
    Target: mountPath(mount.destination),
    ReadOnly: mount.readOnly,
    VolumeOptions: {
      NoCopy: true,
      Labels: { [SwarmLabel.managedBy]: MANAGED_BY, [SwarmLabel.app]: job.app, [VolumeLabel.volume]: mount.volume },
      DriverConfig: { Name: 'local', Options: {} },
    },
  }));
}

/** The variables that name each volume's mount path. */
export function volumeVariables(group: TaskGroupSpec): Record<string, string> {
  const out: Record<string, string> = {};
  for (const mount of group.task.volumes ?? []) out[volumeVariable(mount.volume)] = mountPath(mount.destination);
  return out;
}

/** The node constraints of a job's tasks. */
export function placementConstraints(job: JobSpec): string[] {
  return job.nodePool === undefined ? [] : [`node.labels.${NODE_POOL_LABEL}==${job.nodePool}`];
}

/** Where the owner job mounts volume number `index` (never a path of the image's own). */
function ownerTarget(index: number): string {
  return `/svc/volumes/${index}`;
}

/**
 * The global job that hands the root folder of each of a group's volumes to `user` (the task's user, in
 * `chown` syntax), on every node the group may run on: the app's own image, as root, `chown` only.
 */
export function volumeOwnerJob(
  job: JobSpec,
  group: TaskGroupSpec,
  name: string,
  user: string,
  nodeRegistry?: string,
): Dockerode.ServiceSpec {
  const mounts = volumeMounts(job, group).map((mount, index) => ({
    ...mount,
    Target: ownerTarget(index),
    ReadOnly: false,
  }));
  const constraints = placementConstraints(job);
  return {
    Name: name,
    Labels: {
      [SwarmLabel.managedBy]: MANAGED_BY,
      [SwarmLabel.app]: job.app,
      [SwarmLabel.job]: job.id,
      [SwarmLabel.group]: group.name,
      [VolumeLabel.purpose]: 'volume-owner',
    },
    TaskTemplate: {
      ContainerSpec: {
        Image: imageForNodes(group.task.image!, nodeRegistry),
        Command: ['chown', user, ...mounts.map((m) => m.Target)],
        User: '0:0',
        Mounts: mounts,
      },
      RestartPolicy: { Condition: 'none' },
      ...(constraints.length > 0 ? { Placement: { Constraints: constraints } } : {}),
    },
    Mode: { GlobalJob: {} },
  };
}

/** What a volume owner job's outcome depends on: the same key needs no second run. */
export function volumeOwnerKey(job: JobSpec, group: TaskGroupSpec, user: string): string {
  return shortHash(
    JSON.stringify([group.task.image, user, placementConstraints(job), volumeMounts(job, group).map((m) => m.Source)]),
    16,
  );
}
