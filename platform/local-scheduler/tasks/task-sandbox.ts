/**
 * Task sandbox: what wraps a host task's command so it runs with the host's own isolation tools
 * (util-linux): a private mount namespace (`unshare --mount`) with its own `/tmp` and its volumes
 * bind-mounted into the allocation directory, resource limits (`prlimit`), and an unprivileged
 * identity without supplementary groups or new privileges (`setpriv`). Each wrapper `exec`s the
 * next, so the task keeps the pid the driver spawned and re-adopts (ADR 0047).
 */
import { spawnSync } from 'node:child_process';
import type { TaskIdentity } from '../isolation/app-identity.js';

/** Per-task resource limits (`RLIMIT_NOFILE`, `RLIMIT_NPROC`), soft = hard. */
export interface TaskLimits {
  /** Open files per process. @default 4096 */
  readonly nofile: number;
  /**
   * Processes and threads of the task's user (all of the app's processes, since each app has its
   * own user); applied only when the task runs as its own user. @default 1024
   */
  readonly nproc: number;
}

/** The limits applied when the driver options set none. */
export const DEFAULT_TASK_LIMITS: TaskLimits = { nofile: 4096, nproc: 1024 };

/** A directory bind-mounted inside the task's mount namespace. */
export interface BindMount {
  readonly source: string;
  readonly target: string;
  readonly readOnly: boolean;
}

/** Whether tasks get a private mount namespace on this host. */
export interface PrivateMounts {
  readonly available: boolean;
  /** Why not, when unavailable. */
  readonly reason?: string;
}

/**
 * Probes once whether `unshare --mount` can create a mount namespace and bind-mount in it (root
 * with CAP_SYS_ADMIN; refused in many containers and for other users).
 */
export function detectPrivateMounts(): PrivateMounts {
  if (process.getuid?.() !== 0)
    return {
      available: false,
      reason: 'the platform is not root: no private mount namespace, /tmp is shared and volumes are plain folders',
    };
  const probe = spawnSync(
    'unshare',
    ['--mount', '--propagation', 'private', '--', '/bin/sh', '-c', 'mount -t tmpfs svc-probe /mnt'],
    { stdio: ['ignore', 'ignore', 'pipe'], timeout: 5000 },
  );
  if (probe.status === 0) return { available: true };
  const detail = probe.error
    ? probe.error.message
    : String(probe.stderr ?? '').trim() || `exit ${String(probe.status)}`;
  return {
    available: false,
    reason: `unshare --mount failed on this host (${detail}): /tmp is shared and volumes are plain folders`,
  };
}

/**
 * Bind-mounts each `source target mode` triple, then `exec`s the rest of its arguments. It runs in
 * the new mount namespace as root, before the identity is dropped.
 */
export const MOUNT_SCRIPT =
  'set -e; while [ "$1" != "--" ]; do mount --bind "$1" "$2"; if [ "$3" = ro ]; then mount -o remount,bind,ro "$2"; fi; shift 3; done; shift; exec "$@"';

/** An argv. */
export interface Argv {
  readonly file: string;
  readonly args: readonly string[];
}

function flatten(argv: Argv): string[] {
  return [argv.file, ...argv.args];
}

/** `argv` run as `identity` (no supplementary groups but the listed ones, no new privileges) under `limits`. */
export function dropPrivileges(argv: Argv, identity: TaskIdentity | undefined, limits: TaskLimits): Argv {
  let inner = flatten(argv);
  if (identity) {
    const groups = identity.groups.length > 0 ? ['--groups', identity.groups.join(',')] : ['--clear-groups'];
    inner = [
      '/usr/bin/setpriv',
      '--reuid',
      String(identity.uid),
      '--regid',
      String(identity.gid),
      ...groups,
      '--no-new-privs',
      '--',
      ...inner,
    ];
  }
  // NPROC counts every process of the real user: meaningful only for a user of the app's own.
  const limitArgs = [
    `--nofile=${limits.nofile}:${limits.nofile}`,
    ...(identity ? [`--nproc=${limits.nproc}:${limits.nproc}`] : []),
  ];
  return { file: '/usr/bin/prlimit', args: [...limitArgs, '--', ...inner] };
}

/** `argv` in a private mount namespace with `mounts` bind-mounted first. */
export function inMountNamespace(argv: Argv, mounts: readonly BindMount[]): Argv {
  const triples = mounts.flatMap((m) => [m.source, m.target, m.readOnly ? 'ro' : 'rw']);
  return {
    file: '/usr/bin/unshare',
    args: [
      '--mount',
      '--propagation',
      'private',
      '--',
      '/bin/sh',
      '-c',
      MOUNT_SCRIPT,
      'svc-mounts',
      ...triples,
      '--',
      ...flatten(argv),
    ],
  };
}
