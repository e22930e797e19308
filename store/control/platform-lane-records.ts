/**
 * The rows of one platform lane operation that must outlive a restore of control.db (ADR 0089):
 * the operation and its attempts, the upgrade record and steps, the release records, and the
 * events the lane emitted (with their delivery rows and incident group). Read before the restore,
 * written back after it, column by column where the restored schema still has the column.
 */
import type { Db } from '../database.js';

/** Rows of one table. */
interface TableRows {
  readonly table: string;
  readonly rows: readonly Record<string, unknown>[];
}

/** What {@link readLaneRecords} read. */
export interface LaneRecords {
  readonly operationId: string;
  readonly tables: readonly TableRows[];
}

/** Tables in the order they are written back (parents before the rows that reference them). */
const SELECTIONS: readonly { table: string; where: string; params: (id: string) => unknown[] }[] = [
  { table: 'operations', where: 'id = ?', params: (id) => [id] },
  { table: 'operation_attempts', where: 'operation_id = ?', params: (id) => [id] },
  { table: 'platform_upgrades', where: 'operation_id = ?', params: (id) => [id] },
  { table: 'platform_lane_steps', where: 'operation_id = ?', params: (id) => [id] },
  { table: 'platform_builds', where: '1 = 1', params: () => [] },
  { table: 'events', where: "json_extract(metadata_json, '$.operationId') = ?", params: (id) => [id] },
  { table: 'event_outbox', where: "event_id IN (SELECT id FROM events WHERE json_extract(metadata_json, '$.operationId') = ?)", params: (id) => [id] },
  { table: 'incident_groups', where: "correlation_key = 'platform:upgrade'", params: () => [] },
];

/** Reads the lane's own rows of operation `operationId`. */
export function readLaneRecords(db: Db, operationId: string): LaneRecords {
  return {
    operationId,
    tables: SELECTIONS.map(({ table, where, params }) => ({ table, rows: db.prepare(`SELECT * FROM ${table} WHERE ${where}`).all(...params(operationId)) as Record<string, unknown>[] })),
  };
}

/**
 * Writes `records` back (inserted, or updated by primary key), in one transaction; a column the
 * restored schema lacks is left out. Returns how many rows were written.
 */
export function writeLaneRecords(db: Db, records: LaneRecords): number {
  let written = 0;
  db.transaction(() => {
    for (const { table, rows } of records.tables) {
      const info = db.prepare(`PRAGMA table_info(${table})`).all() as { name: string; pk: number }[];
      if (info.length === 0) continue;
      const known = new Set(info.map((c) => c.name));
      const keys = info.filter((c) => c.pk > 0).map((c) => c.name);
      for (const row of rows) {
        const columns = Object.keys(row).filter((c) => known.has(c));
        const updates = columns.filter((c) => !keys.includes(c));
        const sql =
          `INSERT INTO ${table} (${columns.map(quote).join(', ')}) VALUES (${columns.map(() => '?').join(', ')})` +
          (keys.length > 0 && updates.length > 0 ? ` ON CONFLICT (${keys.map(quote).join(', ')}) DO UPDATE SET ${updates.map((c) => `${quote(c)} = excluded.${quote(c)}`).join(', ')}` : keys.length > 0 ? ' ON CONFLICT DO NOTHING' : '');
        db.prepare(sql).run(...columns.map((c) => row[c]));
        written += 1;
      }
    }
  })();
  return written;
}

function quote(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
