/**
 * The local driver's spawner helper over its lifetime (ADR 0199, ADR 0201): started with the driver,
 * started again when it dies (at most every {@link SPAWNER_RESTART_MS}), closed with the driver; and
 * the spare processes it keeps in their cgroups ahead of the next starts, with their allocation
 * folders made meanwhile. A spare no allocation took has its cgroup released and its folders removed.
 */
import fs from 'node:fs';
import type { Logger } from 'pino';
import type { CpuWeights } from './cpu-weight.js';
import { createAllocationFoldersAhead } from './task-environment.js';
import { TaskSpawner } from './task-spawner.js';

/** A helper that died is started again at most this often. */
const SPAWNER_RESTART_MS = 10_000;
/**
 * Spare processes the helper keeps in their cgroups ahead of the next starts (ADR 0201): two, so
 * two wakes at once both skip the cgroup join; each is a forked helper of about a megabyte.
 */
const SPARE_PROCESSES = 2;

export interface SpawnerSupervisorOptions {
  readonly cpuWeights: CpuWeights;
  /** The folder of allocation `id`. */
  readonly allocationDir: (id: string) => string;
  readonly logger: Logger;
}

export class SpawnerSupervisor {
  readonly #options: SpawnerSupervisorOptions;
  #spawner: TaskSpawner | undefined;
  #startedAt = 0;
  #closed = false;
  /** Folders of spares being made ahead (asynchronously), by allocation id. */
  readonly #ahead = new Map<string, Promise<void>>();
  /** Spares dropped while their folders were being made: removed again once that ends. */
  readonly #droppedAhead = new Set<string>();

  constructor(options: SpawnerSupervisorOptions) {
    this.#options = options;
    this.#start();
  }

  /** The running helper; one that died is started again (at most every {@link SPAWNER_RESTART_MS}). */
  live(): TaskSpawner | undefined {
    if (this.#closed) return undefined;
    if (this.#spawner?.alive === true) return this.#spawner;
    if (this.#spawner !== undefined && Date.now() - this.#startedAt >= SPAWNER_RESTART_MS) {
      this.#options.logger.warn('the task spawner helper exited: starting it again');
      this.#start();
      const restarted: TaskSpawner | undefined = this.#spawner;
      return restarted?.alive === true ? restarted : undefined;
    }
    return undefined;
  }

  /** Closes the helper (its tasks keep running, re-parented) and drops its spares. */
  close(): void {
    this.#closed = true;
    this.#spawner?.close();
    this.#dropSpares();
  }

  /**
   * Resolves once no spare's folders are being made: a dropped spare's folders made meanwhile are
   * removed, so nothing writes into the data folder after a closed driver's `close` resolves.
   */
  async settled(): Promise<void> {
    await Promise.all(this.#ahead.values());
  }

  #start(): void {
    // A helper that died took its spares with it.
    this.#dropSpares();
    this.#startedAt = Date.now();
    this.#spawner = TaskSpawner.start();
    const { cpuWeights, allocationDir, logger } = this.#options;
    if (this.#spawner === undefined)
      logger.info('no task spawner helper (perl not found): tasks are spawned from the platform process');
    // A start skips the kernel's wait to join a cgroup, and the creation of its folders: a spare
    // joined one ahead, and its allocation's folders were made meanwhile (ADR 0201).
    this.#spawner?.keepSpares(SPARE_PROCESSES, (id) => {
      const group = cpuWeights.target(id, 0)?.group;
      if (group !== undefined) {
        const made = createAllocationFoldersAhead(allocationDir(id))
          .catch((error: unknown) => logger.warn({ err: error }, 'folders of a spare allocation not made ahead'))
          .finally(() => {
            this.#ahead.delete(id);
            if (this.#droppedAhead.delete(id)) this.#removeFolders(id);
          });
        this.#ahead.set(id, made);
      }
      return group;
    });
  }

  /**
   * Releases the cgroups and removes the folders of the helper's spares that no allocation took. A
   * spare whose folders are still being made has them removed when that ends: removing them meanwhile
   * would race the creation (the removal's `rmdir` finds a folder just made: ENOTEMPTY).
   */
  #dropSpares(): void {
    for (const id of this.#spawner?.unusedSpares() ?? []) {
      this.#options.cpuWeights.release(id);
      if (this.#ahead.has(id)) this.#droppedAhead.add(id);
      else this.#removeFolders(id);
    }
  }

  #removeFolders(id: string): void {
    try {
      fs.rmSync(this.#options.allocationDir(id), { recursive: true, force: true });
    } catch (error) {
      this.#options.logger.warn({ err: error, allocation: id }, 'folders of an unused spare not removed');
    }
  }
}
