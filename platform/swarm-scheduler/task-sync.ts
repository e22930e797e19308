/**
 * Task sync: the swarm driver's view of its tasks. It reads every task of the services the driver
 * wrote, at start, on each engine event about those services and their containers (Docker's event
 * stream), and every `resyncMs` in case an event was missed. Each task whose state changed becomes an
 * `AllocationChange`; each running task with a published port is registered with its node's address
 * and the platform's own HTTP check, the same check the local driver runs. Running tasks' CPU and
 * memory are sampled about every second (`task-stats.ts`).
 */
import { EventEmitter } from 'node:events';
import type Docker from 'dockerode';
import type { Logger } from 'pino';
import type { RegistryWriter } from '../../domain/registry/index.js';
import type { Allocation, AllocationChange } from '../../domain/scheduler/index.js';
import { canonicalJson } from '../../domain/canonical-json.js';
import {
  MANAGED_BY,
  SwarmLabel,
  isSvcTask,
  taskToAllocation,
  type SwarmTask,
} from '../../domain/scheduler/swarm/index.js';
import { HttpHealthCheck } from '../local-scheduler/allocations/http-health-check.js';
import { NodeEngines } from './node-engines.js';
import { TaskStats } from './task-stats.js';

/** How soon a task on its way to running is read again. */
const SETTLE_MS = 100;

/** The ports a task's labels say it publishes. */
function portCount(task: SwarmTask): number {
  try {
    return (JSON.parse(task.Spec?.ContainerSpec?.Labels?.[SwarmLabel.ports] ?? '[]') as unknown[]).length;
  } catch {
    return 0;
  }
}

interface RegisteredService {
  readonly name: string;
  readonly portLabel: string;
  readonly tags: readonly string[];
  readonly checked: boolean;
}

/** Options of {@link TaskSync}. */
export interface TaskSyncOptions {
  readonly engine: Docker;
  /** Each node's engine, for task stats. @default the manager's alone */
  readonly nodes?: NodeEngines;
  readonly registry: RegistryWriter;
  readonly region: string;
  readonly datacenter: string;
  readonly logger: Logger;
  /** Full re-read period. @default 5000 */
  readonly resyncMs?: number;
  /** Check intervals and timeouts of each registered service, by registry service name. */
  readonly checkOf: (service: string) => { path: string; intervalMs: number; timeoutMs: number } | undefined;
}

/** Keeps allocations and the registry in step with the engine's tasks. */
export class TaskSync {
  readonly events = new EventEmitter();
  readonly #options: TaskSyncOptions;
  readonly #seen = new Map<string, Allocation>();
  readonly #checks = new Map<string, { readonly runner: HttpHealthCheck; readonly checked: boolean }>();
  readonly #nodes = new Map<string, string>();
  /** The container of each running task, by allocation (task) id. */
  readonly #containerOf = new Map<string, string>();
  readonly #stats: TaskStats;
  /** Tasks (allocation ids) whose group registers a checked service. */
  readonly #checked = new Set<string>();
  /** The service of each task, by allocation (task) id. */
  readonly #serviceOf = new Map<string, string>();
  #stream: NodeJS.ReadableStream | undefined;
  #timer: NodeJS.Timeout | undefined;
  #settle: NodeJS.Timeout | undefined;
  #pending: Promise<void> | undefined;
  #again = false;
  #closed = false;

  constructor(options: TaskSyncOptions) {
    this.#options = options;
    this.events.setMaxListeners(0);
    this.#stats = new TaskStats(options.nodes ?? new NodeEngines(options.engine), () =>
      [...this.#seen.values()].flatMap((a) => {
        const container = this.#containerOf.get(a.id);
        return a.status === 'running' && container !== undefined
          ? [
              {
                allocation: a.id,
                container,
                ...(a.task.container ? { node: a.task.container.node } : {}),
                limitBytes: a.memory.limitBytes,
              },
            ]
          : [];
      }),
    );
    this.#stats.events.on('sampled', () => this.events.emit('sampled'));
  }

  /** Reads the tasks once, then follows the engine's events. */
  async start(): Promise<void> {
    await this.sync();
    const stream = await this.#options.engine.getEvents({
      filters: { type: ['service', 'container'] },
    });
    this.#stream = stream;
    stream.on('data', () => void this.sync().catch(() => undefined));
    stream.on('error', (error: unknown) => this.#options.logger.warn({ err: error }, 'swarm event stream failed'));
    this.#timer = setInterval(() => void this.sync().catch(() => undefined), this.#options.resyncMs ?? 5000);
    this.#timer.unref();
    this.#stats.start();
  }

  /** The allocations last read, by task id. */
  allocations(): Allocation[] {
    return [...this.#seen.values()].map((allocation) => {
      const cpu = this.#stats.cpuOf(allocation.id);
      const memory = this.#stats.memoryOf(allocation.id);
      return { ...allocation, ...(cpu ? { cpu } : {}), ...(memory ? { memory } : {}) };
    });
  }

  /**
   * Tasks of the service `serviceId` that run, are wanted running, and pass every check of theirs (a
   * task of a group without checks is ready once it runs).
   */
  readyTasks(serviceId: string): number {
    let ready = 0;
    for (const allocation of this.#seen.values()) {
      if (this.#serviceOf.get(allocation.id) !== serviceId) continue;
      if (allocation.status !== 'running' || allocation.desiredStatus !== 'run') continue;
      const checks = [...this.#checks]
        .filter(([id, check]) => id.startsWith(`${allocation.id}-`) && check.checked)
        .map(([, check]) => check.runner);
      if (this.#checked.has(allocation.id) && checks.length === 0) continue;
      if (checks.every((runner) => runner.lastStatus === 'passing')) ready++;
    }
    return ready;
  }

  /** Re-reads every task now (coalesced: calls during a read cause one more read after it). */
  sync(): Promise<void> {
    if (this.#pending) {
      this.#again = true;
      return this.#pending;
    }
    this.#pending = this.#read().finally(() => {
      this.#pending = undefined;
      if (this.#again && !this.#closed) {
        this.#again = false;
        void this.sync().catch(() => undefined);
      }
    });
    return this.#pending;
  }

  /** Stops following; registered instances are deregistered. */
  close(): void {
    this.#closed = true;
    clearInterval(this.#timer);
    clearTimeout(this.#settle);
    this.#stats.close();
    (this.#stream as unknown as { destroy?: () => void } | undefined)?.destroy?.();
    for (const [id, check] of this.#checks) {
      check.runner.stop();
      this.#options.registry.deregister(id);
    }
    this.#checks.clear();
    this.events.removeAllListeners();
  }

  async #read(): Promise<void> {
    if (this.#closed) return;
    const { engine } = this.#options;
    const nodes = await engine.listNodes();
    for (const node of nodes) if (node.ID && node.Status?.Addr) this.#nodes.set(node.ID, node.Status.Addr);
    const tasks = ((await engine.listTasks()) as SwarmTask[]).filter(
      (task) => isSvcTask(task) && task.Spec?.ContainerSpec?.Labels?.[SwarmLabel.managedBy] === MANAGED_BY,
    );
    if (this.#closed) return;
    const placement = {
      region: this.#options.region,
      datacenter: this.#options.datacenter,
      nodeAddress: (id: string) => this.#nodes.get(id),
    };
    const ids = new Set<string>();
    let settling = false;
    for (const task of tasks) {
      const allocation = taskToAllocation(task, placement);
      ids.add(allocation.id);
      if (task.ServiceID !== undefined) this.#serviceOf.set(allocation.id, task.ServiceID);
      const container = task.Status?.ContainerStatus?.ContainerID;
      if (container) this.#containerOf.set(allocation.id, container);
      // The engine reports no event when a task is placed or its ports are published: while a task is
      // on its way to running, or runs without its ports yet, it is read again shortly.
      const wanted = task.DesiredState === 'running';
      if (
        wanted &&
        (allocation.status === 'pending' ||
          (allocation.status === 'running' && allocation.ports.length < portCount(task)))
      )
        settling = true;
      this.#observe(allocation, task);
    }
    if (settling && !this.#closed) {
      clearTimeout(this.#settle);
      this.#settle = setTimeout(() => void this.sync().catch(() => undefined), SETTLE_MS);
      this.#settle.unref();
    }
    for (const [id, previous] of this.#seen)
      if (!ids.has(id)) {
        this.#seen.delete(id);
        this.#serviceOf.delete(id);
        this.#containerOf.delete(id);
        this.#checked.delete(id);
        this.#register(previous, undefined, false);
        if (previous.status === 'running' || previous.status === 'pending')
          this.events.emit('change', {
            allocation: { ...previous, status: 'complete', desiredStatus: 'stop' },
            previousStatus: previous.status,
          } satisfies AllocationChange);
      }
  }

  #observe(allocation: Allocation, task: SwarmTask): void {
    const previous = this.#seen.get(allocation.id);
    this.#seen.set(allocation.id, allocation);
    this.#register(allocation, task, allocation.status === 'running' && allocation.desiredStatus === 'run');
    if (previous && canonicalJson(previous) === canonicalJson(allocation)) return;
    const event = allocation.task.events.at(-1);
    this.events.emit('change', {
      allocation,
      ...(previous && previous.status !== allocation.status ? { previousStatus: previous.status } : {}),
      ...(event && event.type !== 'Received' ? { event } : {}),
    } satisfies AllocationChange);
  }

  #register(allocation: Allocation, task: SwarmTask | undefined, live: boolean): void {
    const labels = task?.Spec?.ContainerSpec?.Labels ?? {};
    let services: RegisteredService[] = [];
    try {
      services = JSON.parse(labels[SwarmLabel.services] ?? '[]') as RegisteredService[];
    } catch {
      services = [];
    }
    if (services.some((service) => service.checked)) this.#checked.add(allocation.id);
    const wanted = new Set<string>();
    for (const service of live ? services : []) {
      const port = allocation.ports.find((p) => p.label === service.portLabel);
      if (!port) continue;
      const id = `${allocation.id}-${service.name}`;
      wanted.add(id);
      if (this.#checks.has(id)) continue;
      const check = service.checked ? this.#options.checkOf(service.name) : undefined;
      const checkId = `${id}:http`;
      this.#options.registry.register({
        id,
        service: service.name,
        app: allocation.app,
        process: allocation.taskGroup,
        allocationId: allocation.id,
        address: port.hostIp,
        port: port.value,
        tags: [...service.tags],
        checks: check
          ? [
              {
                id: checkId,
                name: `HTTP GET ${check.path}`,
                status: 'critical',
                output: 'starting: no check has passed yet',
                starting: true,
              },
            ]
          : [],
      });
      const runner = new HttpHealthCheck({
        registry: this.#options.registry,
        service: service.name,
        instanceId: id,
        checkId,
        url: `http://${port.hostIp}:${port.value}${check?.path ?? '/'}`,
        intervalMs: check?.intervalMs ?? 10_000,
        timeoutMs: check?.timeoutMs ?? 2_000,
        onResult: () => this.events.emit('health'),
      });
      if (check) runner.start();
      this.#checks.set(id, { runner, checked: check !== undefined });
    }
    for (const [id, check] of this.#checks)
      if (id.startsWith(`${allocation.id}-`) && !wanted.has(id)) {
        check.runner.stop();
        this.#checks.delete(id);
        this.#options.registry.deregister(id);
      }
  }
}
