/**
 * Reads of the deployment history for the deploy metrics: totals and durations per app and status
 * of finished deploys, the latest start per app, and the deploys that finished or started since a
 * time (indexed, so a scrape reads only what changed).
 */
import type { Db } from '../database.js';

/** Finished deploys of one app with one status. */
export interface DeployTotalsRow {
  readonly app: string;
  readonly status: string;
  /** Finished deploys. */
  readonly count: number;
  /** Finished deploys that had started (the others were cancelled or failed while queued). */
  readonly timed: number;
  /** Sum of finished minus started over the `timed` ones, milliseconds. */
  readonly ms: number;
}

/** One deploy that finished. */
export interface FinishedDeploy {
  readonly id: string;
  readonly app: string;
  readonly status: string;
  readonly startedAt: string | null;
  readonly finishedAt: string;
}

/** One deploy that started. */
export interface StartedDeploy {
  readonly id: string;
  readonly app: string;
  readonly startedAt: string;
}

/** Whole milliseconds between two ISO 8601 times (exact for millisecond timestamps), in SQL. */
const MILLISECONDS = 'CAST(ROUND((julianday(finished_at) - julianday(started_at)) * 86400000.0) AS INTEGER)';

/** Totals of every finished deploy (kind `deploy`) per app and status. */
export function deployTotals(db: Db): DeployTotalsRow[] {
  return db
    .prepare(
      `SELECT app, status, COUNT(*) AS count, COUNT(started_at) AS timed, COALESCE(SUM(CASE WHEN started_at IS NULL THEN NULL ELSE MAX(0, ${MILLISECONDS}) END), 0) AS ms
       FROM deployments WHERE kind = 'deploy' AND finished_at IS NOT NULL GROUP BY app, status ORDER BY app, status`,
    )
    .all() as DeployTotalsRow[];
}

/** The latest start of a deploy (kind `deploy`) per app. */
export function lastDeployStarts(db: Db): { app: string; startedAt: string }[] {
  return db
    .prepare(
      "SELECT app, MAX(started_at) AS startedAt FROM deployments WHERE kind = 'deploy' AND started_at IS NOT NULL GROUP BY app ORDER BY app",
    )
    .all() as { app: string; startedAt: string }[];
}

/** Deploys (kind `deploy`) whose `finished_at` is at or after `since` (ISO 8601), oldest first. */
export function deploysFinishedSince(db: Db, since: string): FinishedDeploy[] {
  return db
    .prepare(
      "SELECT id, app, status, started_at AS startedAt, finished_at AS finishedAt FROM deployments WHERE finished_at >= ? AND kind = 'deploy' ORDER BY finished_at, id",
    )
    .all(since) as FinishedDeploy[];
}

/** Deploys (kind `deploy`) whose `started_at` is at or after `since` (ISO 8601), oldest first. */
export function deploysStartedSince(db: Db, since: string): StartedDeploy[] {
  return db
    .prepare(
      "SELECT id, app, started_at AS startedAt FROM deployments WHERE started_at >= ? AND kind = 'deploy' ORDER BY started_at, id",
    )
    .all(since) as StartedDeploy[];
}

/** Runs `read` on one consistent snapshot of control.db (a read transaction). */
export function readConsistently<T>(db: Db, read: () => T): T {
  return db.transaction(read)();
}
