/**
 * Kubernetes translation: the pure mapping of a scheduler job onto the objects the kubernetes
 * driver applies: a Deployment per service task group (and a `-canary` Deployment while canaries
 * run), a Service per registered port, a Secret of rendered files, a CronJob per periodic group and
 * a Job template per parameterized group. CPU: 1000 MHz is one core, so `cpuMhz` becomes millicores.
 */
import type {
  V1Container,
  V1CronJob,
  V1Deployment,
  V1EnvVar,
  V1Job,
  V1JobSpec,
  V1ObjectMeta,
  V1PodTemplateSpec,
  V1Probe,
  V1Secret,
  V1Service,
  V1Volume,
  V1VolumeMount,
} from '@kubernetes/client-node';
import { canonicalJson } from '../../canonical-json.js';
import { filesFingerprint, rollFingerprint } from '../fingerprint.js';
import { containerTaskVariables } from '../container-task-variables.js';
import type { JobSpec, TaskGroupSpec } from '../job.js';
import { ALLOC_DIR, MANAGED_BY, SvcAnnotation, SvcLabel, SvcRole } from './labels.js';
import { dns1035Label, dnsLabel, labelValue, portName, shortHash } from './names.js';
import { taskSecurityContext } from './security-context.js';
import { validateJobForKubernetes } from './validate-job.js';
import { withFingerprint } from './object-fingerprint.js';

/** Where translated objects go. */
export interface KubernetesTarget {
  readonly namespace: string;
  /** Scheduler region of this target, given to tasks as `SVC_REGION`. */
  readonly region: string;
}

/** Options of {@link translateJob}. */
export interface TranslateJobOptions extends KubernetesTarget {
  /** Job version whose template each group's pods run: a group whose template did not change keeps its version. */
  readonly templateVersions: Readonly<Record<string, number>>;
  /** Periodic jobs: CronJobs are suspended. @default false */
  readonly paused?: boolean;
}

/** Every object of one job, each carrying a `svc.dev/fingerprint` annotation. */
export interface KubernetesJobObjects {
  readonly deployments: readonly V1Deployment[];
  readonly services: readonly V1Service[];
  readonly secrets: readonly V1Secret[];
  readonly cronJobs: readonly V1CronJob[];
  /** Parameterized groups: the Job each dispatch instantiates (see `dispatchJob`). */
  readonly jobTemplates: readonly V1Job[];
}

/** First container port handed to ports without a static number (each pod has its own IP). */
export const FIRST_DYNAMIC_PORT = 8080;
const MIB = 1024 * 1024;

/** The short hash of what requires replacing a group's pods: its roll fingerprint and its rendered files. */
export function groupVersionHash(job: JobSpec, group: TaskGroupSpec): string {
  return shortHash(`${rollFingerprint(job, group)}\n${filesFingerprint(group)}`, 16);
}

/** Name of a group's workload (Deployment, Job template, files Secret stem): at most 56 characters so `-canary` fits. */
export function groupObjectName(jobId: string, group: string): string {
  return dnsLabel(`${jobId}-${group}`, 56);
}

/** Name of a group's canary Deployment. */
export function canaryObjectName(jobId: string, group: string): string {
  return `${groupObjectName(jobId, group)}-canary`;
}

/** Name of a periodic group's CronJob (at most 52 characters: Kubernetes appends a suffix to its Jobs). */
export function cronJobName(jobId: string, group: string): string {
  return dnsLabel(`${jobId}-${group}`, 52);
}

/** Labels selecting every object and pod of a job. */
export function jobLabels(job: Pick<JobSpec, 'id' | 'app'>): Record<string, string> {
  return { [SvcLabel.managedBy]: MANAGED_BY, [SvcLabel.app]: labelValue(job.app), [SvcLabel.job]: labelValue(job.id) };
}

/** Container port of each port label: the static number, else the next free number from 8080. */
export function containerPorts(group: TaskGroupSpec): { label: string; value: number }[] {
  const taken = new Set(group.ports.flatMap((p) => (p.static !== undefined ? [p.static] : [])));
  let next = FIRST_DYNAMIC_PORT;
  return group.ports.map((port) => {
    if (port.static !== undefined) return { label: port.label, value: port.static };
    while (taken.has(next)) next += 1;
    taken.add(next);
    return { label: port.label, value: next++ };
  });
}

function envLabel(label: string): string {
  return label.toUpperCase().replace(/[^A-Z0-9]/g, '_');
}

/** Whole seconds, at least one, of a duration: Kubernetes durations are in seconds. */
export function seconds(milliseconds: number): number {
  return Math.max(1, Math.ceil(milliseconds / 1000));
}

function probe(path: string, port: string, intervalMs: number, timeoutMs: number, failureThreshold: number): V1Probe {
  return {
    httpGet: { path, port },
    periodSeconds: seconds(intervalMs),
    timeoutSeconds: seconds(timeoutMs),
    failureThreshold,
  };
}

function meta(
  name: string,
  namespace: string,
  labels: Record<string, string>,
  annotations: Record<string, string> = {},
): V1ObjectMeta {
  return { name, namespace, labels, annotations };
}

function filesSecretName(job: JobSpec, group: TaskGroupSpec): string {
  return `${groupObjectName(job.id, group.name)}-files`;
}

function groupAnnotations(job: JobSpec, group: TaskGroupSpec): Record<string, string> {
  return { [SvcAnnotation.jobId]: job.id, [SvcAnnotation.app]: job.app, [SvcAnnotation.group]: group.name };
}

/** The container of a group's task: image, command, environment, ports, resources, probes and drain. */
function container(
  job: JobSpec,
  group: TaskGroupSpec,
  target: KubernetesTarget,
  extraEnv: Readonly<Record<string, string>>,
): V1Container {
  const task = group.task;
  const ports = containerPorts(group);
  const primary = group.services[0]?.portLabel ?? ports[0]?.label;
  const env: V1EnvVar[] = [
    { name: 'SVC_POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
    { name: 'SVC_ALLOC_ID', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
  ];
  const plain: Record<string, string> = { ...task.env };
  for (const port of ports) {
    plain[`SVC_PORT_${envLabel(port.label)}`] = String(port.value);
    plain[`SVC_ADDR_${envLabel(port.label)}`] = `$(SVC_POD_IP):${port.value}`;
    if (port.label === primary) plain.PORT = String(port.value);
  }
  Object.assign(plain, containerTaskVariables(job, group, target.region, ALLOC_DIR), extraEnv);
  for (const name of Object.keys(plain).sort()) env.push({ name, value: plain[name]! });

  const mounts: V1VolumeMount[] = [{ name: 'alloc', mountPath: ALLOC_DIR }];
  (task.files ?? []).forEach((file) =>
    mounts.push({
      name: 'files',
      mountPath: `${ALLOC_DIR}/${file.destination}`,
      subPath: file.destination,
      readOnly: true,
    }),
  );

  const checked = group.services.find((s) => s.check);
  const probes: Partial<V1Container> = {};
  if (checked?.check) {
    const port = portName(checked.portLabel);
    const { path, interval, timeout } = checked.check;
    // Readiness mirrors the local registry (one failed check is critical); liveness restarts only
    // after three failures, and only once the startup probe passed (up to 30 intervals to start).
    probes.readinessProbe = probe(path, port, interval.milliseconds, timeout.milliseconds, 1);
    probes.livenessProbe = probe(path, port, interval.milliseconds, timeout.milliseconds, 3);
    probes.startupProbe = probe(path, port, interval.milliseconds, timeout.milliseconds, 30);
  }
  const signal = group.drain.signal;
  return {
    name: dnsLabel(task.name),
    image: task.image!,
    ...(task.command !== undefined
      ? { command: typeof task.command === 'string' ? ['/bin/sh', '-c', task.command] : [...task.command] }
      : {}),
    env,
    ...(ports.length > 0
      ? { ports: ports.map((p) => ({ name: portName(p.label), containerPort: p.value, protocol: 'TCP' })) }
      : {}),
    resources: {
      requests: { cpu: `${task.resources.cpuMhz}m`, memory: `${task.resources.memoryMb}Mi` },
      limits: { memory: `${task.resources.memoryMb}Mi` },
    },
    ...probes,
    // Kubernetes sends SIGTERM; another drain signal is sent by a preStop hook first.
    ...(signal !== 'SIGTERM'
      ? { lifecycle: { preStop: { exec: { command: ['/bin/sh', '-c', `kill -s ${signal.replace(/^SIG/, '')} 1`] } } } }
      : {}),
    volumeMounts: mounts,
    securityContext: taskSecurityContext(task.user),
  };
}

function podTemplate(
  job: JobSpec,
  group: TaskGroupSpec,
  options: TranslateJobOptions,
  role: SvcRole,
  restartPolicy: 'Always' | 'Never',
): V1PodTemplateSpec {
  const volumes: V1Volume[] = [{ name: 'alloc', emptyDir: {} }];
  const files = group.task.files ?? [];
  if (files.length > 0) {
    volumes.push({
      name: 'files',
      secret: {
        secretName: filesSecretName(job, group),
        items: files.map((file, i) => ({ key: `file-${i}`, path: file.destination, mode: file.mode ?? 0o400 })),
      },
    });
  }
  const services = group.services.map((s) => ({
    name: s.name,
    portLabel: s.portLabel,
    tags: s.tags ?? [],
    checked: s.check !== undefined,
  }));
  return {
    metadata: {
      labels: {
        ...jobLabels(job),
        [SvcLabel.group]: labelValue(group.name),
        [SvcLabel.version]: groupVersionHash(job, group),
        [SvcLabel.role]: role,
      },
      annotations: {
        ...groupAnnotations(job, group),
        [SvcAnnotation.taskName]: group.task.name,
        [SvcAnnotation.jobVersion]: String(options.templateVersions[group.name] ?? 1),
        [SvcAnnotation.memoryMb]: String(group.task.resources.memoryMb),
        [SvcAnnotation.ports]: canonicalJson(containerPorts(group)),
        [SvcAnnotation.services]: canonicalJson(services),
      },
    },
    spec: {
      containers: [container(job, group, options, {})],
      restartPolicy,
      terminationGracePeriodSeconds: Math.ceil(group.drain.timeout.milliseconds / 1000),
      enableServiceLinks: false,
      volumes,
      // The node pool of the job selects the nodes labelled with it; without one, any node.
      ...(job.nodePool !== undefined ? { nodeSelector: { [SvcLabel.nodePool]: job.nodePool } } : {}),
    },
  };
}

/** A group's Deployment: stable (`replicas` = count) or canary (`replicas` given, name `<name>-canary`). */
export function groupDeployment(
  job: JobSpec,
  group: TaskGroupSpec,
  options: TranslateJobOptions,
  role: 'stable' | 'canary' = 'stable',
  replicas = group.count,
): V1Deployment {
  const template = podTemplate(job, group, options, role, 'Always');
  const name = role === 'canary' ? canaryObjectName(job.id, group.name) : groupObjectName(job.id, group.name);
  const selectorLabels = { ...jobLabels(job), [SvcLabel.group]: labelValue(group.name), [SvcLabel.role]: role };
  return withFingerprint({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: meta(name, options.namespace, selectorLabels, groupAnnotations(job, group)),
    spec: {
      replicas,
      selector: { matchLabels: selectorLabels },
      revisionHistoryLimit: 3,
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } },
      template,
    },
  });
}

function groupServices(job: JobSpec, group: TaskGroupSpec, target: KubernetesTarget): V1Service[] {
  const ports = containerPorts(group);
  return group.services.map((service) => {
    const port = ports.find((p) => p.label === service.portLabel)!;
    const labels = { ...jobLabels(job), [SvcLabel.group]: labelValue(group.name) };
    return withFingerprint({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: meta(dns1035Label(service.name), target.namespace, labels, {
        ...groupAnnotations(job, group),
        'svc.dev/service-name': service.name,
      }),
      spec: {
        type: 'ClusterIP',
        // Stable and canary pods both answer: canaries take their share of traffic.
        selector: labels,
        ports: [{ name: portName(port.label), port: port.value, targetPort: portName(port.label), protocol: 'TCP' }],
      },
    });
  });
}

function filesSecret(job: JobSpec, group: TaskGroupSpec, target: KubernetesTarget): V1Secret | undefined {
  const files = group.task.files ?? [];
  if (files.length === 0) return undefined;
  return withFingerprint({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: meta(
      filesSecretName(job, group),
      target.namespace,
      { ...jobLabels(job), [SvcLabel.group]: labelValue(group.name), [SvcLabel.role]: SvcRole.files },
      groupAnnotations(job, group),
    ),
    type: 'Opaque',
    data: Object.fromEntries(
      files.map((file, i) => [`file-${i}`, Buffer.from(file.contents, 'utf8').toString('base64')]),
    ),
  });
}

function batchJobSpec(job: JobSpec, group: TaskGroupSpec, options: TranslateJobOptions, role: SvcRole): V1JobSpec {
  return {
    backoffLimit: role === SvcRole.periodic ? (group.restart?.attempts ?? 0) : 0,
    ...(group.task.timeout ? { activeDeadlineSeconds: seconds(group.task.timeout.milliseconds) } : {}),
    template: podTemplate(job, group, options, role, 'Never'),
  };
}

function cronJob(job: JobSpec, group: TaskGroupSpec, options: TranslateJobOptions): V1CronJob {
  const periodic = job.periodic!;
  const labels = { ...jobLabels(job), [SvcLabel.group]: labelValue(group.name), [SvcLabel.role]: SvcRole.periodic };
  return withFingerprint({
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: meta(cronJobName(job.id, group.name), options.namespace, labels, groupAnnotations(job, group)),
    spec: {
      schedule: periodic.cron,
      timeZone: periodic.timeZone ?? 'Etc/UTC',
      concurrencyPolicy: periodic.prohibitOverlap === false ? 'Allow' : 'Forbid',
      suspend: options.paused ?? false,
      successfulJobsHistoryLimit: 3,
      failedJobsHistoryLimit: 3,
      jobTemplate: {
        metadata: { labels, annotations: groupAnnotations(job, group) },
        spec: batchJobSpec(job, group, options, SvcRole.periodic),
      },
    },
  });
}

function jobTemplate(job: JobSpec, group: TaskGroupSpec, options: TranslateJobOptions): V1Job {
  const labels = { ...jobLabels(job), [SvcLabel.group]: labelValue(group.name), [SvcLabel.role]: SvcRole.dispatch };
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: meta(groupObjectName(job.id, group.name), options.namespace, labels, groupAnnotations(job, group)),
    spec: batchJobSpec(job, group, options, SvcRole.dispatch),
  };
}

/** Translates a job (validated with {@link validateJobForKubernetes}) into the objects that run it. */
export function translateJob(job: JobSpec, options: TranslateJobOptions): KubernetesJobObjects {
  validateJobForKubernetes(job);
  const deployments: V1Deployment[] = [];
  const services: V1Service[] = [];
  const secrets: V1Secret[] = [];
  const cronJobs: V1CronJob[] = [];
  const jobTemplates: V1Job[] = [];
  for (const group of job.taskGroups) {
    const secret = filesSecret(job, group, options);
    if (secret) secrets.push(secret);
    if (job.type === 'service') {
      deployments.push(groupDeployment(job, group, options));
      services.push(...groupServices(job, group, options));
    } else if (job.type === 'periodic') {
      cronJobs.push(cronJob(job, group, options));
    } else {
      jobTemplates.push(jobTemplate(job, group, options));
    }
  }
  return { deployments, services, secrets, cronJobs, jobTemplates };
}

/** Bytes of the memory limit of a task, as reported in `MemoryUsage.limitBytes`. */
export function memoryLimitBytes(memoryMb: number): number {
  return memoryMb * MIB;
}
