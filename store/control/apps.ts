/**
 * App records in control.db: the desired spec the spec controller read, its generation, the
 * status conditions the controllers wrote, the current release and finalizers.
 */
import { runningSpec, type AppRelease } from '../../domain/apps/index.js';
import type { CanonicalAppSpec, Finding } from '../../domain/spec/index.js';
import type { Condition } from '../../domain/status/conditions.js';
import type { Db } from '../database.js';
import { cachedStatement } from '../statement-cache.js';

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

// Per connection: the parsed rows keyed by their stored text (a reconcile reads its app three or
// four times; the spec JSON is parsed once per change), and the readers to tell of every write
// made through this module (ADR 0195).
const parsed = new WeakMap<Db, Map<string, { raw: RawAppRow; row: AppRow }>>();
const writeListeners = new WeakMap<Db, Set<(name: string) => void>>();

function parsedRow(db: Db, raw: RawAppRow): AppRow {
  let cache = parsed.get(db);
  if (!cache) {
    cache = new Map();
    parsed.set(db, cache);
  }
  const cached = cache.get(raw.name);
  if (cached !== undefined && sameRaw(cached.raw, raw)) return cached.row;
  const row = fromRaw(raw);
  cache.set(raw.name, { raw, row });
  return row;
}

/** Tells the readers of `db` that the row of `name` may have changed. */
function written(db: Db, name: string): void {
  for (const listener of writeListeners.get(db) ?? []) listener(name);
}

/** One app, or undefined. */
export function getApp(db: Db, name: string): AppRow | undefined {
  const raw = cachedStatement(db, 'SELECT * FROM apps WHERE name = ?').get(name) as RawAppRow | undefined;
  return raw && parsedRow(db, raw);
}

/** Every app, by name. */
export function listApps(db: Db): AppRow[] {
  return (cachedStatement(db, 'SELECT * FROM apps ORDER BY name').all() as RawAppRow[]).map((raw) =>
    parsedRow(db, raw),
  );
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
 * Reads every app like {@link listApps} for a reader that polls every app (the routing controller on
 * each reconcile, `/metrics` on each scrape). After its first read it re-reads only the rows written
 * since through this module on this connection, and every row again when another connection wrote
 * the database (`PRAGMA data_version`); rows it did not re-read are the same objects as before.
 * While 500 apps start, a read of every row on each routing reconcile was quadratic (ADR 0195).
 */
export class AppRowsReader {
  readonly #db: Db;
  readonly #rows = new Map<string, AppRow>();
  readonly #dirty = new Set<string>();
  #sorted: AppRow[] | undefined;
  #dataVersion: number | undefined;

  constructor(db: Db) {
    this.#db = db;
    let listeners = writeListeners.get(db);
    if (!listeners) {
      listeners = new Set();
      writeListeners.set(db, listeners);
    }
    listeners.add((name) => this.#dirty.add(name));
  }

  /** Every app, by name. */
  list(): AppRow[] {
    const db = this.#db;
    const version = cachedStatement(db, 'PRAGMA data_version').pluck().get() as number;
    if (version !== this.#dataVersion) {
      this.#rows.clear();
      for (const row of listApps(db)) this.#rows.set(row.name, row);
      this.#sorted = undefined;
      this.#dataVersion = version;
    } else {
      for (const name of this.#dirty) {
        const row = getApp(db, name);
        if (row === undefined) {
          if (this.#rows.delete(name)) this.#sorted = undefined;
        } else if (this.#rows.get(name) !== row) {
          if (!this.#rows.has(name)) this.#sorted = undefined;
          this.#rows.set(name, row);
          if (this.#sorted !== undefined) this.#sorted[this.#sorted.findIndex((r) => r.name === name)] = row;
        }
      }
    }
    // A write inside a transaction may still be rolled back: its rows stay to be read again.
    if (!db.inTransaction) this.#dirty.clear();
    this.#sorted ??= [...this.#rows.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return [...this.#sorted];
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
  // The stored text is compared with what would be written: nothing is parsed (every writer of
  // these columns stores JSON.stringify of the value).
  const existing = cachedStatement(
    db,
    'SELECT file, spec_json, findings_json, generation, finalizers_json, deleted_at FROM apps WHERE name = ?',
  ).get(input.name) as
    | Pick<RawAppRow, 'file' | 'spec_json' | 'findings_json' | 'generation' | 'finalizers_json' | 'deleted_at'>
    | undefined;
  const specJson = input.spec === null || input.spec === undefined ? null : JSON.stringify(input.spec);
  const findingsJson = JSON.stringify(input.findings);
  const finalizersJson =
    input.finalizers !== undefined ? JSON.stringify(input.finalizers) : (existing?.finalizers_json ?? '[]');
  if (!existing) {
    cachedStatement(
      db,
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
    written(db, input.name);
    return 'created';
  }
  const same =
    existing.file === input.file &&
    (existing.spec_json ?? 'null') === (specJson ?? 'null') &&
    existing.findings_json === findingsJson &&
    existing.generation === input.generation &&
    existing.finalizers_json === finalizersJson &&
    existing.deleted_at === null;
  if (same) return 'unchanged';
  cachedStatement(
    db,
    `UPDATE apps SET file = ?, spec_json = ?, findings_json = ?, generation = ?, finalizers_json = ?, deleted_at = NULL, updated_at = ? WHERE name = ?`,
  ).run(input.file, specJson, findingsJson, input.generation, finalizersJson, now.toISOString(), input.name);
  written(db, input.name);
  return 'updated';
}

/** Marks an app whose spec file disappeared; finalizers run before `removeApp`. */
export function markAppDeleted(db: Db, name: string, now = new Date()): WriteOutcome {
  const result = cachedStatement(
    db,
    'UPDATE apps SET deleted_at = ?, updated_at = ? WHERE name = ? AND deleted_at IS NULL',
  ).run(now.toISOString(), now.toISOString(), name);
  if (result.changes === 0) return 'unchanged';
  written(db, name);
  return 'updated';
}

/** Removes a finalizer; returns the ones left. */
export function removeAppFinalizer(db: Db, name: string, finalizer: string, now = new Date()): string[] {
  const app = getApp(db, name);
  if (!app) return [];
  const left = app.finalizers.filter((f) => f !== finalizer);
  if (left.length !== app.finalizers.length) {
    cachedStatement(db, 'UPDATE apps SET finalizers_json = ?, updated_at = ? WHERE name = ?').run(
      JSON.stringify(left),
      now.toISOString(),
      name,
    );
    written(db, name);
  }
  return left;
}

/** Deletes the record of an app (after its finalizers ran). */
export function removeApp(db: Db, name: string): WriteOutcome {
  if (cachedStatement(db, 'DELETE FROM apps WHERE name = ?').run(name).changes === 0) return 'unchanged';
  parsed.get(db)?.delete(name);
  written(db, name);
  return 'deleted';
}

/** Writes status: conditions and the generation they describe. */
export function setAppStatus(
  db: Db,
  name: string,
  status: { conditions: readonly Condition[]; observedGeneration: string | null },
  now = new Date(),
): WriteOutcome {
  const stored = cachedStatement(db, 'SELECT conditions_json, observed_generation FROM apps WHERE name = ?').get(
    name,
  ) as Pick<RawAppRow, 'conditions_json' | 'observed_generation'> | undefined;
  if (!stored) return 'unchanged';
  const conditionsJson = JSON.stringify(status.conditions);
  if (stored.conditions_json === conditionsJson && stored.observed_generation === status.observedGeneration)
    return 'unchanged';
  cachedStatement(
    db,
    'UPDATE apps SET conditions_json = ?, observed_generation = ?, updated_at = ? WHERE name = ?',
  ).run(conditionsJson, status.observedGeneration, now.toISOString(), name);
  written(db, name);
  return 'updated';
}

/** Records the release (an immutable build at a commit) the app should run. */
export function setAppRelease(db: Db, name: string, release: AppRelease | null, now = new Date()): WriteOutcome {
  const stored = cachedStatement(db, 'SELECT release_json FROM apps WHERE name = ?').get(name) as
    Pick<RawAppRow, 'release_json'> | undefined;
  if (!stored) return 'unchanged';
  const json = JSON.stringify(release);
  if ((stored.release_json ?? 'null') === json) return 'unchanged';
  cachedStatement(db, 'UPDATE apps SET release_json = ?, updated_at = ? WHERE name = ?').run(
    json,
    now.toISOString(),
    name,
  );
  written(db, name);
  return 'updated';
}
