/**
 * Endpoint toggles in control.db: one row per hostname an operator switched off or back on.
 */
import type { EndpointToggle } from '../../domain/routing/index.js';
import type { WriteOutcome } from '../../domain/scheduler/index.js';
import type { Db } from '../database.js';

interface ToggleRow {
  hostname: string;
  app: string;
  enabled: number;
  updated_at: string;
}

function toToggle(row: ToggleRow): EndpointToggle {
  return { app: row.app, hostname: row.hostname, enabled: row.enabled === 1, updatedAt: row.updated_at };
}

/** Every stored toggle, by hostname. */
export function listEndpointToggles(db: Db): EndpointToggle[] {
  return (
    db.prepare('SELECT hostname, app, enabled, updated_at FROM endpoint_toggles ORDER BY hostname').all() as ToggleRow[]
  ).map(toToggle);
}

/** Sets one hostname's toggle; `unchanged` when it already holds that value for that app. */
export function setEndpointToggle(
  db: Db,
  app: string,
  hostname: string,
  enabled: boolean,
  now = new Date(),
): WriteOutcome {
  const current = db
    .prepare('SELECT hostname, app, enabled, updated_at FROM endpoint_toggles WHERE hostname = ?')
    .get(hostname) as ToggleRow | undefined;
  if (current && current.app === app && (current.enabled === 1) === enabled) return 'unchanged';
  db.prepare(
    `INSERT INTO endpoint_toggles (hostname, app, enabled, updated_at) VALUES (?, ?, ?, ?)
    ON CONFLICT (hostname) DO UPDATE SET app = excluded.app, enabled = excluded.enabled, updated_at = excluded.updated_at`,
  ).run(hostname, app, enabled ? 1 : 0, now.toISOString());
  return current ? 'updated' : 'created';
}
