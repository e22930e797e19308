/**
 * Schedule overrides: an operator's replacement cron schedule for one periodic process, kept until
 * removed or until the committed spec's schedule changes (the spec wins again then).
 */
import type { Db } from '../database.js';

/** One override. */
export interface ScheduleOverride {
  readonly app: string;
  readonly process: string;
  readonly schedule: string;
  /** The spec's schedule when the override was made. */
  readonly specSchedule: string;
  readonly updatedBy: string | null;
  readonly updatedAt: string;
}

interface Raw {
  app: string;
  process: string;
  schedule: string;
  spec_schedule: string;
  updated_by: string | null;
  updated_at: string;
}

const fromRaw = (r: Raw): ScheduleOverride => ({
  app: r.app,
  process: r.process,
  schedule: r.schedule,
  specSchedule: r.spec_schedule,
  updatedBy: r.updated_by,
  updatedAt: r.updated_at,
});

/** The overrides of `app`. */
export function listScheduleOverrides(db: Db, app: string): ScheduleOverride[] {
  return (db.prepare('SELECT * FROM schedule_overrides WHERE app = ? ORDER BY process').all(app) as Raw[]).map(fromRaw);
}

/** Records (or replaces) an override. */
export function putScheduleOverride(db: Db, input: Omit<ScheduleOverride, 'updatedAt'>, now = new Date()): void {
  db.prepare(
    `INSERT INTO schedule_overrides (app, process, schedule, spec_schedule, updated_by, updated_at) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT(app, process) DO UPDATE SET schedule = excluded.schedule, spec_schedule = excluded.spec_schedule,
       updated_by = excluded.updated_by, updated_at = excluded.updated_at`,
  ).run(input.app, input.process, input.schedule, input.specSchedule, input.updatedBy, now.toISOString());
}

/** Removes an override; true when one existed. */
export function removeScheduleOverride(db: Db, app: string, process: string): boolean {
  return db.prepare('DELETE FROM schedule_overrides WHERE app = ? AND process = ?').run(app, process).changes > 0;
}
