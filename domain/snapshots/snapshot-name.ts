/**
 * Snapshot file names: `<db>_<kind>_<commit>_<YYYYMMDDTHHMMSS>.dump`, the inventory's only source of
 * truth about a dump. Names are validated before any path is built from them, so a request can
 * never reach outside the snapshots folder.
 */
import { ValidationError } from '../errors.js';

/** Why a snapshot was taken. */
export const SnapshotKind = {
  manual: 'manual',
  predeploy: 'predeploy',
  prerestore: 'prerestore',
  premigrate: 'premigrate',
} as const;
export type SnapshotKind = (typeof SnapshotKind)[keyof typeof SnapshotKind];

/** The parts of a snapshot file name. */
export interface SnapshotName {
  readonly database: string;
  readonly kind: SnapshotKind;
  /** Source commit (7-40 hex) or `none`. */
  readonly commit: string;
  /** Compact UTC timestamp `YYYYMMDDTHHMMSS`. */
  readonly timestamp: string;
  readonly filename: string;
}

const DATABASE = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
const NAME =
  /^(?<database>[A-Za-z_][A-Za-z0-9_]{0,62})_(?<kind>manual|predeploy|prerestore|premigrate)_(?<commit>[0-9a-f]{7,40}|none)_(?<timestamp>\d{8}T\d{6})\.dump$/;
const COMPACT = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})$/;

/** The compact UTC timestamp of `date`: `20261121T233839`. */
export function compactTimestamp(date: Date): string {
  return date
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}Z$/, '');
}

/** The Date of a compact timestamp, or undefined when it is not one. */
export function parseCompactTimestamp(text: string): Date | undefined {
  const m = COMPACT.exec(text);
  if (!m) return undefined;
  const date = new Date(
    Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6])),
  );
  return compactTimestamp(date) === text ? date : undefined;
}

/** True when `text` is a compact UTC timestamp. */
export function isCompactTimestamp(text: string): boolean {
  return parseCompactTimestamp(text) !== undefined;
}

/** Builds a snapshot file name; throws `ValidationError` for a database name that is not a portable identifier. */
export function formatSnapshotName(input: {
  database: string;
  kind: SnapshotKind;
  commit?: string | null;
  at: Date;
}): string {
  if (!DATABASE.test(input.database))
    throw new ValidationError(`database "${input.database}" is not a 1-63 character portable identifier`, {
      code: 'invalid_database_name',
    });
  const commit = input.commit && /^[0-9a-f]{7,40}$/.test(input.commit) ? input.commit.slice(0, 12) : 'none';
  return `${input.database}_${input.kind}_${commit}_${compactTimestamp(input.at)}.dump`;
}

/** Parses a snapshot file name, or undefined when it is not one (including anything with a path). */
export function parseSnapshotName(filename: string): SnapshotName | undefined {
  const m = NAME.exec(filename);
  if (!m?.groups || !isCompactTimestamp(m.groups.timestamp!)) return undefined;
  return {
    database: m.groups.database!,
    kind: m.groups.kind as SnapshotKind,
    commit: m.groups.commit!,
    timestamp: m.groups.timestamp!,
    filename,
  };
}

/** Returns the parsed name or throws a `ValidationError` saying why `filename` is refused. */
export function requireSnapshotName(filename: string): SnapshotName {
  const parsed = parseSnapshotName(filename);
  if (!parsed) {
    throw new ValidationError(
      `"${filename}" is not a snapshot file name (<db>_<kind>_<commit>_<YYYYMMDDTHHMMSS>.dump)`,
      {
        code: 'invalid_snapshot_name',
        details: { filename },
      },
    );
  }
  return parsed;
}

/** A planned retention decision for one snapshot. */
export interface RetentionEntry {
  readonly filename: string;
  readonly timestamp: string;
  readonly action: 'keep' | 'would-prune';
}

/** Marks the newest `keep` snapshots of each database keep and older ones would-prune. */
export function planRetention(filenames: readonly string[], keep: number): RetentionEntry[] {
  if (!Number.isInteger(keep) || keep < 0)
    throw new ValidationError(`keep must be a non-negative integer, got ${keep}`, { code: 'invalid_keep' });
  const parsed = filenames.map(parseSnapshotName).filter((n): n is SnapshotName => n !== undefined);
  const byDatabase = new Map<string, SnapshotName[]>();
  for (const name of parsed) byDatabase.set(name.database, [...(byDatabase.get(name.database) ?? []), name]);
  const out: RetentionEntry[] = [];
  for (const names of byDatabase.values()) {
    names.sort((a, b) => b.timestamp.localeCompare(a.timestamp) || b.filename.localeCompare(a.filename));
    names.forEach((name, index) =>
      out.push({ filename: name.filename, timestamp: name.timestamp, action: index < keep ? 'keep' : 'would-prune' }),
    );
  }
  // Same order as the decision above: newest first, ties broken by name, so "keep" rows come first.
  return out.sort((a, b) => b.timestamp.localeCompare(a.timestamp) || b.filename.localeCompare(a.filename));
}

/** Resolves a legacy restore argument (an exact file name or a compact timestamp) against an inventory. */
export function resolveSnapshotReference(reference: string, filenames: readonly string[]): string {
  if (parseSnapshotName(reference)) {
    if (!filenames.includes(reference))
      throw new ValidationError(`snapshot "${reference}" is not in the inventory`, { code: 'snapshot_not_found' });
    return reference;
  }
  if (!isCompactTimestamp(reference)) {
    throw new ValidationError(
      `"${reference}" is neither a snapshot file name nor a compact UTC timestamp (YYYYMMDDTHHMMSS)`,
      { code: 'invalid_snapshot_reference' },
    );
  }
  const matches = filenames.filter((f) => parseSnapshotName(f)?.timestamp === reference);
  if (matches.length === 1) return matches[0]!;
  if (matches.length === 0)
    throw new ValidationError(`no snapshot has timestamp ${reference}`, { code: 'snapshot_not_found' });
  throw new ValidationError(`timestamp ${reference} matches ${matches.length} snapshots; use the exact file name`, {
    code: 'ambiguous_snapshot_timestamp',
    details: { matches },
  });
}
