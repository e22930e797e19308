/**
 * The host agent: a long-lived process beside the API that claims only `platform.*` operations
 * (under the usual lease, so a SIGKILLed agent's operation is recovered by the next agent and
 * resumed from its recorded phase) and survives the API restarts it performs. It leaves when no
 * API has run for a while and it holds no lane work, so a stopped platform does not leave it behind.
 */
import type { Logger } from '../../platform/logger.js';
import { listOperations } from '../../store/control/operations/operations.js';
import type { Db } from '../../store/database.js';
import type { OperationWorker } from '../operations/index.js';

/** Options of {@link HostAgent}. */
export interface HostAgentOptions {
  readonly db: Db;
  /** A worker whose handlers are the platform lane's only. */
  readonly worker: OperationWorker;
  readonly logger: Logger;
  /** True while the recorded API process runs. */
  readonly apiAlive: () => boolean;
  /** True while the data folder still exists (a removed folder ends the agent). */
  readonly dataPresent: () => boolean;
  /**
   * Says why this agent should hand over to the release `current` points at (it runs older code),
   * or undefined; asked while it runs no lane operation (ADR 0088).
   */
  readonly handOver?: () => string | undefined;
  /**
   * Called while no API runs and no lane work is pending or running: the agent lets go of the
   * listening sockets it keeps for API restarts (ADR 0159), so an API started by hand can bind them.
   */
  readonly noApi?: () => void;
  /** Leave after this long without an API and without lane work. @default 10000 */
  readonly idleExitMs?: number;
  /** @default 500 */
  readonly checkIntervalMs?: number;
}

/** A running host agent. */
export class HostAgent {
  readonly #options: HostAgentOptions;
  #timer: NodeJS.Timeout | undefined;
  #idleSince: number | undefined;
  #stopped: Promise<string> | undefined;
  #resolveStopped: ((reason: string) => void) | undefined;
  #handingOver = false;

  constructor(options: HostAgentOptions) {
    this.#options = options;
  }

  /** Recovers lane operations a dead agent left, starts claiming; resolves `stopped` when it decides to leave. */
  start(): void {
    this.#stopped = new Promise((resolve) => (this.#resolveStopped = resolve));
    const recovered = this.#options.worker.start();
    if (recovered.length > 0)
      this.#options.logger.warn(
        { recovered: recovered.map((r) => ({ id: r.operation.id, action: r.decision.action })) },
        'lane operations of a previous agent recovered',
      );
    this.#timer = setInterval(() => this.#check(), this.#options.checkIntervalMs ?? 500);
  }

  /** Resolves with the reason once the agent decided to leave (no API and no work, or the data folder is gone). */
  get stopped(): Promise<string> {
    return this.#stopped ?? Promise.resolve('not started');
  }

  /** True once the agent decided to leave for a successor that runs the current release. */
  get handingOver(): boolean {
    return this.#handingOver;
  }

  /** Stops claiming; a running lane operation is interrupted and recovered by the next agent. */
  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    await this.#options.worker.stop();
    this.#resolveStopped?.('stopped');
  }

  #check(): void {
    if (!this.#options.dataPresent()) {
      this.#resolveStopped?.('the data folder is gone');
      return;
    }
    this.#options.worker.wake();
    let pending = 0;
    try {
      pending = listOperations(this.#options.db, { status: ['queued', 'running'], limit: 500 }).filter((op) =>
        op.kind.startsWith('platform.'),
      ).length;
    } catch (error) {
      this.#options.logger.error({ err: error }, 'reading lane operations failed');
      return;
    }
    // Only between lane operations: in the middle of one, `current` may point at a release that has
    // not passed its postflight (a resumed upgrade must be finished by this agent).
    if (pending === 0 && this.#options.worker.runningCount === 0 && !this.#handingOver) {
      const reason = this.#options.handOver?.();
      if (reason !== undefined) {
        this.#handingOver = true;
        if (this.#timer) clearInterval(this.#timer);
        this.#resolveStopped?.(`handing over: ${reason}`);
        return;
      }
    }
    if (pending > 0 || this.#options.worker.runningCount > 0 || this.#options.apiAlive()) {
      this.#idleSince = undefined;
      return;
    }
    this.#options.noApi?.();
    this.#idleSince ??= Date.now();
    if (Date.now() - this.#idleSince >= (this.#options.idleExitMs ?? 10_000))
      this.#resolveStopped?.('no API process and no lane work');
  }
}
