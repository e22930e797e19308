/**
 * App records in control.db: the desired spec the spec controller read, its generation, the
 * status conditions the controllers wrote, the current release and finalizers.
 */
import { runningSpec, type AppRelease } from '../../domain/apps/index.js';
import type { CanonicalAppSpec, Finding } from '../../domain/spec/index.js';
import type { Condition } from '../../domain/status/conditions.js';
import type { Db } from '../database.js';

/** What a write did; nothing is written when nothing differs. */
export type WriteOutcome = 'created' | 'updated' | 'unchanged' | 'deleted';

/** An app as stored, its JSON columns parsed into their domain types. */
export interface AppRow {
  readonly name: string;
  readonly file: string;
  /**
   * The spec the app runs: the last valid committed spec, or the one a rollback restored while that
   * committed spec is unchanged (`runningSpec`, ADR 0048); null until one was read.
   */
  readonly spec: CanonicalAppSpec | null;
  /** The last valid spec read from the apps folder; null until one was read. */
  readonly committedSpec: CanonicalAppSpec | null;
  readonly findings: Finding[];
  /** Hash of the canonical spec; null while the spec is invalid. */
  readonly generation: string | null;
  readonly observedGeneration: string | null;
  readonly conditions: Condition[];
  /** The release to run; null before the first deploy (or after a failed first deploy). */
  readonly release: AppRelease | null;
  readonly finalizers: string[];
  readonly deletedAt: string | null;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** An app whose spec was valid at least once. */
export type AppWithSpec = AppRow & { readonly spec: CanonicalAppSpec };

/** True when the app has a spec (for `filter`: the rows that follow are typed with it). */
export function hasSpec(app: AppRow): app is AppWithSpec {
  return app.spec !== null;
}

interface RawAppRow {
  name: string;
  file: string;
  spec_json: string | null;
  findings_json: string;
  generation: string | null;
  observed_generation: string | null;
  conditions_json: string;
  release_json: string | null;
  finalizers_json: string;
  deleted_at: string | null;
  created_at: string;
  updated_at: string;
}

function fromRaw(raw: RawAppRow): AppRow {
  const committed = raw.spec_json === null ? null : (JSON.parse(raw.spec_json) as CanonicalAppSpec | null);
  const release = raw.release_json === null ? null : (JSON.parse(raw.release_json) as AppRelease | null);
  return {
    name: raw.name,
    file: raw.file,
    spec: runningSpec(committed, raw.generation, release),
    committedSpec: committed,
    findings: JSON.parse(raw.findings_json) as Finding[],
    generation: raw.generation,
    observedGeneration: raw.observed_generation,
    conditions: JSON.parse(raw.conditions_json) as Condition[],
    release,
    finalizers: JSON.parse(raw.finalizers_json) as string[],
    deletedAt: raw.deleted_at,
    createdAt: raw.created_at,
    updatedAt: raw.updated_at,
  };
}

/** One app, or undefined. */
export function getApp(db: Db, name: string): AppRow | undefined {
  const raw = db.prepare('SELECT * FROM apps WHERE name = ?').get(name) as RawAppRow | undefined;
  return raw && fromRaw(raw);
}

/** Every app, by name. */
export function listApps(db: Db): AppRow[] {
  return (db.prepare('SELECT * FROM apps ORDER BY name').all() as RawAppRow[]).map(fromRaw);
}

function sameRaw(a: RawAppRow, b: RawAppRow): boolean {
  return (
    a.file === b.file &&
    a.spec_json === b.spec_json &&
    a.findings_json === b.findings_json &&
    a.generation === b.generation &&
    a.observed_generation === b.observed_generation &&
    a.conditions_json === b.conditions_json &&
    a.release_json === b.release_json &&
    a.finalizers_json === b.finalizers_json &&
    a.deleted_at === b.deleted_at &&
    a.updated_at === b.updated_at
  );
}

/**
 * Reads every app like {@link listApps} but parses only the rows whose stored text changed since
 * its previous read (the others are the same objects as then): for a reader that polls every app,
 * such as `/metrics`, where parsing 500 specs on each scrape would be most of its cost.
 */
export class AppRowsReader {
  readonly #select;
  readonly #cache = new Map<string, { raw: RawAppRow; row: AppRow }>();

  constructor(db: Db) {
    this.#select = db.prepare('SELECT * FROM apps ORDER BY name');
  }

  /** Every app, by name. */
  list(): AppRow[] {
    const raws = this.#select.all() as RawAppRow[];
    const seen = new Set<string>();
    const rows = raws.map((raw) => {
      seen.add(raw.name);
      const cached = this.#cache.get(raw.name);
      if (cached !== undefined && sameRaw(cached.raw, raw)) return cached.row;
      const row = fromRaw(raw);
      this.#cache.set(raw.name, { raw, row });
      return row;
    });
    for (const name of this.#cache.keys()) if (!seen.has(name)) this.#cache.delete(name);
    return rows;
  }
}

/** Records the desired spec read from `file` (clears a pending deletion). */
export function upsertAppSpec(
  db: Db,
  input: {
    name: string;
    file: string;
    spec?: CanonicalAppSpec | null;
    findings: readonly Finding[];
    generation: string | null;
    finalizers?: string[];
  },
  now = new Date(),
): WriteOutcome {
  const existing = getApp(db, input.name);
  const specJson = input.spec === null || input.spec === undefined ? null : JSON.stringify(input.spec);
  const findingsJson = JSON.stringify(input.findings);
  const finalizersJson = JSON.stringify(input.finalizers ?? existing?.finalizers ?? []);
  if (!existing) {
    db.prepare(
      `INSERT INTO apps (name, file, spec_json, findings_json, generation, finalizers_json, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      input.name,
      input.file,
      specJson,
      findingsJson,
      input.generation,
      finalizersJson,
      now.toISOString(),
      now.toISOString(),
    );
    return 'created';
  }
  const same =
    existing.file === input.file &&
    JSON.stringify(existing.committedSpec) === (specJson ?? 'null') &&
    JSON.stringify(existing.findings) === findingsJson &&
    existing.generation === input.generation &&
    JSON.stringify(existing.finalizers) === finalizersJson &&
    existing.deletedAt === null;
  if (same) return 'unchanged';
  db.prepare(
    `UPDATE apps SET file = ?, spec_json = ?, findings_json = ?, generation = ?, finalizers_json = ?, deleted_at = NULL, updated_at = ? WHERE name = ?`,
  ).run(input.file, specJson, findingsJson, input.generation, finalizersJson, now.toISOString(), input.name);
  return 'updated';
}

/** Marks an app whose spec file disappeared; finalizers run before `removeApp`. */
export function markAppDeleted(db: Db, name: string, now = new Date()): WriteOutcome {
  const result = db
    .prepare('UPDATE apps SET deleted_at = ?, updated_at = ? WHERE name = ? AND deleted_at IS NULL')
    .run(now.toISOString(), now.toISOString(), name);
  return result.changes > 0 ? 'updated' : 'unchanged';
}

/** Removes a finalizer; returns the ones left. */
export function removeAppFinalizer(db: Db, name: string, finalizer: string, now = new Date()): string[] {
  const app = getApp(db, name);
  if (!app) return [];
  const left = app.finalizers.filter((f) => f !== finalizer);
  if (left.length !== app.finalizers.length) {
    db.prepare('UPDATE apps SET finalizers_json = ?, updated_at = ? WHERE name = ?').run(
      JSON.stringify(left),
      now.toISOString(),
      name,
    );
  }
  return left;
}

/** Deletes the record of an app (after its finalizers ran). */
export function removeApp(db: Db, name: string): WriteOutcome {
  return db.prepare('DELETE FROM apps WHERE name = ?').run(name).changes > 0 ? 'deleted' : 'unchanged';
}

/** Writes status: conditions and the generation they describe. */
export function setAppStatus(
  db: Db,
  name: string,
  status: { conditions: readonly Condition[]; observedGeneration: string | null },
  now = new Date(),
): WriteOutcome {
  const app = getApp(db, name);
  if (!app) return 'unchanged';
  const conditionsJson = JSON.stringify(status.conditions);
  if (JSON.stringify(app.conditions) === conditionsJson && app.observedGeneration === status.observedGeneration)
    return 'unchanged';
  db.prepare('UPDATE apps SET conditions_json = ?, observed_generation = ?, updated_at = ? WHERE name = ?').run(
    conditionsJson,
    status.observedGeneration,
    now.toISOString(),
    name,
  );
  return 'updated';
}

/** Records the release (an immutable build at a commit) the app should run. */
export function setAppRelease(db: Db, name: string, release: AppRelease | null, now = new Date()): WriteOutcome {
  const app = getApp(db, name);
  if (!app) return 'unchanged';
  const json = JSON.stringify(release);
  if (JSON.stringify(app.release) === json) return 'unchanged';
  db.prepare('UPDATE apps SET release_json = ?, updated_at = ? WHERE name = ?').run(json, now.toISOString(), name);
  return 'updated';
}
