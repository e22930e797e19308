/**
 * Knowledge store introspection: release, API version, features, migrations, backends and stats.
 * Backends are described by kind and version only: no connection strings or file paths.
 */
import type { AppliedMigration } from '../store/migrate.js';

/** A feature the store advertises in `/v1/features` and `/v1/version`. */
export interface Feature {
  readonly name: string;
  readonly status: 'stable' | 'preview';
  readonly since: string;
  readonly description: string;
}

/** Features this release serves. Append as capabilities land. */
export const FEATURES: readonly Feature[] = [
  { name: 'feature-introspection', status: 'stable', since: 'v0.1.0', description: 'Version, features, migrations and backends are discoverable over REST.' },
];

export const API_VERSION = 'v1';
export const DOCS_VERSION = 'v1';
export const COMPATIBILITY = 'Minor releases before 1.0 are non-breaking for the v1 API; breaking changes wait for a new API version.';

export interface IntrospectionSources {
  readonly version: string;
  readonly migrations: () => readonly AppliedMigration[];
  readonly vectorVersion: string;
  readonly sqliteVersion: string;
}

/** The `/v1/version` body. */
export function versionReport(sources: IntrospectionSources) {
  const migrations = sources.migrations();
  return {
    version: sources.version,
    api_version: API_VERSION,
    docs_version: DOCS_VERSION,
    compatibility: COMPATIBILITY,
    latest_migration: migrations.at(-1)?.version ?? 0,
    release_notes_path: 'docs/knowledge-store.md',
    features: FEATURES,
  };
}

/** The `/v1/migrations` body. */
export function migrationsReport(sources: IntrospectionSources) {
  return { migrations: sources.migrations().map((m) => ({ version: m.version, name: m.name, applied_at: m.appliedAt })) };
}

/** The `/v1/backends` body: effective backends, by kind and version only. */
export function backendsReport(sources: IntrospectionSources) {
  return {
    graph: { kind: 'sqlite', version: sources.sqliteVersion },
    vector: { kind: 'sqlite-vec', version: sources.vectorVersion },
    kv: { kind: 'sqlite', version: sources.sqliteVersion },
    event: { kind: 'sqlite', version: sources.sqliteVersion },
    text: { kind: 'sqlite-fts5', version: sources.sqliteVersion },
  };
}
