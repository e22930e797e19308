/**
 * Missed-run watcher: for every running, unpaused periodic job, each expected launch that has no
 * child allocation within 5 minutes of its time is reported once as cron.missed_run. Paused and
 * stopped jobs are excluded; expected launches before the watcher first saw a job are not judged.
 */
import { Cron } from 'croner';
import type { Logger } from '../../platform/logger.js';
import type { ControlMetrics } from '../../platform/metrics/control-metrics.js';
import type { EventEmitterPort } from '../../domain/events/event-port.js';
import type { Clock } from '../../domain/events/clock.js';
import { CorrelationKey } from '../../domain/events/correlation.js';
import type { Substrate } from './substrate-queries.js';

/** A run must appear within this long after its expected time. */
export const MISSED_RUN_GRACE_MS = 5 * 60 * 1000;
/** A child created this long before its expected time still counts for it (clock skew). */
const EARLY_SLACK_MS = 60 * 1000;

/** Checks periodic jobs for missed runs. */
export class CronWatcher {
  /** Per job: expected launches up to this instant (ms) were judged. */
  private readonly judgedUntil = new Map<string, number>();

  constructor(
    private readonly options: {
      events: EventEmitterPort;
      substrate: Substrate;
      clock: Clock;
      logger: Logger;
      metrics?: ControlMetrics;
    },
  ) {}

  /** One pass over every periodic job; returns the missed runs it reported. */
  async check(): Promise<{ jobId: string; expectedAt: string }[]> {
    const nowMs = this.options.clock.now();
    const missed: { jobId: string; expectedAt: string }[] = [];
    for (const scheduler of await this.options.substrate.schedulers()) {
      for (const job of await scheduler.listJobs()) {
        const cronSpec = job.spec.periodic;
        if (job.spec.type !== 'periodic' || cronSpec === undefined) continue;
        const process = job.spec.taskGroups[0]?.name ?? 'cron';
        const jobId = job.spec.id;
        if (job.status !== 'running' || job.paused) {
          // Paused and stopped jobs are excluded; start judging afresh when they resume.
          this.judgedUntil.set(jobId, nowMs);
          this.options.metrics?.cronMissedRuns.set({ app: job.spec.app, process }, 0);
          continue;
        }
        const from =
          this.judgedUntil.get(jobId) ?? Math.max(Date.parse(job.submittedAt), nowMs - MISSED_RUN_GRACE_MS * 2);
        const horizon = nowMs - MISSED_RUN_GRACE_MS;
        if (horizon <= from) {
          if (!this.judgedUntil.has(jobId)) {
            this.judgedUntil.set(jobId, from);
            // Nothing could be missed yet: the series exists from the job's first sight, at 0.
            this.options.metrics?.cronMissedRuns.set({ app: job.spec.app, process }, 0);
          }
          continue;
        }
        let cron: Cron;
        try {
          cron = new Cron(cronSpec.cron, { timezone: cronSpec.timeZone ?? 'UTC', paused: true });
        } catch (error) {
          this.options.logger.warn({ err: error, jobId }, 'periodic job has an unreadable schedule');
          continue;
        }
        const children = (await scheduler.listAllocations({ jobId, includeTerminal: true }))
          .filter((a) => a.kind === 'periodic_child')
          .map((a) => Date.parse(a.createdAt));
        let cursor = new Date(from);
        let latestMissed: boolean | undefined;
        for (let i = 0; i < 100; i++) {
          const next = cron.nextRun(cursor);
          if (!next || next.getTime() > horizon) break;
          const t = next.getTime();
          const ran = children.some((c) => c >= t - EARLY_SLACK_MS && c <= t + MISSED_RUN_GRACE_MS);
          latestMissed = !ran;
          if (!ran) {
            const expectedAt = next.toISOString();
            missed.push({ jobId, expectedAt });
            await this.options.events.emit({
              type: 'cron.missed_run',
              severity: 'critical',
              app: job.spec.app,
              title: `${job.spec.app}/${process} missed its run at ${expectedAt}`,
              body: `No run of ${jobId} appeared within 5 minutes of ${expectedAt} (schedule ${cronSpec.cron})`,
              dedupeKey: `${jobId}:missed:${expectedAt}`,
              metadata: {
                correlationKey: CorrelationKey.cron(job.spec.app, process),
                jobId,
                process,
                expectedAt,
                schedule: cronSpec.cron,
              },
            });
          }
          cursor = next;
        }
        this.judgedUntil.set(jobId, cursor.getTime() > from ? cursor.getTime() : horizon);
        if (latestMissed !== undefined)
          this.options.metrics?.cronMissedRuns.set({ app: job.spec.app, process }, latestMissed ? 1 : 0);
      }
    }
    return missed;
  }
}
