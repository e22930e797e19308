/**
 * Swarm translation: the pure mapping of a job's service task group onto the Swarm service the swarm
 * driver writes (docs/drivers.md). One replicated service per group:
 * - the image by digest, as the release named it; the command as argv (`/bin/sh -c` for a shell string);
 * - replicas from the group's count (scaling and autoscaling change only this);
 * - a rolling update that starts each new task before stopping an old one (`start-first`), and rolls
 *   back by itself when a new task fails;
 * - memory as a limit and a reservation, CPU (1000 MHz is one core) as a reservation;
 * - rendered files and the app's secret files as Swarm secrets under the allocation folder, never
 *   in the environment;
 * - each port published in host mode on the node where its task runs: a static port on that number,
 *   any other on a port the engine picks, so that replicas on one node do not collide;
 * - `placement.nodePool` as the node-label constraint `node.labels.svc.node-pool==<pool>`;
 * - the app's volumes as named volumes of the node (`volumes.ts`);
 * - never root: a task with no user, or root, runs as 65532 (ADR 0047).
 */
import type Dockerode from 'dockerode';
import { canonicalJson } from '../../canonical-json.js';
import { filesFingerprint, rollFingerprint } from '../fingerprint.js';
import { containerTaskVariables } from '../container-task-variables.js';
import type { JobSpec, TaskGroupSpec } from '../job.js';
import { ALLOC_DIR, FIRST_DYNAMIC_PORT, MANAGED_BY, SwarmLabel } from './labels.js';
import { shortHash } from './names.js';
import { imageForNodes } from './node-registry.js';
import { placementConstraints, volumeMounts, volumeVariables } from './volumes.js';

/** The uid and gid a task runs as when it names no (or a root) user. */
export const DEFAULT_NON_ROOT_ID = 65532;
const MIB = 1024 * 1024;
const NS_PER_MS = 1_000_000;

/** A port label and the container port it listens on. */
export interface ContainerPort {
  readonly label: string;
  readonly value: number;
  /** Fixed host port, when the group asked for one. */
  readonly static?: number;
}

/** One file a group's tasks read from a Swarm secret. */
export interface GroupSecret {
  /** `files/<destination>` for a rendered file, `secrets/<KEY>` for an app secret file. */
  readonly key: string;
  /** Path inside the container. */
  readonly target: string;
  readonly content: string;
  readonly mode: number;
}

/** The secrets a group's tasks read: its rendered files and the app's secret files (`KEY` to content). */
export function groupSecrets(group: TaskGroupSpec, appSecrets: Readonly<Record<string, string>>): GroupSecret[] {
  const files = (group.task.files ?? []).map((file) => ({
    key: `files/${file.destination}`,
    target: `${ALLOC_DIR}/${file.destination}`,
    content: file.contents,
    mode: file.mode ?? 0o400,
  }));
  const secrets = Object.keys(appSecrets)
    .sort()
    .map((key) => ({
      key: `secrets/${key}`,
      target: `${ALLOC_DIR}/secrets/${key}`,
      content: appSecrets[key]!,
      mode: 0o400,
    }));
  return [...files, ...secrets];
}

/** The short hash of what replaces a group's tasks: its roll fingerprint and its rendered files. */
export function groupVersionHash(job: JobSpec, group: TaskGroupSpec): string {
  return shortHash(`${rollFingerprint(job, group)}\n${filesFingerprint(group)}`, 16);
}

/** Each port label's container port: its static number, else 8080, 8081, ... in order. */
export function containerPorts(group: TaskGroupSpec): ContainerPort[] {
  let next = FIRST_DYNAMIC_PORT;
  const used = new Set(group.ports.flatMap((p) => (p.static === undefined ? [] : [p.static])));
  return group.ports.map((port) => {
    if (port.static !== undefined) return { label: port.label, value: port.static, static: port.static };
    while (used.has(next)) next++;
    used.add(next);
    return { label: port.label, value: next++ };
  });
}

function envLabel(label: string): string {
  return label.toUpperCase().replace(/[^A-Z0-9]/g, '_');
}

/** The `USER` a task runs as: its own numeric or named user, else the unprivileged default. */
export function taskUser(user: string | undefined): string {
  const [name = '', group] = (user ?? '').trim().split(':');
  if (name === '' || name === 'root' || name === '0') return `${DEFAULT_NON_ROOT_ID}:${DEFAULT_NON_ROOT_ID}`;
  if (group === undefined || group === '' || group === 'root' || group === '0') return name;
  return `${name}:${group}`;
}

/** Who owns a secret's file: the task's numeric user, or root with the file readable by all (a named user). */
function secretOwner(user: string, mode: number): { UID: string; GID: string; Mode: number } {
  const [uid = '', gid = uid] = user.split(':');
  return /^\d+$/.test(uid) && /^\d+$/.test(gid)
    ? { UID: uid, GID: gid, Mode: mode }
    : { UID: '0', GID: '0', Mode: mode | 0o044 };
}

/** Options of {@link translateService}. */
export interface TranslateServiceOptions {
  /** Scheduler region of the driver, given to tasks as `SVC_REGION`. */
  readonly region: string;
  /** Job version the service's template holds. */
  readonly jobVersion: number;
  /** The group's secrets as written: the Swarm id of each secret name. */
  readonly secrets: readonly (GroupSecret & { readonly name: string; readonly id: string })[];
  /** The Swarm network tasks join (their host-mode ports are served through it). */
  readonly network?: string;
  /**
   * One run of the group (a dispatch, or a cron tick): a replicated job of one task that is never
   * restarted, with the run's own environment, labelled with the execution id.
   */
  readonly execution?: {
    readonly id: string;
    readonly env: Readonly<Record<string, string>>;
    /** A function invocation, or a cron tick. @default dispatch */
    readonly kind?: 'dispatch' | 'periodic_child';
  };
  /** Replicas: the group's count unless the driver keeps another (a scale since the submission). */
  readonly replicas?: number;
  /** The address nodes pull the managed registry's images from (`node-registry.ts`). @default as released */
  readonly nodeRegistry?: string;
}

/** The Swarm service of a job's service task group. */
export function translateService(
  job: JobSpec,
  group: TaskGroupSpec,
  name: string,
  options: TranslateServiceOptions,
): Dockerode.ServiceSpec {
  const task = group.task;
  const ports = containerPorts(group);
  const primary = group.services[0]?.portLabel ?? ports[0]?.label;
  const env: Record<string, string> = { ...task.env };
  for (const port of ports) {
    env[`SVC_PORT_${envLabel(port.label)}`] = String(port.value);
    env[`SVC_ADDR_${envLabel(port.label)}`] = `0.0.0.0:${port.value}`;
    if (port.label === primary) env.PORT = String(port.value);
  }
  Object.assign(
    env,
    containerTaskVariables(job, group, options.region, ALLOC_DIR),
    volumeVariables(group),
    options.execution ? { SVC_EXECUTION_ID: options.execution.id, ...options.execution.env } : {},
  );
  const services = group.services.map((s) => ({
    name: s.name,
    portLabel: s.portLabel,
    tags: s.tags ?? [],
    checked: s.check !== undefined,
  }));
  const labels: Record<string, string> = {
    [SwarmLabel.managedBy]: MANAGED_BY,
    [SwarmLabel.app]: job.app,
    [SwarmLabel.job]: job.id,
    [SwarmLabel.group]: group.name,
    [SwarmLabel.version]: groupVersionHash(job, group),
    [SwarmLabel.jobVersion]: String(options.jobVersion),
    [SwarmLabel.ports]: canonicalJson(ports.map(({ label, value }) => ({ label, value }))),
    [SwarmLabel.services]: canonicalJson(services),
    [SwarmLabel.memoryMb]: String(task.resources.memoryMb),
    ...(options.execution
      ? { [SwarmLabel.execution]: options.execution.id, [SwarmLabel.kind]: options.execution.kind ?? 'dispatch' }
      : {}),
  };
  const restart = group.restart;
  const user = taskUser(task.user);
  // A static port is bound once per node: the old task must free it before the new one starts.
  const order = ports.some((port) => port.static !== undefined) ? 'stop-first' : 'start-first';
  const spec: Dockerode.ServiceSpec = {
    Name: name,
    Labels: labels,
    TaskTemplate: {
      ContainerSpec: {
        Image: imageForNodes(task.image!, options.nodeRegistry),
        ...(task.command !== undefined
          ? { Command: typeof task.command === 'string' ? ['/bin/sh', '-c', task.command] : [...task.command] }
          : {}),
        Env: Object.keys(env)
          .sort()
          .map((key) => `${key}=${env[key]}`),
        // A task's own spec carries these: an allocation is read from its task alone.
        Labels: labels,
        User: user,
        CapabilityDrop: ['ALL'],
        StopSignal: group.drain.signal,
        StopGracePeriod: group.drain.timeout.milliseconds * NS_PER_MS,
        // The task's own scratch folder (`SVC_TASK_DIR`), in memory, writable by its user.
        Mounts: [
          {
            Type: 'tmpfs' as const,
            Source: '',
            Target: `${ALLOC_DIR}/local`,
            TmpfsOptions: { SizeBytes: 64 * MIB, Mode: 0o1777 },
          },
          ...volumeMounts(job, group),
        ],
        Secrets: options.secrets.map((secret) => ({
          SecretID: secret.id,
          SecretName: secret.name,
          File: { Name: secret.target, ...secretOwner(user, secret.mode) },
        })),
      },
      Resources: {
        Limits: { MemoryBytes: task.resources.memoryMb * MIB },
        Reservations: {
          MemoryBytes: task.resources.memoryMb * MIB,
          NanoCPUs: Math.round((task.resources.cpuMhz / 1000) * 1e9),
        },
      },
      RestartPolicy: {
        Condition: options.execution ? 'none' : 'any',
        ...(restart ? { Delay: restart.initialDelay.milliseconds * NS_PER_MS } : {}),
        ...(restart?.attempts !== undefined
          ? { MaxAttempts: restart.attempts, Window: (restart.interval?.milliseconds ?? 30 * 60_000) * NS_PER_MS }
          : {}),
      },
      ...(options.network !== undefined ? { Networks: [{ Target: options.network }] } : {}),
      ...(job.nodePool !== undefined ? { Placement: { Constraints: placementConstraints(job) } } : {}),
    },
    Mode: options.execution
      ? { ReplicatedJob: { MaxConcurrent: 1, TotalCompletions: 1 } }
      : { Replicated: { Replicas: options.replicas ?? group.count } },
    // A run-once job has no rolling update and no ports.
    ...(options.execution
      ? {}
      : {
          UpdateConfig: { Parallelism: 1, Order: order, FailureAction: 'rollback', Monitor: 5_000 * NS_PER_MS },
          RollbackConfig: { Parallelism: 1, Order: order, FailureAction: 'pause' },
          EndpointSpec: {
            Mode: 'vip',
            Ports: ports.map((port) => ({
              Protocol: 'tcp' as const,
              TargetPort: port.value,
              PublishMode: 'host' as const,
              ...(port.static !== undefined ? { PublishedPort: port.static } : {}),
            })),
          },
        }),
  };
  return { ...spec, Labels: { ...labels, [SwarmLabel.fingerprint]: shortHash(canonicalJson(spec), 16) } };
}
