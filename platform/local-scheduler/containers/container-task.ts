/**
 * The container side of one allocation's supervision (ADR 0219): its resource use, read from its
 * cgroup, and its end (the kernel's OOM verdict, then its removal). The allocation runner asks it
 * where a host task would read `/proc` and wait for the leader alone.
 */
import type { AllocationRecord } from '../driver-state.js';
import { cgroupParent } from './container-cgroup.js';
import { finishContainer, removeContainer } from './container-exit.js';
import type { ContainerRuntime } from './container-runtime.js';
import { ContainerUsage } from './container-usage.js';

/** One allocation's container. */
export class ContainerTask {
  readonly #record: AllocationRecord;
  readonly #runtime: ContainerRuntime;
  readonly #usage: ContainerUsage;

  constructor(record: AllocationRecord, runtime: ContainerRuntime) {
    this.#record = record;
    this.#runtime = runtime;
    const parent =
      runtime.cgroupParentRoot !== undefined ? cgroupParent(runtime.cgroupParentRoot, record.id) : undefined;
    this.#usage = new ContainerUsage(record.dir, runtime.cgroupMount, parent);
  }

  /** Resident memory in bytes; undefined until the container's cgroup is found. */
  rssBytes(): number | undefined {
    return this.#usage.rssBytes();
  }

  /** True once the container's processes are all gone (its client may still be cleaning up). */
  processesGone(): boolean {
    return this.#usage.processesGone();
  }

  /** Resolves once the container's processes are all gone, or once `until` settles (looked at every 10 ms). */
  async processesEnd(until: Promise<unknown>): Promise<void> {
    let settled = false;
    void until.finally(() => (settled = true)).catch(() => undefined);
    while (!settled && !this.processesGone()) await new Promise((resolve) => setTimeout(resolve, 10));
  }

  /**
   * Sends `signal` to every process of the container, as a host task's whole tree gets its drain
   * signal: a command run by a shell (`sh -c`, the container's first process, which ignores the
   * signal) still reaches the program. The container's first process gets it from its client too.
   */
  signal(signal: NodeJS.Signals): void {
    for (const pid of this.#usage.processes()) {
      try {
        process.kill(pid, signal);
      } catch {
        // Gone meanwhile.
      }
    }
  }

  /** CPU use since the previous sample, at most once a second. */
  cpu(): { percent: number; sampledAt: string } | undefined {
    return this.#usage.cpu();
  }

  /** After the leader's exit: whether the kernel killed the container at its limit; the container is gone after. */
  async finish(): Promise<{ oomKilled: boolean; error?: unknown }> {
    this.#usage.reset();
    try {
      return await finishContainer(this.#runtime, this.#record.id, this.#record.memory.limitBytes);
    } catch (error) {
      return { oomKilled: false, error };
    }
  }

  /** Removes the container at once (a client killed after the drain timeout leaves it running). */
  remove(): Promise<void> {
    return removeContainer(this.#runtime, this.#record.id);
  }
}
