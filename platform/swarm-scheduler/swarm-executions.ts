/**
 * Executions on the swarm driver: a dispatch of a parameterized batch job (a function invocation)
 * runs as a Swarm replicated job of one task, never restarted (`svc-<job>-<group>-x<hash>`), with
 * the run's environment and `SVC_DISPATCH_PAYLOAD`. Its task is an allocation of kind `dispatch`;
 * once it ended, its output is read from the task's log, the execution kept, and the service removed.
 * A run past its timeout is removed (its task killed) and ends `timed_out`.
 */
import { randomUUID } from 'node:crypto';
import type Docker from 'dockerode';
import type { Logger } from 'pino';
import { ValidationError } from '../../domain/errors.js';
import type { DispatchRequest, Execution, ExecutionStatus, JobSpec } from '../../domain/scheduler/index.js';
import {
  MANAGED_BY,
  SwarmLabel,
  serviceName,
  shortHash,
  translateService,
  type GroupSecret,
} from '../../domain/scheduler/swarm/index.js';
import type { SwarmJobRecord } from './job-records.js';

/** Executions kept after their service is gone, per driver. */
const KEPT_EXECUTIONS = 500;

/** What executions need from the driver. */
export interface SwarmExecutionsOptions {
  readonly engine: Docker;
  readonly region: string;
  readonly network: string;
  readonly logger: Logger;
  /** The address nodes pull the managed registry's images from. @default as released */
  readonly nodeRegistry?: string;
  /** Bytes of output kept per stream. @default 1 MiB */
  readonly outputLimitBytes?: number;
  /** The group's secrets, written to the engine. */
  secretsOf(
    job: JobSpec,
    group: JobSpec['taskGroups'][number],
  ): Promise<(GroupSecret & { name: string; id: string })[]>;
  /** Hands the group's volumes to its tasks' user. */
  prepareVolumes(job: JobSpec, group: JobSpec['taskGroups'][number]): Promise<void>;
}

interface EngineTask {
  readonly ID?: string;
  readonly CreatedAt?: string;
  readonly Status?: {
    readonly State?: string;
    readonly Timestamp?: string;
    readonly ContainerStatus?: { readonly ExitCode?: number };
  };
}

/** Dispatches and reads executions. */
export class SwarmExecutions {
  readonly #options: SwarmExecutionsOptions;
  readonly #finished = new Map<string, Execution>();
  readonly #timers = new Map<string, NodeJS.Timeout>();
  readonly #started = new Map<string, { jobId: string; group: string; at: string }>();

  constructor(options: SwarmExecutionsOptions) {
    this.#options = options;
  }

  /** Starts one run of `record`'s parameterized job. */
  async dispatch(record: SwarmJobRecord, request: DispatchRequest = {}): Promise<Execution> {
    const job = record.spec;
    const group = job.taskGroups[0];
    if (job.parameterized === undefined || group === undefined)
      throw new ValidationError(`job "${job.id}" is not a parameterized batch job`, {
        code: 'not_parameterized',
        details: { jobId: job.id },
      });
    if (job.parameterized.payload === 'required' && request.payload === undefined)
      throw new ValidationError(`job "${job.id}" needs a payload`, { details: { jobId: job.id } });
    return this.run(record, group, 'dispatch', request);
  }

  /** True while a run of `jobId` has not ended (a cron job that prohibits overlap skips its tick). */
  async running(jobId: string): Promise<boolean> {
    return (await this.list(jobId)).some((execution) => execution.status === 'running');
  }

  /** Starts one run of a group: a dispatch, or a cron tick (`periodic_child`). */
  async run(
    record: SwarmJobRecord,
    group: JobSpec['taskGroups'][number],
    kind: 'dispatch' | 'periodic_child',
    request: DispatchRequest = {},
  ): Promise<Execution> {
    const job = record.spec;
    const id = request.executionId ?? `exec-${randomUUID()}`;
    const env: Record<string, string> = { ...request.env };
    if (request.payload !== undefined) env.SVC_DISPATCH_PAYLOAD = request.payload;
    const secrets = await this.#options.secretsOf(job, group);
    await this.#options.prepareVolumes(job, group);
    const name = serviceName(job.id, group.name, `x${shortHash(id, 7)}`);
    const spec = translateService(job, { ...group, ports: [], services: [] }, name, {
      region: this.#options.region,
      jobVersion: record.version,
      secrets,
      network: this.#options.network,
      execution: { id, env, kind },
      ...(this.#options.nodeRegistry !== undefined ? { nodeRegistry: this.#options.nodeRegistry } : {}),
    });
    const created = (await this.#options.engine.createService(spec)) as { id?: string; ID?: string };
    const serviceId = created.id ?? created.ID ?? '';
    const at = new Date().toISOString();
    this.#started.set(id, { jobId: job.id, group: group.name, at });
    const timeout = request.timeout?.milliseconds ?? group.task.timeout?.milliseconds;
    if (timeout !== undefined && timeout > 0) {
      const timer = setTimeout(() => void this.#timeOut(id, serviceId), timeout);
      timer.unref();
      this.#timers.set(id, timer);
    }
    const [task] = (await this.#options.engine.listTasks({ filters: { service: [serviceId] } })) as EngineTask[];
    return {
      id,
      jobId: job.id,
      taskGroup: group.name,
      allocationId: task?.ID ?? serviceId,
      status: 'running',
      exitCode: null,
      output: '',
      errorOutput: '',
      durationMs: null,
      startedAt: at,
    };
  }

  /** An execution as it stands; a finished one is read once, kept, and its service removed. */
  async get(executionId: string): Promise<Execution | undefined> {
    try {
      return await this.#read(executionId);
    } catch (error) {
      // Another read finished it and removed its service meanwhile: that read kept it.
      if ((error as { statusCode?: number }).statusCode === 404) return this.#finished.get(executionId);
      throw error;
    }
  }

  async #read(executionId: string): Promise<Execution | undefined> {
    const kept = this.#finished.get(executionId);
    if (kept) return kept;
    const service = await this.#service(executionId);
    if (service === undefined) return undefined;
    const labels = service.Spec?.Labels ?? {};
    const [task] = (await this.#options.engine.listTasks({ filters: { service: [service.ID] } })) as EngineTask[];
    const state = task?.Status?.State;
    const status: ExecutionStatus =
      state === 'complete' ? 'succeeded' : state === 'failed' || state === 'rejected' ? 'failed' : 'running';
    const startedAt = this.#started.get(executionId)?.at ?? task?.CreatedAt ?? new Date().toISOString();
    const base = {
      id: executionId,
      jobId: labels[SwarmLabel.job] ?? '',
      taskGroup: labels[SwarmLabel.group] ?? '',
      allocationId: task?.ID ?? service.ID,
      startedAt,
    };
    if (status === 'running') return { ...base, status, exitCode: null, output: '', errorOutput: '', durationMs: null };
    const { stdout, stderr } = task?.ID ? await this.#output(task.ID) : { stdout: '', stderr: '' };
    const finishedAt = task?.Status?.Timestamp ?? new Date().toISOString();
    const execution: Execution = {
      ...base,
      status,
      exitCode: task?.Status?.ContainerStatus?.ExitCode ?? (status === 'succeeded' ? 0 : 1),
      output: stdout,
      errorOutput: stderr,
      durationMs: Math.max(0, Date.parse(finishedAt) - Date.parse(startedAt)),
      finishedAt,
    };
    this.#keep(execution);
    await this.#options.engine
      .getService(service.ID)
      .remove()
      .catch(() => undefined);
    return execution;
  }

  /** The executions of a job: those still running and those kept. */
  async list(jobId: string): Promise<Execution[]> {
    const services = (await this.#options.engine.listServices({
      filters: { label: [`${SwarmLabel.job}=${jobId}`, SwarmLabel.execution] },
    })) as (Docker.Service & { Spec?: Docker.ServiceSpec })[];
    const live = await Promise.all(services.map((s) => this.get(s.Spec?.Labels?.[SwarmLabel.execution] ?? '')));
    const kept = [...this.#finished.values()].filter((e) => e.jobId === jobId);
    const all = new Map<string, Execution>();
    for (const execution of [...kept, ...live]) if (execution) all.set(execution.id, execution);
    return [...all.values()].sort((a, b) => a.startedAt.localeCompare(b.startedAt));
  }

  close(): void {
    for (const timer of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
  }

  async #timeOut(executionId: string, serviceId: string): Promise<void> {
    this.#timers.delete(executionId);
    if (this.#finished.has(executionId)) return;
    const started = this.#started.get(executionId);
    const finishedAt = new Date().toISOString();
    const output = (await this.#service(executionId)) ? await this.get(executionId) : undefined;
    if (output && output.status !== 'running') return;
    this.#keep({
      id: executionId,
      jobId: started?.jobId ?? '',
      taskGroup: started?.group ?? '',
      allocationId: output?.allocationId ?? serviceId,
      status: 'timed_out',
      exitCode: null,
      output: '',
      errorOutput: '',
      durationMs: started ? Date.parse(finishedAt) - Date.parse(started.at) : null,
      startedAt: started?.at ?? finishedAt,
      finishedAt,
    });
    await this.#options.engine
      .getService(serviceId)
      .remove()
      .catch((error: unknown) => this.#options.logger.warn({ err: error, executionId }, 'timed-out run not removed'));
  }

  #keep(execution: Execution): void {
    this.#finished.set(execution.id, execution);
    clearTimeout(this.#timers.get(execution.id));
    this.#timers.delete(execution.id);
    for (const id of this.#finished.keys()) {
      if (this.#finished.size <= KEPT_EXECUTIONS) break;
      this.#finished.delete(id);
    }
  }

  async #service(executionId: string): Promise<(Docker.Service & { Spec?: Docker.ServiceSpec }) | undefined> {
    const services = (await this.#options.engine.listServices({
      filters: { label: [`${SwarmLabel.execution}=${executionId}`, `${SwarmLabel.managedBy}=${MANAGED_BY}`] },
    })) as (Docker.Service & { Spec?: Docker.ServiceSpec })[];
    return services[0];
  }

  /** A finished task's stdout and stderr, each cut at the output limit. */
  async #output(taskId: string): Promise<{ stdout: string; stderr: string }> {
    const task = this.#options.engine.getTask(taskId) as Docker.Task & {
      logs(options: Record<string, unknown>): Promise<Buffer | NodeJS.ReadableStream>;
    };
    const raw = await task.logs({ follow: false, stdout: true, stderr: true }).catch(() => Buffer.alloc(0));
    const buffer = Buffer.isBuffer(raw) ? raw : await collect(raw);
    const limit = this.#options.outputLimitBytes ?? 1024 * 1024;
    const streams = { stdout: [] as Buffer[], stderr: [] as Buffer[] };
    // The engine's multiplexed framing: 1 byte stream (1 stdout, 2 stderr), 3 zero, 4 bytes length.
    for (let at = 0; at + 8 <= buffer.length;) {
      const size = buffer.readUInt32BE(at + 4);
      const frame = buffer.subarray(at + 8, at + 8 + size);
      (buffer[at] === 2 ? streams.stderr : streams.stdout).push(frame);
      at += 8 + size;
    }
    const text = (parts: Buffer[]) => Buffer.concat(parts).subarray(0, limit).toString('utf8');
    return { stdout: text(streams.stdout), stderr: text(streams.stderr) };
  }
}

async function collect(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks);
}
