/**
 * Deploy group records in control.db: the validated `deploy-groups/*.yaml` files.
 */
import type { Db } from '../database.js';
import type { WriteOutcome } from './apps.js';

/** A deploy group as stored. */
export interface DeployGroupRow {
  readonly name: string;
  readonly file: string;
  readonly group: unknown;
  readonly findings: unknown[];
  readonly generation: string | null;
  readonly updatedAt: string;
}

interface RawRow {
  name: string;
  file: string;
  group_json: string | null;
  findings_json: string;
  generation: string | null;
  updated_at: string;
}

/** Records a deploy group file's content; nothing is written when nothing differs. */
export function upsertDeployGroup(
  db: Db,
  input: { name: string; file: string; group: unknown; findings: unknown[]; generation: string | null },
  now = new Date(),
): WriteOutcome {
  const existing = db.prepare('SELECT * FROM deploy_groups WHERE name = ?').get(input.name) as RawRow | undefined;
  const groupJson = input.group === null ? null : JSON.stringify(input.group);
  const findingsJson = JSON.stringify(input.findings);
  if (
    existing &&
    existing.file === input.file &&
    existing.group_json === groupJson &&
    existing.findings_json === findingsJson &&
    existing.generation === input.generation
  )
    return 'unchanged';
  db.prepare(
    `INSERT INTO deploy_groups (name, file, group_json, findings_json, generation, updated_at) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT(name) DO UPDATE SET file = excluded.file, group_json = excluded.group_json, findings_json = excluded.findings_json,
       generation = excluded.generation, updated_at = excluded.updated_at`,
  ).run(input.name, input.file, groupJson, findingsJson, input.generation, now.toISOString());
  return existing ? 'updated' : 'created';
}

/** Removes a deploy group whose file is gone. */
export function removeDeployGroup(db: Db, name: string): WriteOutcome {
  return db.prepare('DELETE FROM deploy_groups WHERE name = ?').run(name).changes > 0 ? 'deleted' : 'unchanged';
}

/** Every deploy group, by name. */
export function listDeployGroups(db: Db): DeployGroupRow[] {
  return (db.prepare('SELECT * FROM deploy_groups ORDER BY name').all() as RawRow[]).map((raw) => ({
    name: raw.name,
    file: raw.file,
    group: raw.group_json === null ? null : JSON.parse(raw.group_json),
    findings: JSON.parse(raw.findings_json) as unknown[],
    generation: raw.generation,
    updatedAt: raw.updated_at,
  }));
}
