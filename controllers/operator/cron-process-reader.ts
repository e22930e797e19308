/**
 * Reads the facts of every scheduled (periodic) process: the spec's schedule, the live override,
 * the scheduler's periodic parents with their children, and the unresolved cron incidents; the
 * view itself is `describeCronProcess` (domain).
 */
import { CorrelationKey } from '../../domain/events/correlation.js';
import {
  describeCronProcess,
  type CronParentFacts,
  type CronProcessFacts,
  type CronProcessView,
} from '../../domain/operator/index.js';
import type { Db } from '../../store/database.js';
import { listApps } from '../../store/control/apps.js';
import { listScheduleOverrides } from '../../store/control/schedule-overrides.js';
import type { SchedulerTargets } from '../apps/scheduler-targets.js';

/** Where the cron facts come from. */
export interface CronSources {
  readonly db: Db;
  readonly targets: SchedulerTargets;
  /** Correlation keys of the unresolved incident groups, with how many groups share each. */
  readonly activeIncidentKeys: () => ReadonlyMap<string, number>;
  readonly now: () => number;
}

/** The cron view of every scheduled process (optionally of one app), apps and processes in name order. */
export async function readCronProcesses(
  sources: CronSources,
  filter: { readonly app?: string } = {},
): Promise<CronProcessView[]> {
  const parents = new Map<string, CronParentFacts[]>();
  for (const { region, scheduler } of await sources.targets.all()) {
    for (const job of await scheduler.listJobs(filter.app === undefined ? {} : { app: filter.app })) {
      if (job.spec.type !== 'periodic' || job.spec.periodic === undefined) continue;
      const process = job.spec.meta?.['svc.process'] ?? job.spec.taskGroups[0]?.name ?? '';
      const allocations = await scheduler.listAllocations({ jobId: job.spec.id, includeTerminal: true });
      const children = allocations
        .filter((a) => a.kind === 'periodic_child')
        .map((a) => ({
          status: a.status,
          createdAt: a.createdAt,
          ...(a.task.finishedAt ? { finishedAt: a.task.finishedAt } : {}),
          exitCode: a.task.exitCode ?? null,
        }));
      const key = `${job.spec.app}\u0000${process}`;
      const list = parents.get(key) ?? [];
      list.push({
        jobId: job.spec.id,
        region,
        status: job.status,
        paused: job.paused,
        cron: job.spec.periodic.cron,
        ...(job.spec.periodic.timeZone ? { timeZone: job.spec.periodic.timeZone } : {}),
        children,
      });
      parents.set(key, list);
    }
  }
  const incidents = sources.activeIncidentKeys();
  const nowMs = sources.now();
  const views: CronProcessView[] = [];
  for (const row of listApps(sources.db).sort((a, b) => a.name.localeCompare(b.name))) {
    const spec = row.spec;
    if (!spec || row.deletedAt !== null || (filter.app !== undefined && row.name !== filter.app)) continue;
    const overrides = new Map(listScheduleOverrides(sources.db, row.name).map((o) => [o.process, o]));
    for (const [process, definition] of Object.entries(spec.processes).sort(([a], [b]) => a.localeCompare(b))) {
      if (definition.schedule === undefined) continue;
      const override = overrides.get(process);
      const facts: CronProcessFacts = {
        app: row.name,
        process,
        deploy: spec.deploy,
        released: row.release !== null,
        specSchedule: definition.schedule,
        // An override the spec has moved past is dropped by the app controller; do not show it.
        override:
          override && override.specSchedule === definition.schedule
            ? { schedule: override.schedule, updatedBy: override.updatedBy, updatedAt: override.updatedAt }
            : null,
        parents: (parents.get(`${row.name}\u0000${process}`) ?? []).sort((a, b) => a.jobId.localeCompare(b.jobId)),
        activeIncidents: incidents.get(CorrelationKey.cron(row.name, process)) ?? 0,
      };
      views.push(describeCronProcess(facts, nowMs));
    }
  }
  return views;
}
