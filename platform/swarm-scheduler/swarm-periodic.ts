/**
 * Cron processes on the swarm driver: one timer (croner) per running periodic job, kept by the
 * platform, which starts one run-once Swarm job per task group on each tick (`periodic_child`
 * allocations), unless the job is paused, or a run of it has not ended and the job prohibits
 * overlap (the default). Swarm has no cron of its own; the platform's timer keeps the spec's
 * time zone and pause, as on the local driver.
 */
import { Cron } from 'croner';
import type { Logger } from 'pino';
import type { Execution } from '../../domain/scheduler/index.js';
import type { SwarmJobRecord } from './job-records.js';
import type { SwarmExecutions } from './swarm-executions.js';

/** Keeps the timers of periodic jobs. */
export class SwarmPeriodic {
  readonly #crons = new Map<string, { readonly cron: Cron; readonly key: string }>();

  constructor(
    private readonly executions: SwarmExecutions,
    /** The job's record as it is now (a tick reads it afresh). */
    private readonly recordOf: (jobId: string) => SwarmJobRecord | undefined,
    private readonly logger: Logger,
  ) {}

  /** (Re)creates a job's timer when its schedule changed; removes it for stopped or non-periodic jobs. */
  arm(record: SwarmJobRecord): void {
    const id = record.spec.id;
    const periodic = record.spec.periodic;
    if (record.spec.type !== 'periodic' || !periodic || record.status !== 'running') {
      this.disarm(id);
      return;
    }
    const key = `${periodic.cron}\n${periodic.timeZone ?? 'Etc/UTC'}`;
    const existing = this.#crons.get(id);
    if (existing?.key === key) {
      if (record.paused) existing.cron.pause();
      else existing.cron.resume();
      return;
    }
    this.disarm(id);
    const cron = new Cron(periodic.cron, { paused: record.paused, timezone: periodic.timeZone ?? 'Etc/UTC' }, () => {
      void this.#tick(id).catch((error: unknown) =>
        this.logger.error({ err: error, jobId: id }, 'periodic launch failed'),
      );
    });
    this.#crons.set(id, { cron, key });
  }

  disarm(jobId: string): void {
    this.#crons.get(jobId)?.cron.stop();
    this.#crons.delete(jobId);
  }

  /** The next planned launch of a job, absent while paused or unarmed. */
  nextLaunchAt(jobId: string): string | undefined {
    const entry = this.#crons.get(jobId);
    if (!entry || !entry.cron.isRunning()) return undefined;
    return entry.cron.nextRun()?.toISOString();
  }

  /** Launches one run of each of the job's groups now, paused or not; the first group's execution. */
  async launch(record: SwarmJobRecord): Promise<Execution> {
    const runs: Execution[] = [];
    for (const group of record.spec.taskGroups) runs.push(await this.executions.run(record, group, 'periodic_child'));
    return runs[0]!;
  }

  close(): void {
    for (const id of [...this.#crons.keys()]) this.disarm(id);
  }

  async #tick(jobId: string): Promise<void> {
    const record = this.recordOf(jobId);
    if (!record || record.status !== 'running' || record.paused) return;
    if ((record.spec.periodic?.prohibitOverlap ?? true) && (await this.executions.running(jobId))) {
      this.logger.info({ jobId }, 'periodic tick skipped: the previous run has not ended');
      return;
    }
    await this.launch(record);
  }
}
