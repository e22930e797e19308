/**
 * Operator job events: the events the cron endpoints (trigger, pause, resume, schedule change)
 * emit through the EventEmitterPort, built here so every emitter uses the same type, severity and
 * correlation key (`{app}:{process}:cron`).
 */
import type { EventInput } from './event-port.js';
import { CorrelationKey } from './correlation.js';

/** Operator actions on a periodic process. */
export const JobAction = {
  triggered: 'triggered',
  paused: 'paused',
  resumed: 'resumed',
  scheduleUpdated: 'schedule_updated',
} as const;
export type JobAction = (typeof JobAction)[keyof typeof JobAction];

/** The `job.*` event of an operator action on a periodic process. */
export function operatorJobEvent(
  action: JobAction,
  subject: { app: string; process: string; jobId: string; by?: string; schedule?: string; previousSchedule?: string },
): EventInput {
  const verb = action === 'schedule_updated' ? 'schedule changed' : action;
  return {
    type: `job.${action}`,
    severity: action === 'paused' ? 'warning' : 'info',
    app: subject.app,
    title: `${subject.app}/${subject.process} ${verb}${subject.by ? ` by ${subject.by}` : ''}`,
    body:
      action === 'schedule_updated'
        ? `schedule ${subject.previousSchedule ?? '?'} -> ${subject.schedule ?? '?'}`
        : `periodic job ${subject.jobId} ${verb}`,
    metadata: {
      correlationKey: CorrelationKey.cron(subject.app, subject.process),
      jobId: subject.jobId,
      process: subject.process,
      ...(subject.by ? { by: subject.by } : {}),
      ...(action === 'paused'
        ? { previousState: 'running' }
        : action === 'resumed'
          ? { previousState: 'paused', previousEventType: 'job.paused' }
          : {}),
      ...(subject.schedule ? { schedule: subject.schedule } : {}),
      ...(subject.previousSchedule ? { previousSchedule: subject.previousSchedule } : {}),
    },
  };
}
