/**
 * Swarm scheduler: the driver that runs apps on a Docker Swarm (`SVC_SCHEDULER_DRIVER=swarm`,
 * docs/drivers.md). Each service task group of a job is one replicated Swarm service (see
 * `domain/scheduler/swarm`), written through the manager's Engine API; its tasks are read back as
 * allocations and registered with the platform's own checks (`task-sync.ts`). Job records stay with
 * the platform (`job-records.ts`). At open the driver puts back every service it owns to its record
 * (a service changed by hand is rewritten) and removes the services of jobs it no longer knows.
 */
import fs from 'node:fs';
import path from 'node:path';
import type Docker from 'dockerode';
import type { Logger } from 'pino';
import { ConflictError, NotFoundError, ValidationError } from '../../domain/errors.js';
import type { RegistryWriter } from '../../domain/registry/index.js';
import type { LogSink } from '../../domain/logs/index.js';
import {
  normalizeJob,
  type Allocation,
  type AllocationChange,
  type AllocationFilter,
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
import { isTerminalAllocation } from '../../domain/scheduler/allocation.js';
import { canonicalJson } from '../../domain/canonical-json.js';
import {
  MANAGED_BY,
  SwarmLabel,
  containerPorts,
  groupSecrets,
  groupVersionHash,
  secretName,
  serviceName,
  translateService,
  validateJobForSwarm,
} from '../../domain/scheduler/swarm/index.js';
import { silentLogger } from '../logger.js';
import { JobRecords, type SwarmJobRecord } from './job-records.js';
import { TaskSync } from './task-sync.js';
import { TaskLogs } from './task-logs.js';
import { containerOf, drifted } from './service-spec.js';

/** Options of the swarm driver. */
export interface SwarmSchedulerOptions {
  readonly engine: Docker;
  /** Where job records are kept. */
  readonly dataDir: string;
  readonly registry: RegistryWriter;
  /** Each app's secret files, `<appSecretsDir>/<app>/<KEY>`, become Swarm secrets. @default none */
  readonly appSecretsDir?: string;
  /** @default local */
  readonly region?: string;
  /** @default dc1 */
  readonly datacenter?: string;
  /** @default silent */
  readonly logger?: Logger;
  /** Full re-read period of tasks. @default 5000 */
  readonly resyncMs?: number;
  /** Where tasks' output is delivered (ADR 0165). @default not captured */
  readonly logs?: LogSink;
}

type EngineService = Docker.Service & { Spec?: Docker.ServiceSpec; Version?: { Index?: number } };

/** The network every task joins. */
export const NETWORK = 'svc-apps';

const MANAGED = { label: [`${SwarmLabel.managedBy}=${MANAGED_BY}`] };

/** The swarm driver. Create with {@link SwarmScheduler.open}; `close()` stops following (services keep running). */
export class SwarmScheduler implements Scheduler {
  readonly #options: SwarmSchedulerOptions;
  readonly #engine: Docker;
  readonly #records: JobRecords;
  readonly #sync: TaskSync;
  readonly #logs: TaskLogs | undefined;
  readonly #region: string;
  #queue: Promise<unknown> = Promise.resolve();
  /** Groups (`<job>/<group>`) whose older services go once the named one is ready. */
  readonly #handOvers = new Map<string, { service: string; replicas: number }>();
  #handOverQueued = false;

  private constructor(options: SwarmSchedulerOptions) {
    this.#options = options;
    this.#engine = options.engine;
    this.#records = new JobRecords(options.dataDir);
    this.#region = options.region ?? 'local';
    this.#sync = new TaskSync({
      engine: options.engine,
      registry: options.registry,
      region: this.#region,
      datacenter: options.datacenter ?? 'dc1',
      logger: options.logger ?? silentLogger(),
      ...(options.resyncMs !== undefined ? { resyncMs: options.resyncMs } : {}),
      checkOf: (service) => this.#checkOf(service),
    });
    this.#logs = options.logs
      ? new TaskLogs(options.engine, options.logs, options.logger ?? silentLogger())
      : undefined;
    if (this.#logs) this.#sync.events.on('change', (change: AllocationChange) => this.#capture(change.allocation));
  }

  /** Follows a task's output, labelled with its job's process and release. */
  #capture(allocation: Allocation): void {
    const record = this.#records.get(allocation.jobId);
    const commit = record && record.version === allocation.jobVersion ? record.spec.meta?.['svc.commit'] : undefined;
    this.#logs?.follow(allocation, {
      process: record?.spec.meta?.['svc.process'] ?? allocation.taskGroup,
      release: commit !== undefined ? commit.slice(0, 12) : `v${allocation.jobVersion}`,
    });
  }

  /** Opens the driver: adopts or puts back the services it owns, removes those of unknown jobs, then follows tasks. */
  static async open(options: SwarmSchedulerOptions): Promise<SwarmScheduler> {
    const scheduler = new SwarmScheduler(options);
    await scheduler.#ensureNetwork();
    await scheduler.#exclusive(() => scheduler.#adopt());
    const handOver = () => {
      if (scheduler.#handOvers.size === 0 || scheduler.#handOverQueued) return;
      scheduler.#handOverQueued = true;
      void scheduler
        .#exclusive(async () => {
          scheduler.#handOverQueued = false;
          await scheduler.#handOver();
        })
        .catch((error: unknown) =>
          (options.logger ?? silentLogger()).warn({ err: error }, 'swarm hand-over failed; retried on the next change'),
        );
    };
    scheduler.#sync.events.on('change', handOver);
    scheduler.#sync.events.on('health', handOver);
    await scheduler.#sync.start();
    handOver();
    return scheduler;
  }

  async submitJob(job: JobSpec): Promise<SubmitResult> {
    const normalized = normalizeJob(job);
    validateJobForSwarm(normalized);
    return this.#exclusive(() => this.#submit(normalized));
  }

  async stopJob(jobId: string, options: { readonly purge?: boolean } = {}): Promise<WriteOutcome> {
    return this.#exclusive(async (): Promise<WriteOutcome> => {
      const record = this.#records.get(jobId);
      const removed = await this.#removeServices((s) => s.Spec?.Labels?.[SwarmLabel.job] === jobId);
      await this.#removeSecrets(jobId, new Set());
      if (record === undefined) {
        if (removed === 0) throw new NotFoundError(`job "${jobId}" not found`, { details: { jobId } });
        return 'deleted';
      }
      if (options.purge) this.#records.delete(jobId);
      else this.#records.put({ ...record, status: 'dead' });
      await this.#sync.sync();
      return 'deleted';
    });
  }

  async getJob(jobId: string): Promise<JobStatus | undefined> {
    const record = this.#records.get(jobId);
    return record === undefined ? undefined : statusOf(record);
  }

  async listJobs(filter: JobFilter = {}): Promise<readonly JobStatus[]> {
    return this.#records
      .all()
      .filter((r) => filter.app === undefined || r.spec.app === filter.app)
      .map(statusOf);
  }

  async listAllocations(filter: AllocationFilter = {}): Promise<readonly Allocation[]> {
    await this.#sync.sync();
    return this.#sync
      .allocations()
      .filter(
        (a) =>
          (filter.app === undefined || a.app === filter.app) &&
          (filter.jobId === undefined || a.jobId === filter.jobId) &&
          (filter.taskGroup === undefined || a.taskGroup === filter.taskGroup) &&
          (filter.includeTerminal === true || !isTerminalAllocation(a.status)),
      )
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  async getAllocation(allocationId: string): Promise<Allocation | undefined> {
    await this.#sync.sync();
    return this.#sync.allocations().find((a) => a.id === allocationId);
  }

  async scale(jobId: string, taskGroup: string, count: number): Promise<WriteOutcome> {
    if (!Number.isInteger(count) || count < 0)
      throw new ValidationError(`count must be a whole number of at least 0, not ${count}`, { details: { count } });
    return this.#exclusive(async (): Promise<WriteOutcome> => {
      const record = this.#records.get(jobId);
      const group = record?.spec.taskGroups.find((g) => g.name === taskGroup);
      if (!record || record.status === 'dead' || !group)
        throw new NotFoundError(`task group "${taskGroup}" of job "${jobId}" not found`, {
          details: { jobId, taskGroup },
        });
      const service = await this.#currentService(record.spec, group);
      if ((record.scaled[taskGroup] ?? group.count) === count && service?.Spec?.Mode?.Replicated?.Replicas === count)
        return 'unchanged';
      this.#records.put({ ...record, scaled: { ...record.scaled, [taskGroup]: count } });
      if (service?.Spec) {
        await this.#engine
          .getService(service.ID)
          .update({ version: service.Version?.Index, ...service.Spec, Mode: { Replicated: { Replicas: count } } });
      } else {
        await this.#write(record.spec, group, record.version, count);
      }
      await this.#sync.sync();
      return 'updated';
    });
  }

  /** Swarm rolls by itself (start-first, gated by the platform's checks): there are never canaries to promote. */
  async promoteCanaries(jobId: string): Promise<WriteOutcome> {
    if (!this.#records.get(jobId)) throw new NotFoundError(`job "${jobId}" not found`, { details: { jobId } });
    return 'unchanged';
  }

  pausePeriodic(jobId: string): Promise<WriteOutcome> {
    return Promise.reject(unsupported('periodic jobs', jobId));
  }

  resumePeriodic(jobId: string): Promise<WriteOutcome> {
    return Promise.reject(unsupported('periodic jobs', jobId));
  }

  forcePeriodic(jobId: string): Promise<Execution> {
    return Promise.reject(unsupported('periodic jobs', jobId));
  }

  dispatch(jobId: string): Promise<Execution> {
    return Promise.reject(unsupported('dispatched batch jobs', jobId));
  }

  async getExecution(): Promise<Execution | undefined> {
    return undefined;
  }

  async listExecutions(): Promise<readonly Execution[]> {
    return [];
  }

  async memoryUsage(allocationId: string): Promise<MemoryUsage> {
    const allocation = await this.getAllocation(allocationId);
    if (!allocation)
      throw new NotFoundError(`allocation "${allocationId}" not found`, { details: { allocation: allocationId } });
    return allocation.memory;
  }

  watch(listener: (change: AllocationChange) => void): Unsubscribe {
    this.#sync.events.on('change', listener);
    return () => this.#sync.events.off('change', listener);
  }

  /** Stops following tasks and deregisters their instances; the services keep running. */
  async close(): Promise<void> {
    await this.#queue.catch(() => undefined);
    this.#logs?.close();
    this.#sync.close();
  }

  async #submit(job: JobSpec): Promise<SubmitResult> {
    const record = this.#records.get(job.id);
    const same =
      record !== undefined && record.status === 'running' && canonicalJson(record.spec) === canonicalJson(job);
    const version = same ? record.version : (record?.version ?? 0) + 1;
    const scaled: string[] = [];
    const rolled: string[] = [];
    const scaledCounts: Record<string, number> = {};
    for (const group of job.taskGroups) {
      const before = record?.spec.taskGroups.find((g) => g.name === group.name);
      // A count set by scale (autoscaling) stands until the submitted spec changes the group's own count.
      const kept = record?.scaled[group.name];
      if (kept !== undefined && before?.count === group.count) scaledCounts[group.name] = kept;
      const replicas = scaledCounts[group.name] ?? group.count;
      const written = await this.#write(job, group, version, replicas);
      // A group whose version changed rolls (to a new service, or back to one still running).
      if (before === undefined || groupVersionHash(record!.spec, before) !== groupVersionHash(job, group))
        rolled.push(group.name);
      else if (written !== 'unchanged') scaled.push(group.name);
    }
    const groups = new Set(job.taskGroups.map((g) => g.name));
    const removed = await this.#removeServices(
      (s) => s.Spec?.Labels?.[SwarmLabel.job] === job.id && !groups.has(s.Spec.Labels[SwarmLabel.group] ?? ''),
    );
    for (const key of this.#handOvers.keys())
      if (key.startsWith(`${job.id}/`) && !groups.has(key.slice(job.id.length + 1))) this.#handOvers.delete(key);
    this.#records.put({
      spec: job,
      version,
      status: 'running',
      submittedAt: same ? record.submittedAt : new Date().toISOString(),
      scaled: scaledCounts,
    });
    await this.#removeSecrets(job.id, await this.#secretsInUse(job.id));
    await this.#sync.sync();
    const outcome: WriteOutcome =
      record === undefined || record.status === 'dead'
        ? 'created'
        : same && scaled.length + rolled.length + removed === 0
          ? 'unchanged'
          : 'updated';
    return { outcome, jobVersion: version, scaled, rolled, restarted: [], awaitingPromotion: [] };
  }

  /** Writes one group's secrets and service; `unchanged` when the service already matches. */
  async #write(
    job: JobSpec,
    group: JobSpec['taskGroups'][number],
    version: number,
    replicas: number,
  ): Promise<WriteOutcome> {
    const secrets = [];
    for (const secret of groupSecrets(group, this.#appSecrets(job.app))) {
      const name = secretName(job.id, group.name, secret.key, secret.content);
      secrets.push({ ...secret, name, id: await this.#secret(job, name, secret.key, secret.content) });
    }
    const existing = await this.#currentService(job, group);
    const name = existing?.Spec?.Name ?? serviceName(job.id, group.name, groupVersionHash(job, group));
    const jobVersion =
      existing?.Spec?.Labels?.[SwarmLabel.version] === groupVersionHash(job, group)
        ? Number(existing.Spec.Labels[SwarmLabel.jobVersion] ?? version)
        : version;
    const spec = translateService(job, group, name, {
      region: this.#region,
      jobVersion,
      secrets,
      replicas,
      network: NETWORK,
    });
    let outcome: WriteOutcome = 'unchanged';
    if (existing?.Spec) {
      if (drifted(existing.Spec, spec)) {
        await this.#engine.getService(existing.ID).update({ version: existing.Version?.Index, ...spec });
        outcome = 'updated';
      }
    } else {
      await this.#engine.createService(spec);
      outcome = 'created';
    }
    // The group's other services (older versions) are removed once this one's tasks pass.
    this.#handOvers.set(`${job.id}/${group.name}`, { service: name, replicas });
    return outcome;
  }

  /**
   * The service that runs `group` as `job` has it: the one labelled with the group's version hash. A
   * group with a static host port has one service, updated in place (stop-first): two services could
   * not both publish that port on a node.
   */
  async #currentService(job: JobSpec, group: JobSpec['taskGroups'][number]): Promise<EngineService | undefined> {
    const services = await this.#groupServices(job.id, group.name);
    if (containerPorts(group).some((port) => port.static !== undefined)) return services[0];
    return services.find((s) => s.Spec?.Labels?.[SwarmLabel.version] === groupVersionHash(job, group));
  }

  async #groupServices(jobId: string, group: string): Promise<EngineService[]> {
    const services = (await this.#engine.listServices({
      filters: { label: [`${SwarmLabel.job}=${jobId}`, `${SwarmLabel.group}=${group}`] },
    })) as EngineService[];
    return services.filter((s) => s.Spec?.Labels?.[SwarmLabel.managedBy] === MANAGED_BY);
  }

  /**
   * Start before stop, gated by the platform's checks: a group's older services are removed once the
   * current service has its replicas running, each passing its checks. A version that never passes
   * leaves the old one serving; the deploy's rollback then makes the old one current again.
   */
  async #handOver(): Promise<void> {
    for (const [key, target] of [...this.#handOvers]) {
      const [jobId = '', group = ''] = [key.slice(0, key.lastIndexOf('/')), key.slice(key.lastIndexOf('/') + 1)];
      const services = await this.#groupServices(jobId, group);
      const current = services.find((s) => s.Spec?.Name === target.service);
      const others = services.filter((s) => s !== current);
      if (current === undefined || others.length === 0) {
        if (current !== undefined || services.length === 0) this.#handOvers.delete(key);
        continue;
      }
      const ready = this.#sync.readyTasks(current.ID);
      if (ready < target.replicas) continue;
      for (const old of others) await this.#engine.getService(old.ID).remove();
      this.#handOvers.delete(key);
      (this.#options.logger ?? silentLogger()).info(
        { job: jobId, group, service: target.service, removed: others.map((o) => o.Spec?.Name) },
        'swarm service handed over',
      );
    }
  }

  /** The id of the secret `name`, created with `content` when absent. */
  async #secret(job: JobSpec, name: string, key: string, content: string): Promise<string> {
    const found = (await this.#engine.listSecrets({ filters: { name: [name] } })).find((s) => s.Spec?.Name === name);
    if (found?.ID) return found.ID;
    const created = (await this.#engine.createSecret({
      Name: name,
      Labels: { [SwarmLabel.managedBy]: MANAGED_BY, [SwarmLabel.job]: job.id, [SwarmLabel.secretOf]: key },
      Data: Buffer.from(content).toString('base64'),
    })) as { id?: string; ID?: string };
    return created.id ?? created.ID ?? (await this.#secret(job, name, key, content));
  }

  /** The names of the secrets a job's services reference now. */
  async #secretsInUse(jobId: string): Promise<Set<string>> {
    const services = (await this.#engine.listServices({ filters: MANAGED })) as EngineService[];
    return new Set(
      services
        .filter((s) => s.Spec?.Labels?.[SwarmLabel.job] === jobId)
        .flatMap((s) => {
          return (containerOf(s.Spec)?.Secrets ?? []).map((r) => r.SecretName ?? '');
        }),
    );
  }

  /** Removes a job's secrets other than `keep` (a secret still used by a stopping task is left for the next pass). */
  async #removeSecrets(jobId: string, keep: Set<string>): Promise<void> {
    const secrets = await this.#engine.listSecrets({ filters: { label: [`${SwarmLabel.job}=${jobId}`] } });
    for (const secret of secrets)
      if (secret.ID && !keep.has(secret.Spec?.Name ?? ''))
        await this.#engine
          .getSecret(secret.ID)
          .remove()
          .catch(() => undefined);
  }

  async #removeServices(which: (service: EngineService) => boolean): Promise<number> {
    const services = (await this.#engine.listServices({ filters: MANAGED })) as EngineService[];
    let removed = 0;
    for (const service of services.filter(which)) {
      await this.#engine.getService(service.ID).remove();
      removed++;
    }
    return removed;
  }

  /**
   * The overlay network every task joins: a task's host-mode ports are served through its network,
   * and tasks on different nodes reach each other on it.
   */
  async #ensureNetwork(): Promise<void> {
    const found = await this.#engine.listNetworks({ filters: { name: [NETWORK] } });
    if (found.some((n) => n.Name === NETWORK)) return;
    await this.#engine.createNetwork({
      Name: NETWORK,
      Driver: 'overlay',
      Attachable: true,
      Labels: { [SwarmLabel.managedBy]: MANAGED_BY },
    });
  }

  /** Puts back every recorded job's services; removes services of jobs with no running record. */
  async #adopt(): Promise<void> {
    const running = new Set(
      this.#records
        .all()
        .filter((r) => r.status === 'running')
        .map((r) => r.spec.id),
    );
    const gone = await this.#removeServices((s) => !running.has(s.Spec?.Labels?.[SwarmLabel.job] ?? ''));
    if (gone > 0)
      (this.#options.logger ?? silentLogger()).info({ services: gone }, 'removed swarm services of unknown jobs');
    for (const record of this.#records.all().filter((r) => r.status === 'running'))
      for (const group of record.spec.taskGroups)
        await this.#write(record.spec, group, record.version, record.scaled[group.name] ?? group.count);
  }

  #appSecrets(app: string): Record<string, string> {
    const dir = this.#options.appSecretsDir === undefined ? undefined : path.join(this.#options.appSecretsDir, app);
    if (dir === undefined) return {};
    let names: string[];
    try {
      names = fs.readdirSync(dir);
    } catch {
      return {};
    }
    const secrets: Record<string, string> = {};
    for (const name of names.filter((n) => !n.startsWith('.'))) {
      const file = path.join(dir, name);
      if (fs.lstatSync(file).isFile()) secrets[name] = fs.readFileSync(file, 'utf8');
    }
    return secrets;
  }

  #checkOf(service: string): { path: string; intervalMs: number; timeoutMs: number } | undefined {
    for (const record of this.#records.all())
      for (const group of record.spec.taskGroups)
        for (const registered of group.services)
          if (registered.name === service && registered.check)
            return {
              path: registered.check.path,
              intervalMs: registered.check.interval.milliseconds,
              timeoutMs: registered.check.timeout.milliseconds,
            };
    return undefined;
  }

  #exclusive<T>(work: () => Promise<T>): Promise<T> {
    const next = this.#queue.then(work, work);
    this.#queue = next.catch(() => undefined);
    return next;
  }
}

function statusOf(record: SwarmJobRecord): JobStatus {
  return {
    spec: record.spec,
    version: record.version,
    status: record.status,
    paused: false,
    awaitingPromotion: [],
    submittedAt: record.submittedAt,
  };
}

function unsupported(what: string, jobId: string): ConflictError {
  return new ConflictError(`the swarm driver does not run ${what} (job "${jobId}"): docs/drivers.md`, {
    code: 'unsupported_by_driver',
    details: { driver: 'swarm', job: jobId },
  });
}
