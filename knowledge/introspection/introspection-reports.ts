/**
 * The knowledge store's introspection answers: `/v1/version`, `/v1/migrations` and `/v1/backends`.
 * Backends are described by kind and version only: no connection strings or file paths.
 */
import type { AppliedMigration } from '../../store/migrate.js';
import { API_VERSION, COMPATIBILITY, DOCS_VERSION, FEATURES, type Feature } from './introspection.js';

/** The `/v1/version` body. */
export interface VersionReport {
  readonly version: string;
  readonly api_version: string;
  readonly docs_version: string;
  readonly compatibility: string;
  /** The newest applied schema migration (0 before any). */
  readonly latest_migration: number;
  readonly release_notes_path: string;
  readonly features: readonly Feature[];
}

/** The `/v1/migrations` body. */
export interface MigrationsReport {
  readonly migrations: { readonly version: number; readonly name: string; readonly applied_at: string }[];
}

/** One backend by kind and version. */
export interface BackendView {
  readonly kind: string;
  readonly version: string;
}

/** The `/v1/backends` body. */
export interface BackendsReport {
  readonly graph: BackendView;
  readonly vector: BackendView;
  readonly kv: BackendView;
  readonly event: BackendView;
  readonly text: BackendView & { readonly tokenizer: string; readonly thesaurus: string };
  readonly extractor?: { readonly kind: string; readonly model: string };
}

export interface IntrospectionSources {
  readonly version: string;
  readonly migrations: () => readonly AppliedMigration[];
  readonly vectorVersion: string;
  readonly sqliteVersion: string;
  /** Name of the thesaurus expanding text queries, when one is on. */
  readonly thesaurus?: string | undefined;
  /** The active ingest extractor (`rules` by default, `openai-compatible` when configured). */
  readonly extractor?: { readonly kind: string; readonly model: string };
}

/** The `/v1/version` body. */
export function versionReport(sources: IntrospectionSources): VersionReport {
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
export function migrationsReport(sources: IntrospectionSources): MigrationsReport {
  return {
    migrations: sources.migrations().map((m) => ({ version: m.version, name: m.name, applied_at: m.appliedAt })),
  };
}

/** The `/v1/backends` body: effective backends, by kind and version only. */
export function backendsReport(sources: IntrospectionSources): BackendsReport {
  return {
    graph: { kind: 'sqlite', version: sources.sqliteVersion },
    vector: { kind: 'sqlite-vec', version: sources.vectorVersion },
    kv: { kind: 'sqlite', version: sources.sqliteVersion },
    event: { kind: 'sqlite', version: sources.sqliteVersion },
    text: {
      kind: 'sqlite-fts5',
      version: sources.sqliteVersion,
      tokenizer: 'porter unicode61',
      thesaurus: sources.thesaurus ?? 'none',
    },
    ...(sources.extractor ? { extractor: { kind: sources.extractor.kind, model: sources.extractor.model } } : {}),
  };
}
