/**
 * Task environment: the allocation directory (logs, local, secrets, volumes), rendered files, the
 * environment and the argv a host task is started with.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ValidationError } from '../../../domain/errors.js';
import type { TaskSpec, TemplateFileSpec } from '../../../domain/scheduler/index.js';
import type { TaskIdentity } from '../isolation/app-identity.js';
import type { AllocationRecord } from '../driver-state.js';
import type { BindMount } from './task-sandbox.js';
import { copyAppSecretFiles } from './app-secret-files.js';

/** A host directory offered to jobs as a named volume. */
export interface HostVolume {
  readonly path: string;
  readonly readOnly?: boolean;
}

/** Variables passed through from the driver's own environment; nothing else leaks to apps. */
const INHERITED = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR', 'USER', 'LOGNAME'] as const;

/** Paths of an allocation directory. */
export function allocationPaths(dir: string): {
  stdout: string;
  stderr: string;
  secrets: string;
  local: string;
  tmp: string;
  volumes: string;
  exitStatus: string;
} {
  return {
    tmp: path.join(dir, 'tmp'),
    stdout: path.join(dir, 'logs', 'stdout.log'),
    stderr: path.join(dir, 'logs', 'stderr.log'),
    exitStatus: path.join(dir, 'logs', 'exit-status'),
    secrets: path.join(dir, 'secrets'),
    local: path.join(dir, 'local'),
    volumes: path.join(dir, 'volumes'),
  };
}

/** Environment-variable form of a label: `http-admin` → `HTTP_ADMIN`. */
export function envLabel(label: string): string {
  return label.toUpperCase().replace(/[^A-Z0-9]/g, '_');
}

/** Throws unless a template destination stays inside the allocation directory. */
export function assertSafeDestination(file: TemplateFileSpec): void {
  const dest = file.destination;
  if (dest.length === 0 || path.isAbsolute(dest) || dest.split(/[\\/]/).some((part) => part === '..' || part === '')) {
    throw new ValidationError(
      `files.destination: "${dest}" must be a relative path inside the allocation directory without ".."`,
    );
  }
}

/** Where an allocation's task finds its folders and volumes, once its directory is prepared. */
export interface TaskLaunch {
  /** The user the task runs as; undefined when it runs as the platform's user. */
  readonly identity: TaskIdentity | undefined;
  /** Bind mounts of a private mount namespace; undefined when the task runs without one. */
  readonly mounts: readonly BindMount[] | undefined;
  /** `TMPDIR` of the task: `/tmp` (private) or the allocation's own `tmp/`. */
  readonly tmpDir: string;
  /** `HOME` of the task: the app's data folder. */
  readonly home: string;
  /** `SVC_VOLUME_<NAME>` paths by volume name. */
  readonly volumePaths: Readonly<Record<string, string>>;
  /** What the task start event should say about the sandbox (fallbacks). */
  readonly notes: readonly string[];
}

/** Folders of the driver that an allocation's preparation needs. */
export interface AllocationFolders {
  /** `<dataDir>/app-data`: one folder per app (its `HOME`, its volumes), owned by the app. */
  readonly appDataRoot: string;
  /** The folder of app releases (`<platform data>/releases`): each app's subfolder is opened to its group only. */
  readonly releasesDir?: string;
  /** Whether tasks get a private mount namespace. */
  readonly privateMounts: boolean;
  /** `<dataDir>/secrets`: an app's files there are copied into its tasks' `secrets/` folder, owner read-only. */
  readonly appSecretsRoot?: string;
}

function own(target: string, uid: number, gid: number, mode: number): void {
  fs.chownSync(target, uid, gid);
  fs.chmodSync(target, mode);
}

/** Creates `dir` as a real folder (a symlink in its place is removed) with this owner and mode. */
function realDir(dir: string, owner: { uid: number; gid: number } | undefined, mode: number): void {
  const stat = fs.lstatSync(dir, { throwIfNoEntry: false });
  if (stat && !stat.isDirectory()) fs.rmSync(dir, { force: true });
  fs.mkdirSync(dir, { recursive: true, mode });
  if (owner) own(dir, owner.uid, owner.gid, mode);
  else fs.chmodSync(dir, mode);
}

/** True when `child` is `parent` or inside it. */
function inside(child: string, parent: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/**
 * Creates the folders and log files of an allocation that is yet to be placed (the id of a spare
 * process, ADR 0201), off the event loop: root's, 0700 (the logs 0640, as at a start), so no one
 * else enters them before {@link prepareAllocationDir} gives them their owners and modes at the
 * start, which then finds them made. Creating them costs 1-2 ms of synchronous calls on a loaded disk.
 */
export async function createAllocationFoldersAhead(dir: string): Promise<void> {
  const paths = allocationPaths(dir);
  await fs.promises.mkdir(path.dirname(dir), { recursive: true, mode: 0o711 });
  for (const folder of [dir, path.dirname(paths.stdout), paths.local, paths.secrets, paths.tmp])
    await fs.promises.mkdir(folder, { recursive: true, mode: 0o700 });
  for (const log of [paths.stdout, paths.stderr]) await (await fs.promises.open(log, 'a', 0o640)).close();
}

/**
 * Creates the allocation directory layout and the app's data and volume folders, owned so that the
 * task's user reads its release and its secrets but cannot write either, and owns `local/`, `tmp/`,
 * its data folder and its volumes (ADR 0047):
 *
 * - `<alloc>/` root:app-group 0750; `logs/` root:app-group 0750 (written through inherited descriptors);
 * - `secrets/` root:app-group 0750, its files owned by the task's user; `local/`, `tmp/` the task's user, 0700;
 * - `volumes/<name>`: a folder (never a symlink), bind-mounted from the volume's source in a private
 *   mount namespace; without one `SVC_VOLUME_<NAME>` names the source itself;
 * - `<app-data>/<app>/` and `<app-data>/<app>/volumes/<name>` the app's user and group, 0770.
 */
export function prepareAllocationDir(
  record: AllocationRecord,
  hostVolumes: Readonly<Record<string, HostVolume>>,
  identity: TaskIdentity | undefined,
  folders: AllocationFolders,
): TaskLaunch {
  const paths = allocationPaths(record.dir);
  const appOwner = identity ? { uid: identity.app.uid, gid: identity.app.gid } : undefined;
  const rootGroup = identity ? { uid: 0, gid: identity.app.gid } : undefined;
  const taskOwner = identity ? { uid: identity.uid, gid: identity.gid } : undefined;
  const notes: string[] = [];
  fs.mkdirSync(path.dirname(record.dir), { recursive: true, mode: 0o711 });
  realDir(record.dir, rootGroup, 0o750);
  realDir(path.dirname(paths.stdout), rootGroup, 0o750);
  for (const log of [paths.stdout, paths.stderr]) {
    fs.closeSync(
      fs.openSync(
        log,
        fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_APPEND | fs.constants.O_NOFOLLOW,
        0o640,
      ),
    );
    if (rootGroup) own(log, 0, rootGroup.gid, 0o640);
  }
  realDir(paths.local, taskOwner, 0o700);
  realDir(paths.secrets, rootGroup, rootGroup ? 0o750 : 0o700);
  if (folders.appSecretsRoot)
    copyAppSecretFiles(path.join(folders.appSecretsRoot, record.app), paths.secrets, taskOwner);
  realDir(paths.tmp, taskOwner, 0o700);
  const appData = path.join(folders.appDataRoot, record.app);
  fs.mkdirSync(folders.appDataRoot, { recursive: true, mode: 0o711 });
  if (identity) fs.chmodSync(folders.appDataRoot, 0o711);
  realDir(appData, appOwner, 0o770);
  if (
    identity &&
    folders.releasesDir &&
    record.group.task.workdir &&
    inside(record.group.task.workdir, folders.releasesDir) &&
    fs.existsSync(folders.releasesDir)
  ) {
    // Each app's releases are readable by its group only; the releases folder itself lists nothing.
    fs.chmodSync(folders.releasesDir, 0o711);
    const first = path.relative(folders.releasesDir, record.group.task.workdir).split(path.sep)[0];
    if (first) own(path.join(folders.releasesDir, first), 0, identity.app.gid, 0o750);
  }
  const mounts: BindMount[] = [];
  const volumePaths: Record<string, string> = {};
  for (const mount of record.group.task.volumes ?? []) {
    const configured = hostVolumes[mount.volume];
    let source: string;
    if (configured) {
      source = configured.path;
    } else {
      source = path.join(appData, 'volumes', mount.volume);
      realDir(path.dirname(source), appOwner, 0o770);
      realDir(source, appOwner, 0o770);
    }
    const readOnly = mount.readOnly || configured?.readOnly === true;
    if (folders.privateMounts) {
      realDir(paths.volumes, rootGroup, 0o750);
      const target = path.join(paths.volumes, mount.volume);
      realDir(target, taskOwner, 0o700);
      mounts.push({ source, target, readOnly });
      volumePaths[mount.volume] = target;
    } else {
      volumePaths[mount.volume] = source;
      if (readOnly)
        notes.push(`volume ${mount.volume} is read-only in the spec but writable here: no private mount namespace`);
    }
  }
  let tmpDir = paths.tmp;
  if (folders.privateMounts) {
    // A private /tmp would hide platform folders below /tmp (the task's own release among them).
    const hidden = [record.dir, appData, record.group.task.workdir, ...mounts.map((m) => m.source)].find(
      (p) => p !== undefined && inside(p, '/tmp'),
    );
    if (hidden === undefined) {
      mounts.push({ source: paths.tmp, target: '/tmp', readOnly: false });
      tmpDir = '/tmp';
    } else {
      notes.push(`/tmp is not private: ${hidden} lies below it; TMPDIR is the allocation's own tmp folder`);
    }
  }
  return { identity, mounts: folders.privateMounts ? mounts : undefined, tmpDir, home: appData, volumePaths, notes };
}

/** Throws unless no part of `dir` below `base` is a symlink (a task's user may own folders on the way). */
function assertNoSymlinks(base: string, dir: string): void {
  let current = base;
  for (const part of path.relative(base, dir).split(path.sep).filter(Boolean)) {
    current = path.join(current, part);
    const stat = fs.lstatSync(current, { throwIfNoEntry: false });
    if (stat?.isSymbolicLink())
      throw new ValidationError(`files.destination: ${current} is a symlink; files are not written through links`);
  }
}

/**
 * Writes the group's template files (atomically, with their modes, owned by the task's user);
 * true when any content changed. Folders the task's user owns may hold its links: files are opened
 * without following symlinks and created exclusively, so the platform never writes through one.
 */
export function renderFiles(record: AllocationRecord, identity?: TaskIdentity): boolean {
  let changed = false;
  const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW } = fs.constants;
  for (const file of record.group.task.files ?? []) {
    assertSafeDestination(file);
    const target = path.join(record.dir, file.destination);
    const mode = file.mode ?? 0o400;
    fs.mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 });
    assertNoSymlinks(record.dir, path.dirname(target));
    let current: string | undefined;
    let fd: number | undefined;
    try {
      fd = fs.openSync(target, O_RDONLY | O_NOFOLLOW);
      current = fs.readFileSync(fd, 'utf8');
    } catch {
      current = undefined;
    }
    if (fd !== undefined && current === file.contents) {
      if (identity) fs.fchownSync(fd, identity.uid, identity.gid);
      fs.fchmodSync(fd, mode);
      fs.closeSync(fd);
      continue;
    }
    if (fd !== undefined) fs.closeSync(fd);
    changed = true;
    const tmp = `${target}.tmp-${process.pid}-${randomUUID()}`;
    const out = fs.openSync(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
    try {
      fs.writeFileSync(out, file.contents);
      if (identity) fs.fchownSync(out, identity.uid, identity.gid);
      fs.fchmodSync(out, mode);
    } finally {
      fs.closeSync(out);
    }
    fs.renameSync(tmp, target);
  }
  return changed;
}

/** The full environment of a task run. */
export function taskEnvironment(record: AllocationRecord, launch: TaskLaunch): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of INHERITED) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  // The task's own user, home and temporary folder, not the platform's.
  env.HOME = launch.home;
  env.TMPDIR = launch.tmpDir;
  if (launch.identity?.name !== undefined) {
    env.USER = launch.identity.name;
    env.LOGNAME = launch.identity.name;
  }
  Object.assign(env, record.group.task.env);
  const paths = allocationPaths(record.dir);
  const primaryLabel = record.group.services[0]?.portLabel ?? record.ports[0]?.label;
  for (const port of record.ports) {
    env[`SVC_PORT_${envLabel(port.label)}`] = String(port.value);
    env[`SVC_ADDR_${envLabel(port.label)}`] = `${port.hostIp}:${port.value}`;
    if (port.label === primaryLabel) env.PORT = String(port.value);
  }
  for (const [name, where] of Object.entries(launch.volumePaths)) env[`SVC_VOLUME_${envLabel(name)}`] = where;
  Object.assign(env, {
    SVC_ALLOC_ID: record.id,
    SVC_ALLOC_INDEX: String(record.index),
    SVC_ALLOC_DIR: record.dir,
    SVC_SECRETS_DIR: paths.secrets,
    SVC_TASK_DIR: paths.local,
    SVC_JOB_ID: record.jobId,
    SVC_TASK_GROUP: record.taskGroup,
    SVC_REGION: record.region,
    SVC_DC: record.datacenter,
    SVC_MEMORY_LIMIT_MB: String(record.group.task.resources.memoryMb),
  });
  Object.assign(env, record.extraEnv);
  return env;
}

/** The program and arguments of a task: a string runs with `/bin/sh -c`, an array as argv. */
/**
 * The shell a run-to-completion task runs under so its exit status outlives the driver: it waits
 * for the task and writes the status to `exitFile`, which a driver that re-adopted the task after
 * a restart reads (it is not the task's parent, so it cannot wait for it). The handlers of common
 * signals are a no-op: a signal sent to the process group reaches the task, and the shell, which
 * defers them while the task runs, stays until the task ends; a caught signal is reset for the
 * task, so the task keeps its own behaviour. SIGKILL ends both.
 */
export const EXIT_RECORDING_SCRIPT =
  'f=$1; shift; trap : HUP INT QUIT TERM USR1 USR2; rm -f "$f"; "$@"; c=$?; printf %s "$c" > "$f.tmp" && mv -f "$f.tmp" "$f"; exit "$c"';

/** `argv` run under {@link EXIT_RECORDING_SCRIPT}, recording its exit status in `exitFile`. */
export function recordingExit(
  argv: { file: string; args: string[] },
  exitFile: string,
): { file: string; args: string[] } {
  return { file: '/bin/sh', args: ['-c', EXIT_RECORDING_SCRIPT, 'svc-task', exitFile, argv.file, ...argv.args] };
}

/** The exit status a recording shell wrote, if any. */
export function readRecordedExit(exitFile: string): number | undefined {
  try {
    const text = fs.readFileSync(exitFile, 'utf8').trim();
    return /^\d{1,3}$/.test(text) ? Number(text) : undefined;
  } catch {
    return undefined;
  }
}

export function taskArgv(task: TaskSpec): { file: string; args: string[] } {
  const command = task.command;
  if (command === undefined) throw new ValidationError(`task ${task.name}: the local driver needs a command`);
  if (typeof command === 'string') return { file: '/bin/sh', args: ['-c', command] };
  const [file, ...args] = command;
  if (!file) throw new ValidationError(`task ${task.name}: command must not be an empty list`);
  return { file, args };
}
