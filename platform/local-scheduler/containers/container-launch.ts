/**
 * The `podman run` of an allocation whose task names an image: the same environment, ports,
 * volumes, secrets, limits and user as a host process, with the container's own filesystem.
 * Only the allocation's own folders and the app's data folder are mounted: the container sees
 * nothing else of the platform's data folder.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ValidationError } from '../../../domain/errors.js';
import type { AllocationRecord } from '../driver-state.js';
import type { TaskIdentity } from '../isolation/app-identity.js';
import { allocationPaths, taskArgv, type TaskLaunch } from '../tasks/task-environment.js';
import { cpuShares } from '../tasks/cpu-weight.js';
import { cgroupParent } from './container-cgroup.js';
import {
  APP_LABEL,
  containerIdFile,
  containerName,
  PREPARED_BY_LABEL,
  PREPARED_LABEL,
  type ContainerRuntime,
} from './container-runtime.js';
import { createHash } from 'node:crypto';

/**
 * Variables that name a credential file the platform keeps for the app outside its allocation (its
 * database password file, its bucket key): each file is mounted read-only at the same path.
 */
const CREDENTIAL_FILES = ['PGPASSFILE', 'AWS_SHARED_CREDENTIALS_FILE'];

/** Host variables that describe the host, not the app: the image's own apply in a container. */
const HOST_ONLY = new Set(['PATH', 'LANG', 'LC_ALL', 'TZ', 'USER', 'LOGNAME']);

/** The podman client's argv and environment for one container start. */
export interface ContainerArgv {
  readonly file: string;
  readonly args: string[];
  /** The podman client's environment: its own settings plus the app's variables, passed by name. */
  readonly env: Record<string, string>;
  /** What the container is made from, whether run or created (see {@link containerDigest}). */
  readonly digest: string;
}

/**
 * Builds the `podman run` of `record` (or, with `verb` create, the `podman create` of a container
 * prepared ahead of its start, ADR 0228): `taskEnv` is the environment a host process would get;
 * its values reach the container through the client's environment (`--env NAME`), never its argv.
 */
export function containerRunArgv(
  record: AllocationRecord,
  runtime: ContainerRuntime,
  launch: TaskLaunch,
  identity: TaskIdentity | undefined,
  taskEnv: Readonly<Record<string, string>>,
  verb: 'run' | 'create' = 'run',
): ContainerArgv {
  const task = record.group.task;
  const image = task.image;
  if (image === undefined) throw new ValidationError(`task ${task.name}: no image to run`);
  const paths = allocationPaths(record.dir);
  const memoryMb = task.resources.memoryMb;
  // Everything but the global arguments, the verb and the prepared label: what the digest covers.
  const args = [
    '--name',
    containerName(record.id),
    '--replace',
    `--cidfile=${containerIdFile(record.dir)}`,
    '--pull=missing',
    // Pull progress would land in the app's own output (a function's result among it).
    '--quiet',
    '--log-driver=passthrough',
    '--label',
    `${APP_LABEL}=${record.app}`,
    '--label',
    `io.svc.allocation=${record.id}`,
    '--ulimit',
    `nofile=${runtime.limits.nofile}:${runtime.limits.nofile}`,
    '--ulimit',
    `nproc=${runtime.limits.nproc}:${runtime.limits.nproc}`,
    `--memory=${memoryMb}m`,
    `--memory-swap=${memoryMb}m`,
    `--cpu-shares=${cpuShares(task.resources.cpuMhz)}`,
    `--stop-signal=${record.group.drain.signal}`,
    `--stop-timeout=${Math.ceil(record.group.drain.timeout.milliseconds / 1000)}`,
    '--security-opt=no-new-privileges',
  ];
  if (runtime.cgroupParentRoot !== undefined)
    args.push(`--cgroup-parent=${cgroupParent(runtime.cgroupParentRoot, record.id)}`);
  if (identity)
    args.push('--user', `${identity.uid}:${identity.gid}`, ...identity.groups.map((g) => `--group-add=${g}`));
  // The image's /etc/passwd gets the app's user, so `id` and shells name it as on the host.
  if (identity?.name !== undefined)
    args.push(`--passwd-entry=${identity.name}:*:${identity.uid}:${identity.gid}::${launch.home}:/bin/sh`);
  if (runtime.network === 'host') args.push('--network=host');
  else for (const port of record.ports) args.push('--publish', `127.0.0.1:${port.value}:${port.value}`);
  // The allocation's folder (secrets, rendered files, local/) and the app's data folder (HOME) keep
  // their host paths, so the SVC_* variables name the same places inside as outside.
  args.push('--volume', `${record.dir}:${record.dir}`);
  args.push('--volume', `${launch.home}:${launch.home}`);
  args.push('--volume', `${paths.tmp}:/tmp`);
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin',
    ...runtime.podman.env,
  };
  const volumeEnv: Record<string, string> = {};
  for (const mount of task.volumes ?? []) {
    const source = launch.volumePaths[mount.volume];
    if (source === undefined) continue;
    const destination = path.posix.isAbsolute(mount.destination) ? mount.destination : `/${mount.destination}`;
    args.push('--volume', `${source}:${destination}${mount.readOnly ? ':ro' : ''}`);
    volumeEnv[`SVC_VOLUME_${mount.volume.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`] = destination;
  }
  for (const name of CREDENTIAL_FILES) {
    const file = taskEnv[name];
    if (file !== undefined && path.isAbsolute(file) && fs.existsSync(file)) args.push('--volume', `${file}:${file}:ro`);
  }
  const appEnv: Record<string, string> = { ...taskEnv, ...volumeEnv, TMPDIR: '/tmp' };
  for (const [name, value] of Object.entries(appEnv)) {
    if (HOST_ONLY.has(name) || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) continue;
    args.push('--env', name);
    env[name] = value;
  }
  // `command` is the release's ENTRYPOINT and CMD resolved, or the process's own: it replaces the
  // image's entrypoint, as a Kubernetes container's `command` does.
  if (task.command !== undefined) {
    const argv = taskArgv(task);
    args.push(`--entrypoint=${JSON.stringify([argv.file, ...argv.args])}`);
  }
  args.push(image);
  return {
    file: runtime.podman.program,
    args: [
      ...runtime.podman.globalArgs(),
      verb,
      // A prepared container names the allocations folder of the driver that made it: a driver's
      // sweep removes only its own, never those of another platform on the host.
      ...(verb === 'create'
        ? ['--label', `${PREPARED_LABEL}=true`, '--label', `${PREPARED_BY_LABEL}=${path.dirname(record.dir)}`]
        : []),
      ...args,
    ],
    env,
    digest: containerDigest(args, env),
  };
}

/**
 * What a container is made from: its arguments and every value of the client's environment, hashed.
 * A prepared container is started only when the start would have run exactly it; the digest stays
 * in memory (the environment holds the app's secrets).
 */
function containerDigest(args: readonly string[], env: Readonly<Record<string, string>>): string {
  const hash = createHash('sha256');
  for (const arg of args) hash.update(arg).update('\0');
  for (const name of Object.keys(env).sort()) hash.update(name).update('=').update(env[name]!).update('\0');
  return hash.digest('hex');
}

/** The attached `podman start` of a prepared container: it ends with the container's exit code, as `podman run` does. */
export function containerStartArgv(run: ContainerArgv, runtime: ContainerRuntime, allocationId: string): ContainerArgv {
  return { ...run, args: [...runtime.podman.globalArgs(), 'start', '--attach', containerName(allocationId)] };
}
