/**
 * CPU and memory of the swarm driver's running tasks, sampled about every second from their
 * containers' stats on the manager's engine (`GET /containers/<id>/stats?stream=false&one-shot=true`),
 * for the autoscaler and right-sizing, as the local driver samples its process trees. CPU is the
 * container's CPU time between two samples over the wall time between them (100 is one core busy);
 * memory is its usage less the page cache it can drop. A task on another node is sampled through that
 * node's engine (`node-engines.ts`); one on a node without a known engine has no sample.
 */
import { EventEmitter } from 'node:events';
import type { CpuUsage, MemoryUsage } from '../../domain/scheduler/index.js';
import type { NodeEngines } from './node-engines.js';

interface Sample {
  readonly cpuNs: number;
  readonly atNs: bigint;
}

interface ContainerStats {
  readonly cpu_stats?: { readonly cpu_usage?: { readonly total_usage?: number } };
  readonly memory_stats?: {
    readonly usage?: number;
    readonly limit?: number;
    readonly stats?: {
      readonly inactive_file?: number;
      readonly total_inactive_file?: number;
      readonly cache?: number;
    };
  };
}

/** Samples tasks' containers; `sampled` fires after each round. */
export class TaskStats {
  readonly events = new EventEmitter();
  readonly #last = new Map<string, Sample>();
  readonly #cpu = new Map<string, CpuUsage>();
  readonly #memory = new Map<string, MemoryUsage>();
  #timer: NodeJS.Timeout | undefined;
  #busy = false;

  constructor(
    private readonly nodes: NodeEngines,
    /** The running tasks to sample: allocation id, container id and node, and memory limit. */
    private readonly running: () => readonly {
      allocation: string;
      container: string;
      node?: string;
      limitBytes: number;
    }[],
    private readonly periodMs = 1000,
  ) {
    this.events.setMaxListeners(0);
  }

  start(): void {
    this.#timer = setInterval(() => void this.sample(), this.periodMs);
    this.#timer.unref();
  }

  close(): void {
    clearInterval(this.#timer);
    this.events.removeAllListeners();
  }

  cpuOf(allocation: string): CpuUsage | undefined {
    return this.#cpu.get(allocation);
  }

  memoryOf(allocation: string): MemoryUsage | undefined {
    return this.#memory.get(allocation);
  }

  /** One round over the running tasks. */
  async sample(): Promise<void> {
    if (this.#busy) return;
    this.#busy = true;
    try {
      const running = this.running();
      const live = new Set(running.map((r) => r.allocation));
      for (const id of [...this.#last.keys()]) if (!live.has(id)) this.#forget(id);
      await Promise.all(running.map((task) => this.#sampleOne(task)));
      this.events.emit('sampled');
    } finally {
      this.#busy = false;
    }
  }

  async #sampleOne(task: { allocation: string; container: string; node?: string; limitBytes: number }): Promise<void> {
    const { allocation, limitBytes } = task;
    let stats: ContainerStats;
    try {
      const engine = await this.nodes.engineOf(task.node);
      stats = await engine.getContainer(task.container).stats({ stream: false, 'one-shot': true });
    } catch {
      return; // Gone, or on a node whose engine is not known.
    }
    const at = new Date().toISOString();
    const atNs = process.hrtime.bigint();
    const cpuNs = stats.cpu_stats?.cpu_usage?.total_usage ?? 0;
    const previous = this.#last.get(allocation);
    this.#last.set(allocation, { cpuNs, atNs });
    if (previous && atNs > previous.atNs)
      this.#cpu.set(allocation, {
        percent: Math.max(0, ((cpuNs - previous.cpuNs) / Number(atNs - previous.atNs)) * 100),
        sampledAt: at,
      });
    const memory = stats.memory_stats;
    if (memory?.usage === undefined) return;
    const cache = memory.stats?.inactive_file ?? memory.stats?.total_inactive_file ?? memory.stats?.cache ?? 0;
    const current = Math.max(0, memory.usage - cache);
    const peak = Math.max(current, this.#memory.get(allocation)?.peakRssBytes ?? 0);
    this.#memory.set(allocation, { currentRssBytes: current, peakRssBytes: peak, limitBytes, sampledAt: at });
  }

  #forget(allocation: string): void {
    this.#last.delete(allocation);
    this.#cpu.delete(allocation);
    this.#memory.delete(allocation);
  }
}
