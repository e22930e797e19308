/**
 * The operator's cron view of one scheduled (periodic) process: the schedule it runs on, its time
 * zone, the next and last run as local and relative text, the scheduler's periodic parents, child
 * counters, risks and the action paths (trigger, pause, resume, schedule).
 */
import { Cron } from 'croner';
import type { AllocationStatus } from '../scheduler/index.js';
import { instantText, isKnownTimeZone, type InstantText } from './time-text.js';
import type { OperatorRisk } from './operator-risk.js';

/** The zone a periodic job runs in when it names none (the local driver's default). */
export const DEFAULT_CRON_TIME_ZONE = 'UTC';

/** One periodic child run as the scheduler reports it. */
export interface CronChildFacts {
  readonly status: AllocationStatus;
  readonly createdAt: string;
  readonly finishedAt?: string;
  readonly exitCode?: number | null;
}

/** One periodic parent job on one scheduler target. */
export interface CronParentFacts {
  readonly jobId: string;
  readonly region: string;
  readonly status: 'running' | 'dead';
  readonly paused: boolean;
  readonly cron: string;
  readonly timeZone?: string;
  readonly children: readonly CronChildFacts[];
}

/** What the view needs to know about one scheduled process. */
export interface CronProcessFacts {
  readonly app: string;
  readonly process: string;
  /** The spec's `deploy`. */
  readonly deploy: boolean;
  /** True when the app has a release. */
  readonly released: boolean;
  readonly specSchedule: string;
  readonly override: {
    readonly schedule: string;
    readonly updatedBy: string | null;
    readonly updatedAt: string;
  } | null;
  readonly parents: readonly CronParentFacts[];
  /** Unresolved incidents of the process's cron correlation key (missed or failed runs). */
  readonly activeIncidents: number;
}

/** Where the scheduled process stands. */
export type CronStatus = 'scheduled' | 'paused' | 'not_running' | 'not_deployed';

/** A request an operator can send. */
export interface ActionLink {
  readonly method: 'POST' | 'PUT';
  readonly path: string;
  readonly body: Readonly<Record<string, unknown>>;
}

/** Counts of periodic children by status. */
export interface ChildCounters {
  readonly total: number;
  readonly pending: number;
  readonly running: number;
  readonly complete: number;
  readonly failed: number;
  readonly lost: number;
}

/** The view of one scheduled process. */
export interface CronProcessView {
  readonly app: string;
  readonly process: string;
  /** The schedule in force: the scheduler's, else the override, else the spec's. */
  readonly schedule: string;
  readonly specSchedule: string;
  readonly override: CronProcessFacts['override'];
  readonly timeZone: string;
  readonly status: CronStatus;
  readonly nextRun: InstantText | null;
  readonly lastRun: (InstantText & { readonly status: AllocationStatus; readonly exitCode: number | null }) | null;
  readonly parents: readonly {
    readonly jobId: string;
    readonly region: string;
    readonly status: 'running' | 'dead';
    readonly paused: boolean;
  }[];
  readonly children: ChildCounters;
  readonly risks: readonly OperatorRisk[];
  readonly actions: {
    readonly trigger: ActionLink;
    readonly pause: ActionLink;
    readonly resume: ActionLink;
    readonly schedule: ActionLink;
  };
}

/** The next run of `schedule` in `zone` after `nowMs`, or undefined when the expression is unreadable or never fires. */
export function nextCronRun(schedule: string, zone: string, nowMs: number): Date | undefined {
  try {
    const cron = new Cron(schedule, { timezone: zone, paused: true });
    const next = cron.nextRun(new Date(nowMs)) ?? undefined;
    cron.stop();
    return next;
  } catch {
    return undefined;
  }
}

function countChildren(children: readonly CronChildFacts[]): ChildCounters {
  const counters = { total: children.length, pending: 0, running: 0, complete: 0, failed: 0, lost: 0 };
  for (const child of children) counters[child.status] += 1;
  return counters;
}

/** Path of an app's cron action. */
export function cronActionPath(app: string, action: 'trigger' | 'pause' | 'resume' | 'schedule'): string {
  return `/api/apps/${encodeURIComponent(app)}/cron/${action}`;
}

/** The cron view of one scheduled process at `nowMs`. */
export function describeCronProcess(facts: CronProcessFacts, nowMs: number): CronProcessView {
  const running = facts.parents.filter((p) => p.status === 'running');
  const primary = running[0] ?? facts.parents[0];
  const schedule = primary?.status === 'running' ? primary.cron : (facts.override?.schedule ?? facts.specSchedule);
  const declaredZone = primary?.timeZone ?? DEFAULT_CRON_TIME_ZONE;
  const timeZone = isKnownTimeZone(declaredZone) ? declaredZone : DEFAULT_CRON_TIME_ZONE;
  const paused = running.length > 0 && running.every((p) => p.paused);
  const status: CronStatus =
    !facts.deploy || !facts.released
      ? 'not_deployed'
      : running.length === 0
        ? 'not_running'
        : paused
          ? 'paused'
          : 'scheduled';
  const next = status === 'scheduled' ? nextCronRun(schedule, timeZone, nowMs) : undefined;
  const children = facts.parents.flatMap((p) => p.children);
  const last = [...children].sort((a, b) => b.createdAt.localeCompare(a.createdAt))[0];
  const risks: OperatorRisk[] = [];
  const subject = `${facts.app}/${facts.process}`;
  if (nextCronRun(schedule, timeZone, nowMs) === undefined)
    risks.push({
      code: 'cron.unreadable_schedule',
      severity: 'warning',
      message: `${subject}: schedule "${schedule}" never fires or is not a cron expression`,
    });
  if (facts.deploy && facts.released && running.length === 0)
    risks.push({
      code: 'cron.not_running',
      severity: 'warning',
      message: `${subject}: the app is deployed but no periodic job runs this process`,
    });
  if (facts.deploy && !facts.released)
    risks.push({
      code: 'cron.never_deployed',
      severity: 'info',
      message: `${subject}: deploy is true but the app has no release yet`,
    });
  if (status === 'paused')
    risks.push({
      code: 'cron.paused',
      severity: 'warning',
      message: `${subject}: launches are paused; resume to run on schedule`,
    });
  if (last && (last.status === 'failed' || last.status === 'lost')) {
    risks.push({
      code: 'cron.last_run_failed',
      severity: 'warning',
      message: `${subject}: the last run (${last.createdAt}) ended ${last.status}${last.exitCode != null ? ` with exit code ${last.exitCode}` : ''}`,
    });
  }
  if (facts.activeIncidents > 0)
    risks.push({
      code: 'cron.active_incident',
      severity: 'critical',
      message: `${subject}: ${facts.activeIncidents} unresolved cron incident(s) (missed or failed runs)`,
    });
  const body = { process: facts.process };
  return {
    app: facts.app,
    process: facts.process,
    schedule,
    specSchedule: facts.specSchedule,
    override: facts.override,
    timeZone,
    status,
    nextRun: next ? instantText(next, timeZone, nowMs) : null,
    lastRun: last
      ? {
          ...instantText(new Date(last.createdAt), timeZone, nowMs),
          status: last.status,
          exitCode: last.exitCode ?? null,
        }
      : null,
    parents: facts.parents.map((p) => ({ jobId: p.jobId, region: p.region, status: p.status, paused: p.paused })),
    children: countChildren(children),
    risks,
    actions: {
      trigger: { method: 'POST', path: cronActionPath(facts.app, 'trigger'), body },
      pause: { method: 'POST', path: cronActionPath(facts.app, 'pause'), body },
      resume: { method: 'POST', path: cronActionPath(facts.app, 'resume'), body },
      schedule: { method: 'PUT', path: cronActionPath(facts.app, 'schedule'), body: { ...body, schedule: schedule } },
    },
  };
}
