/**
 * Task environment: the allocation directory (logs, local, secrets, volumes), rendered files, the
 * environment and the argv a host task is started with.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ValidationError } from '../../domain/errors.js';
import type { TaskSpec, TemplateFileSpec } from '../../domain/scheduler/index.js';
import type { AllocationRecord } from './driver-state.js';

/** A host directory offered to jobs as a named volume. */
export interface HostVolume {
  readonly path: string;
  readonly readOnly?: boolean;
}

/** Variables passed through from the driver's own environment; nothing else leaks to apps. */
const INHERITED = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR', 'USER', 'LOGNAME'] as const;

/** Paths of an allocation directory. */
export function allocationPaths(dir: string): { stdout: string; stderr: string; secrets: string; local: string; volumes: string; exitStatus: string } {
  return {
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
    throw new ValidationError(`files.destination: "${dest}" must be a relative path inside the allocation directory without ".."`);
  }
}

/** Creates the allocation directory layout (secrets mode 0700) and volume links. */
export function prepareAllocationDir(record: AllocationRecord, hostVolumes: Readonly<Record<string, HostVolume>>): void {
  const paths = allocationPaths(record.dir);
  fs.mkdirSync(path.dirname(paths.stdout), { recursive: true });
  fs.mkdirSync(paths.local, { recursive: true });
  fs.mkdirSync(paths.secrets, { recursive: true, mode: 0o700 });
  fs.chmodSync(paths.secrets, 0o700);
  for (const mount of record.group.task.volumes ?? []) {
    const volume = hostVolumes[mount.volume];
    if (!volume) continue;
    fs.mkdirSync(paths.volumes, { recursive: true });
    const link = path.join(paths.volumes, mount.volume);
    fs.rmSync(link, { force: true });
    fs.symlinkSync(volume.path, link);
  }
}

/** Writes the group's template files (atomically, with their modes); true when any content changed. */
export function renderFiles(record: AllocationRecord): boolean {
  let changed = false;
  for (const file of record.group.task.files ?? []) {
    assertSafeDestination(file);
    const target = path.join(record.dir, file.destination);
    let current: string | undefined;
    try {
      current = fs.readFileSync(target, 'utf8');
    } catch {
      current = undefined;
    }
    const mode = file.mode ?? 0o400;
    if (current === file.contents) {
      fs.chmodSync(target, mode);
      continue;
    }
    changed = true;
    fs.mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 });
    const tmp = `${target}.tmp-${process.pid}`;
    fs.writeFileSync(tmp, file.contents, { mode: 0o600 });
    fs.chmodSync(tmp, mode);
    fs.renameSync(tmp, target);
  }
  return changed;
}

/** The full environment of a task run. */
export function taskEnvironment(record: AllocationRecord, hostVolumes: Readonly<Record<string, HostVolume>>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of INHERITED) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  Object.assign(env, record.group.task.env);
  const paths = allocationPaths(record.dir);
  const primaryLabel = record.group.services[0]?.portLabel ?? record.ports[0]?.label;
  for (const port of record.ports) {
    env[`SVC_PORT_${envLabel(port.label)}`] = String(port.value);
    env[`SVC_ADDR_${envLabel(port.label)}`] = `${port.hostIp}:${port.value}`;
    if (port.label === primaryLabel) env.PORT = String(port.value);
  }
  for (const mount of record.group.task.volumes ?? []) {
    const volume = hostVolumes[mount.volume];
    if (volume) env[`SVC_VOLUME_${envLabel(mount.volume)}`] = volume.path;
  }
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
export const EXIT_RECORDING_SCRIPT = 'f=$1; shift; trap : HUP INT QUIT TERM USR1 USR2; rm -f "$f"; "$@"; c=$?; printf %s "$c" > "$f.tmp" && mv -f "$f.tmp" "$f"; exit "$c"';

/** `argv` run under {@link EXIT_RECORDING_SCRIPT}, recording its exit status in `exitFile`. */
export function recordingExit(argv: { file: string; args: string[] }, exitFile: string): { file: string; args: string[] } {
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
