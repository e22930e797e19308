/**
 * Task launch: what the local driver starts for an allocation, prepared once per start (ADR 0047,
 * ADR 0199).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import type { AppIdentities } from '../isolation/app-identity.js';
import type { AllocationRecord } from '../driver-state.js';
import {
  allocationPaths,
  prepareAllocationDir,
  recordingExit,
  renderFiles,
  taskArgv,
  taskEnvironment,
  type AllocationFolders,
  type HostVolume,
} from './task-environment.js';
import { dropPrivileges, inMountNamespace, type TaskLimits } from './task-sandbox.js';
import type { SpawnSandbox } from './task-spawner.js';
import { containerRunArgv, containerStartArgv, type ContainerArgv } from '../containers/container-launch.js';
import type { TaskIdentity } from '../isolation/app-identity.js';
import { containerIdFile, containerName, type ContainerRuntime } from '../containers/container-runtime.js';

/** What a launch needs from the driver. */
export interface LaunchContext {
  readonly identities: AppIdentities;
  readonly hostVolumes: Readonly<Record<string, HostVolume>>;
  readonly folders: AllocationFolders;
  readonly limits: TaskLimits;
  /** Runs tasks that name an image (ADR 0219); undefined: this driver runs host processes only. */
  readonly containers?: ContainerRuntime;
  /** Containers created ahead of their start (ADR 0228); undefined: every container start is a `podman run`. */
  readonly prepared?: { claim(allocationId: string, digest: string): boolean };
}

/** A task ready to start: the wrapped argv, its environment and folders. */
export interface Launch {
  readonly file: string;
  readonly args: string[];
  readonly cwd: string;
  readonly env: Record<string, string>;
  readonly paths: ReturnType<typeof allocationPaths>;
  /** What the Started event adds about the user and the sandbox. */
  readonly started: string;
  /** The bare task and its sandbox, for a helper that applies it itself; undefined: wrappers only. */
  readonly sandbox?: { readonly argv: { file: string; args: string[] }; readonly sandbox: SpawnSandbox };
}

/**
 * Prepares an allocation's folders and files and builds how its task starts: the argv wrapped in
 * the sandbox of ADR 0047 (`unshare`, the mount shell, `prlimit`, `setpriv`), and for a service the
 * bare argv with the same sandbox as data, for a spawner helper that applies it itself (ADR 0199).
 */
export function prepareLaunch(rec: AllocationRecord, ctx: LaunchContext, restartsOnExit: boolean): Launch {
  if (rec.group.task.image !== undefined && ctx.containers)
    return prepareContainerLaunch(rec, ctx, ctx.containers, restartsOnExit);
  const identity = ctx.identities.resolve(rec.app, rec.group.task.user);
  const launch = prepareAllocationDir(rec, ctx.hostVolumes, identity, ctx.folders);
  renderFiles(rec, identity);
  const paths = allocationPaths(rec.dir);
  // The task runs as its user under its limits; run-to-completion tasks record their exit
  // status from a shell outside that (so a driver that re-adopts them knows it, and the task
  // cannot forge it); a private mount namespace wraps both.
  const task = dropPrivileges(taskArgv(rec.group.task), identity, ctx.limits);
  const recorded = restartsOnExit ? task : recordingExit({ file: task.file, args: [...task.args] }, paths.exitStatus);
  const { file, args } = launch.mounts ? inMountNamespace(recorded, launch.mounts) : recorded;
  // The same sandbox without wrappers, for the helper: services only (a run-to-completion task's
  // exit-recording shell runs between the namespace and the user switch), read-write binds only
  // (a read-only remount keeps the source's other flags only through mount(8)).
  const sandbox =
    restartsOnExit && !(launch.mounts ?? []).some((m) => m.readOnly)
      ? {
          argv: taskArgv(rec.group.task),
          sandbox: {
            nofile: ctx.limits.nofile,
            ...(launch.mounts ? { binds: launch.mounts.map((m) => ({ source: m.source, target: m.target })) } : {}),
            ...(identity
              ? {
                  identity: {
                    uid: identity.uid,
                    gid: identity.gid,
                    groups: identity.groups,
                    nproc: ctx.limits.nproc,
                  },
                }
              : {}),
          },
        }
      : undefined;
  const started = [
    identity ? ` as ${identity.name ?? 'uid'} (uid ${identity.uid}, gid ${identity.gid})` : " as the platform's user",
    ...(identity?.note ? [`; ${identity.note}`] : []),
    ...launch.notes.map((note) => `; ${note}`),
  ].join('');
  return {
    file,
    args: [...args],
    cwd: rec.group.task.workdir ?? rec.dir,
    env: taskEnvironment(rec, launch),
    paths,
    started,
    ...(sandbox ? { sandbox } : {}),
  };
}

/**
 * Prepares an allocation whose task names an image: the same folders, files and environment as a
 * host process, started as an attached `podman run` (its volumes mounted by podman, not in a mount
 * namespace of ours), or as an attached `podman start` of the container prepared for it when that
 * was made from exactly this run (ADR 0228); a run-to-completion task's exit is recorded around the
 * client, which ends with the container's exit code.
 */
function prepareContainerLaunch(
  rec: AllocationRecord,
  ctx: LaunchContext,
  runtime: ContainerRuntime,
  restartsOnExit: boolean,
): Launch {
  const { argv: run, identity } = containerArgv(rec, ctx, runtime, 'run');
  const paths = allocationPaths(rec.dir);
  const prepared = ctx.prepared?.claim(rec.id, run.digest) === true;
  if (!prepared) fs.rmSync(containerIdFile(rec.dir), { force: true });
  const client = prepared ? containerStartArgv(run, runtime, rec.id) : run;
  const argv = restartsOnExit ? client : recordingExit({ file: client.file, args: client.args }, paths.exitStatus);
  return {
    file: argv.file,
    args: [...argv.args],
    cwd: rec.dir,
    env: client.env,
    paths,
    started: ` in ${prepared ? 'the prepared ' : ''}container ${containerName(rec.id)} of ${String(rec.group.task.image)}${identity ? ` as uid ${identity.uid}, gid ${identity.gid}` : ''}`,
  };
}

/** Makes the allocation's folders and files, and builds its container's `podman run` or `create`. */
function containerArgv(
  rec: AllocationRecord,
  ctx: LaunchContext,
  runtime: ContainerRuntime,
  verb: 'run' | 'create',
): { argv: ContainerArgv; identity: TaskIdentity | undefined } {
  const identity = ctx.identities.resolve(rec.app, rec.group.task.user);
  const launch = prepareAllocationDir(rec, ctx.hostVolumes, identity, { ...ctx.folders, privateMounts: false });
  renderFiles(rec, identity);
  return { argv: containerRunArgv(rec, runtime, launch, identity, taskEnvironment(rec, launch), verb), identity };
}

/**
 * The `podman create` of a container prepared ahead of its allocation's start (ADR 0228), with the
 * allocation's folders and files made; its digest is what the allocation's start is compared with.
 */
export function prepareContainerCreate(
  rec: AllocationRecord,
  ctx: LaunchContext,
  runtime: ContainerRuntime,
): ContainerArgv {
  return containerArgv(rec, ctx, runtime, 'create').argv;
}

/** Starts a launch from this process (no spawner helper): detached in its own session, its output appended to its files. */
export function spawnFromHere(launch: Launch): ChildProcess {
  const out = fs.openSync(launch.paths.stdout, 'a');
  const err = fs.openSync(launch.paths.stderr, 'a');
  try {
    return spawn(launch.file, launch.args, {
      cwd: launch.cwd,
      env: launch.env,
      detached: true,
      stdio: ['ignore', out, err],
    });
  } finally {
    fs.closeSync(out);
    fs.closeSync(err);
  }
}
