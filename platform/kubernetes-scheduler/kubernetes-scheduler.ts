/**
 * Kubernetes scheduler: the driver for users who outgrew one host. It implements the scheduler port
 * by applying the objects of `domain/scheduler/kubernetes` (server-side apply, field manager `svc`)
 * to one namespace, keeps each job's record in a Secret, and reads pods back as allocations and
 * Jobs as executions. Readiness feeds the registry through the pod watcher.
 */
import { randomUUID } from 'node:crypto';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { ConflictError, NotFoundError, ValidationError } from '../../domain/errors.js';
import type { RegistryWriter } from '../../domain/registry/index.js';
import {
  normalizeJob,
  type Allocation,
  type AllocationChange,
  type AllocationFilter,
  type DispatchRequest,
  type Execution,
  type JobFilter,
  type JobSpec,
  type JobStatus,
  type MemoryUsage,
  type Scheduler,
  type SubmitResult,
  type Unsubscribe,
  type WriteOutcome,
} from '../../domain/scheduler/index.js';
import {
  MANAGED_BY,
  SvcAnnotation,
  SvcLabel,
  SvcRole,
  cronJobName,
  groupObjectName,
  groupVersionHash,
  isSvcPod,
  jobLabels,
  jobRecordName,
  jobRecordSecret,
  jobToExecution,
  labelValue,
  podToAllocation,
  readJobRecord,
  runJob,
  selector,
  shortHash,
  specHash,
  translateJob,
  validateJobForKubernetes,
  type JobRecord,
  type JobRecordState,
  type KubernetesTarget,
  type TemplateVersion,
} from '../../domain/scheduler/kubernetes/index.js';
import { silentLogger } from '../logger.js';
import { KubeClient } from './kube-client.js';
import { PodWatcher } from './pod-watcher.js';
import { canariesOf, sameState, toJobStatus, versionsOf } from './job-record-view.js';
import { applyDesired, desiredObjects } from './desired-objects.js';
import { withPodUsage } from './pod-usage.js';

/** Options of the kubernetes driver. */
export interface KubernetesSchedulerOptions {
  /** Loaded kubeconfig, its current context selecting the cluster. */
  readonly kubeConfig: KubeConfig;
  /** Namespace every object is written to. @default svc-apps */
  readonly namespace?: string;
  /** Where instances and readiness are published. */
  readonly registry: RegistryWriter;
  /** Scheduler region of this target. @default local */
  readonly region?: string;
  /** Datacenter reported on allocations. @default the kubeconfig context name */
  readonly datacenter?: string;
  /** @default silent */
  readonly logger?: Logger;
  /** Bytes of pod log kept in an execution's output. @default 1 MiB */
  readonly outputLimitBytes?: number;
  /** Watch on pods (allocation changes, registry). @default true */
  readonly watchPods?: boolean;
}

/** The kubernetes driver. Create with {@link KubernetesScheduler.open}; `close()` stops the watch (workloads keep running). */
export class KubernetesScheduler implements Scheduler {
  readonly #client: KubeClient;
  readonly #options: KubernetesSchedulerOptions;
  readonly #watcher: PodWatcher;
  readonly #region: string;
  readonly #peaks = new Map<string, number>();
  #queue: Promise<unknown> = Promise.resolve();
  #closed = false;

  private constructor(options: KubernetesSchedulerOptions) {
    this.#options = options;
    this.#client = new KubeClient(options.kubeConfig, options.namespace ?? 'svc-apps');
    this.#region = options.region ?? 'local';
    this.#watcher = new PodWatcher({
      config: options.kubeConfig,
      client: this.#client,
      registry: options.registry,
      placement: this.#placement(),
      logger: options.logger ?? silentLogger(),
    });
  }

  /** Opens the driver: lists the namespace's pods into the registry and starts the pod watch. */
  static async open(options: KubernetesSchedulerOptions): Promise<KubernetesScheduler> {
    const scheduler = new KubernetesScheduler(options);
    if (options.watchPods !== false) await scheduler.#watcher.start();
    return scheduler;
  }

  /** The namespace this driver writes to. */
  get namespace(): string {
    return this.#client.namespace;
  }

  async submitJob(job: JobSpec): Promise<SubmitResult> {
    const normalized = normalizeJob(job);
    validateJobForKubernetes(normalized);
    return this.#exclusive(() => this.#submit(normalized));
  }

  async stopJob(jobId: string, options: { readonly purge?: boolean } = {}): Promise<WriteOutcome> {
    return this.#exclusive(async () => {
      const record = await this.#record(jobId);
      const wasRunning = record.state.status === 'running';
      await applyDesired(this.#client, record.spec, [], new Set());
      for (const run of await this.#client.list('Job', selector(jobLabels(record.spec)))) {
        if (options.purge || jobToExecution(run, undefined, '').status === 'running')
          await this.#client.remove('Job', run.metadata?.name ?? '');
      }
      if (options.purge) await this.#client.remove('Secret', jobRecordName(jobId));
      else if (wasRunning)
        await this.#writeRecord(record.spec, { ...record.state, status: 'dead', awaitingPromotion: [], canaries: {} });
      return wasRunning || options.purge ? 'deleted' : 'unchanged';
    });
  }

  async getJob(jobId: string): Promise<JobStatus | undefined> {
    const secret = await this.#client.read('Secret', jobRecordName(jobId));
    if (!secret || secret.metadata?.annotations?.[SvcAnnotation.jobId] !== jobId) return undefined;
    return toJobStatus(readJobRecord(secret));
  }

  async listJobs(filter: JobFilter = {}): Promise<readonly JobStatus[]> {
    const labels: Record<string, string> = { [SvcLabel.managedBy]: MANAGED_BY, [SvcLabel.role]: SvcRole.record };
    if (filter.app !== undefined) labels[SvcLabel.app] = labelValue(filter.app);
    return (await this.#client.list('Secret', selector(labels)))
      .map(readJobRecord)
      .filter((r) => filter.app === undefined || r.spec.app === filter.app)
      .sort((a, b) => a.spec.id.localeCompare(b.spec.id))
      .map(toJobStatus);
  }

  async listAllocations(filter: AllocationFilter = {}): Promise<readonly Allocation[]> {
    const labels: Record<string, string> = { [SvcLabel.managedBy]: MANAGED_BY };
    if (filter.app !== undefined) labels[SvcLabel.app] = labelValue(filter.app);
    if (filter.jobId !== undefined) labels[SvcLabel.job] = labelValue(filter.jobId);
    if (filter.taskGroup !== undefined) labels[SvcLabel.group] = labelValue(filter.taskGroup);
    const [pods, usage] = await Promise.all([
      this.#client.list('Pod', selector(labels)),
      filter.usage ? this.#client.podUsage(selector(labels)) : undefined,
    ]);
    return pods
      .filter(isSvcPod)
      .map((pod) => podToAllocation(pod, this.#placement()))
      .filter(
        (a) =>
          (filter.app === undefined || a.app === filter.app) &&
          (filter.jobId === undefined || a.jobId === filter.jobId) &&
          (filter.taskGroup === undefined || a.taskGroup === filter.taskGroup),
      )
      .filter((a) => filter.includeTerminal || !['complete', 'failed', 'lost'].includes(a.status))
      .map((a) => (usage === undefined ? a : withPodUsage(a, usage.get(a.id), this.#peaks)))
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
  }

  async getAllocation(allocationId: string): Promise<Allocation | undefined> {
    const pod = await this.#client.read('Pod', allocationId);
    return pod && isSvcPod(pod) ? podToAllocation(pod, this.#placement()) : undefined;
  }

  async scale(jobId: string, taskGroup: string, count: number): Promise<WriteOutcome> {
    if (!Number.isInteger(count) || count < 0)
      throw new ValidationError(`scale ${jobId}.${taskGroup}: count ${count} must be a non-negative integer`);
    return this.#exclusive(async () => {
      const record = await this.#record(jobId);
      if (!record.spec.taskGroups.some((g) => g.name === taskGroup))
        throw new NotFoundError(`job ${jobId} has no task group "${taskGroup}"`);
      const spec: JobSpec = {
        ...record.spec,
        taskGroups: record.spec.taskGroups.map((g) => (g.name === taskGroup ? { ...g, count } : g)),
      };
      return (await this.#submit(spec)).outcome;
    });
  }

  async promoteCanaries(jobId: string): Promise<WriteOutcome> {
    return this.#exclusive(async () => {
      const record = await this.#record(jobId);
      const canaries = canariesOf(record.state);
      if (record.state.awaitingPromotion.length === 0) return 'unchanged';
      const templates = { ...record.state.templates };
      for (const group of record.state.awaitingPromotion) {
        const canary = canaries[group];
        if (canary) templates[group] = canary;
      }
      const state = { ...record.state, templates, awaitingPromotion: [], canaries: {} };
      await applyDesired(this.#client, record.spec, desiredObjects(record.spec, state, this.#target()), new Set());
      await this.#writeRecord(record.spec, state);
      return 'updated';
    });
  }

  async pausePeriodic(jobId: string): Promise<WriteOutcome> {
    return this.#exclusive(() => this.#setPaused(jobId, true));
  }

  async resumePeriodic(jobId: string): Promise<WriteOutcome> {
    return this.#exclusive(() => this.#setPaused(jobId, false));
  }

  async forcePeriodic(jobId: string): Promise<Execution> {
    const record = await this.#record(jobId);
    if (record.spec.type !== 'periodic') throw new ValidationError(`job ${jobId} is not periodic`);
    if (record.state.status !== 'running') throw new ConflictError(`job ${jobId} is stopped`);
    const group = record.spec.taskGroups[0]!;
    const name = cronJobName(jobId, group.name);
    const cron = await this.#client.read('CronJob', name);
    if (!cron?.spec)
      throw new ConflictError(`job ${jobId}: CronJob ${this.namespace}/${name} is missing; submit the job again`);
    const run = runJob(cron.spec.jobTemplate, name, this.namespace, {
      executionId: `exec-${randomUUID()}`,
      env: {},
      role: 'periodic',
    });
    if (cron.metadata?.uid)
      run.metadata!.ownerReferences = [
        { apiVersion: 'batch/v1', kind: 'CronJob', name, uid: cron.metadata.uid, controller: true },
      ];
    return jobToExecution(await this.#client.createJob(run), undefined, '');
  }

  async dispatch(jobId: string, request: DispatchRequest = {}): Promise<Execution> {
    const record = await this.#record(jobId);
    const spec = record.spec;
    if (spec.type !== 'batch' || !spec.parameterized)
      throw new ValidationError(`job ${jobId}: only parameterized batch jobs can be dispatched`);
    if (record.state.status !== 'running') throw new ConflictError(`job ${jobId} is stopped`);
    const rule = spec.parameterized.payload;
    if (rule === 'required' && request.payload === undefined)
      throw new ValidationError(`dispatch ${jobId}: payload is required`);
    if (rule === 'forbidden' && request.payload !== undefined)
      throw new ValidationError(`dispatch ${jobId}: payload is forbidden`);
    const template = translateJob(spec, {
      namespace: this.namespace,
      region: this.#region,
      templateVersions: versionsOf(record.state),
    }).jobTemplates[0]!;
    const env = {
      ...(request.env ?? {}),
      ...(request.payload !== undefined ? { SVC_DISPATCH_PAYLOAD: request.payload } : {}),
    };
    const executionId = request.executionId ?? `exec-${randomUUID()}`;
    const timeoutMs = request.timeout?.milliseconds;
    const run = runJob(template, template.metadata!.name!, this.namespace, {
      executionId,
      env,
      role: 'dispatch',
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    });
    return jobToExecution(await this.#client.createJob(run), undefined, '');
  }

  async getExecution(executionId: string): Promise<Execution | undefined> {
    let [run] = await this.#client.list(
      'Job',
      selector({ [SvcLabel.managedBy]: MANAGED_BY, [SvcLabel.execution]: shortHash(executionId) }),
    );
    if (run && run.metadata?.annotations?.[SvcAnnotation.executionId] !== executionId) run = undefined;
    if (!run && /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(executionId)) {
      const byName = await this.#client.read('Job', executionId);
      if (byName?.metadata?.annotations?.[SvcAnnotation.jobId] !== undefined) run = byName;
    }
    return run ? this.#execution(run) : undefined;
  }

  async listExecutions(jobId: string): Promise<readonly Execution[]> {
    const runs = (
      await this.#client.list('Job', selector({ [SvcLabel.managedBy]: MANAGED_BY, [SvcLabel.job]: labelValue(jobId) }))
    ).filter((run) => run.metadata?.annotations?.[SvcAnnotation.jobId] === jobId);
    const executions = await Promise.all(runs.map((run) => this.#execution(run)));
    return executions.sort((a, b) => b.startedAt.localeCompare(a.startedAt));
  }

  async memoryUsage(allocationId: string): Promise<MemoryUsage> {
    const allocation = await this.getAllocation(allocationId);
    if (!allocation) throw new NotFoundError(`allocation ${allocationId} not found`);
    const sample = await this.#client.podMemoryBytes(allocationId);
    const peak = Math.max(this.#peaks.get(allocationId) ?? 0, sample.bytes);
    this.#peaks.set(allocationId, peak);
    // The metrics API has no peak: it is the highest sample this driver has read.
    return {
      currentRssBytes: sample.bytes,
      peakRssBytes: peak,
      limitBytes: allocation.memory.limitBytes,
      ...(sample.sampledAt ? { sampledAt: new Date(sample.sampledAt).toISOString() } : {}),
    };
  }

  watch(listener: (change: AllocationChange) => void): Unsubscribe {
    this.#watcher.events.on('change', listener);
    return () => this.#watcher.events.off('change', listener);
  }

  /** Stops the pod watch and deregisters this driver's instances; workloads keep running in the cluster. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#queue.catch(() => undefined);
    this.#watcher.close();
  }

  #placement(): { region: string; datacenter: string } {
    return {
      region: this.#region,
      datacenter: this.#options.datacenter ?? this.#options.kubeConfig.getCurrentContext(),
    };
  }

  /** Where this driver's objects go. */
  #target(): KubernetesTarget {
    return { namespace: this.namespace, region: this.#region };
  }

  async #record(jobId: string): Promise<JobRecord> {
    const secret = await this.#client.read('Secret', jobRecordName(jobId));
    if (!secret || secret.metadata?.annotations?.[SvcAnnotation.jobId] !== jobId)
      throw new NotFoundError(`job ${jobId} not found`);
    return readJobRecord(secret);
  }

  async #execution(run: Parameters<typeof jobToExecution>[0]): Promise<Execution> {
    const name = run.metadata?.name ?? '';
    const pods = (await this.#client.list('Pod', `job-name=${name}`)).sort((a, b) =>
      String(b.metadata?.creationTimestamp).localeCompare(String(a.metadata?.creationTimestamp)),
    );
    const pod = pods[0];
    const execution = jobToExecution(run, pod, '');
    if (!pod || execution.status === 'running') return execution;
    const limit = this.#options.outputLimitBytes ?? 1024 * 1024;
    const log = (await this.#client.podLog(pod.metadata?.name ?? '', limit)) ?? '';
    return { ...execution, output: log.length > limit ? log.slice(log.length - limit) : log };
  }

  async #writeRecord(job: JobSpec, state: JobRecordState): Promise<void> {
    const secret = jobRecordSecret(job, state, this.namespace);
    await this.#client.apply('Secret', secret);
  }

  async #submit(job: JobSpec): Promise<SubmitResult> {
    let existing: JobRecord | undefined;
    try {
      existing = await this.#record(job.id);
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error;
    }
    const running = existing?.state.status === 'running';
    const nextVersion = existing ? existing.state.version + 1 : 1;
    const before = running ? existing!.state : undefined;
    const templates: Record<string, TemplateVersion> = {};
    const canaries: Record<string, TemplateVersion> = {};
    const keep = new Set<string>();
    const rolled: string[] = [];
    const scaled: string[] = [];
    for (const group of job.taskGroups) {
      const hash = groupVersionHash(job, group);
      const stable = before?.templates[group.name];
      const oldCanary = before ? canariesOf(before)[group.name] : undefined;
      const oldGroup = running ? existing!.spec.taskGroups.find((g) => g.name === group.name) : undefined;
      if (job.type === 'service' && stable && stable.hash !== hash && (group.canary ?? 0) > 0 && group.count > 0) {
        // A changed group with canaries: the stable Deployment keeps the old template until promotion.
        templates[group.name] = stable;
        canaries[group.name] = oldCanary?.hash === hash ? oldCanary : { hash, version: nextVersion };
        keep.add(`Deployment/${groupObjectName(job.id, group.name)}`);
        if (oldCanary?.hash !== hash) rolled.push(group.name);
        continue;
      }
      templates[group.name] = stable?.hash === hash ? stable : { hash, version: nextVersion };
      if (stable && stable.hash !== hash) rolled.push(group.name);
      else if (oldGroup && oldGroup.count !== group.count) scaled.push(group.name);
    }
    const state: JobRecordState = {
      version: nextVersion,
      status: 'running',
      submittedAt: new Date().toISOString(),
      paused: existing?.state.paused ?? false,
      awaitingPromotion: Object.keys(canaries).sort(),
      templates,
      specHash: specHash(job),
      canaries,
    };
    const applied = await applyDesired(this.#client, job, desiredObjects(job, state, this.#target()), keep);
    const sameSpec = running && existing!.state.specHash === state.specHash;
    if (sameSpec && applied.written.length === 0 && applied.deleted.length === 0 && sameState(existing!.state, state)) {
      return {
        outcome: 'unchanged',
        jobVersion: existing!.state.version,
        scaled: [],
        rolled: [],
        restarted: [],
        awaitingPromotion: existing!.state.awaitingPromotion,
      };
    }
    await this.#writeRecord(job, state);
    this.#options.logger?.info(
      { jobId: job.id, version: nextVersion, written: applied.written, deleted: applied.deleted },
      'kubernetes job applied',
    );
    return {
      outcome: existing ? 'updated' : 'created',
      jobVersion: nextVersion,
      scaled,
      rolled,
      restarted: [],
      awaitingPromotion: state.awaitingPromotion,
    };
  }

  async #setPaused(jobId: string, paused: boolean): Promise<WriteOutcome> {
    const record = await this.#record(jobId);
    if (record.spec.type !== 'periodic') throw new ValidationError(`job ${jobId} is not periodic`);
    if (record.state.paused === paused) return 'unchanged';
    const state = { ...record.state, paused };
    if (state.status === 'running')
      await applyDesired(this.#client, record.spec, desiredObjects(record.spec, state, this.#target()), new Set());
    await this.#writeRecord(record.spec, state);
    return 'updated';
  }

  #exclusive<T>(fn: () => Promise<T>): Promise<T> {
    if (this.#closed) return Promise.reject(new ConflictError('kubernetes scheduler is closed'));
    const run = this.#queue.then(fn, fn);
    this.#queue = run.catch(() => undefined);
    return run;
  }
}
