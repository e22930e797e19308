/**
 * Reading the job record a Secret keeps for each job: canaries, template versions, state
 * comparison and the scheduler port's job status (with the next launch of a periodic job).
 */
import { Cron } from 'croner';
import { canonicalJson } from '../../domain/canonical-json.js';
import type { JobStatus } from '../../domain/scheduler/index.js';
import type { JobRecord, JobRecordState, TemplateVersion } from '../../domain/scheduler/kubernetes/index.js';

/** Canary template versions of a job record (none when absent). */
export function canariesOf(state: JobRecordState): Readonly<Record<string, TemplateVersion>> {
  return state.canaries ?? {};
}

/** Template version per task group. */
export function versionsOf(state: JobRecordState): Record<string, number> {
  return Object.fromEntries(Object.entries(state.templates).map(([group, t]) => [group, t.version]));
}

/** True when two record states differ only in version and submission time. */
export function sameState(a: JobRecordState, b: JobRecordState): boolean {
  const essence = (s: JobRecordState): string =>
    canonicalJson({
      status: s.status,
      paused: s.paused,
      awaitingPromotion: s.awaitingPromotion,
      templates: s.templates,
      canaries: canariesOf(s),
      specHash: s.specHash,
    });
  return essence(a) === essence(b);
}

/** The scheduler port's view of a job record, with its next periodic launch. */
export function toJobStatus(record: JobRecord): JobStatus {
  const { spec, state } = record;
  let nextLaunchAt: string | undefined;
  if (spec.type === 'periodic' && spec.periodic && !state.paused && state.status === 'running') {
    try {
      nextLaunchAt = new Cron(spec.periodic.cron, { paused: true, timezone: spec.periodic.timeZone ?? 'Etc/UTC' })
        .nextRun()
        ?.toISOString();
    } catch {
      nextLaunchAt = undefined;
    }
  }
  return {
    spec,
    version: state.version,
    status: state.status,
    paused: state.paused,
    awaitingPromotion: state.awaitingPromotion,
    submittedAt: state.submittedAt,
    ...(nextLaunchAt ? { nextLaunchAt } : {}),
  };
}
