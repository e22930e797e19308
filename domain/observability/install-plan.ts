/**
 * Install plan of a managed app folder: create it, update it, leave it, or refuse because an operator
 * edited it.
 *
 * Every folder the install writes carries a marker (`.svc-managed.json`) with the SHA-256 of each file
 * as written. A file is the operator's edit when it differs both from the marker and from what the
 * install would write now; a folder without a marker was made by hand. Either refuses the install
 * (409) unless `force`, which overwrites only the files the install writes (others stay).
 */
import { createHash } from 'node:crypto';
import type { ManagedFile } from './managed-services.js';

/** The marker file of a managed folder. */
export const MARKER_FILE = '.svc-managed.json';

/** What the install does with one folder. */
export const InstallAction = {
  create: 'create',
  update: 'update',
  unchanged: 'unchanged',
  conflict: 'conflict',
} as const;
export type InstallAction = (typeof InstallAction)[keyof typeof InstallAction];

/** Why a folder is refused. */
export const ConflictReason = {
  /** Files the install wrote were changed since (or added by hand where it would write). */
  modified: 'modified',
  /** The folder exists but was not written by the install (no marker). */
  unmanaged: 'unmanaged',
  /** Something other than a folder has the name. */
  notADirectory: 'not_a_directory',
} as const;
export type ConflictReason = (typeof ConflictReason)[keyof typeof ConflictReason];

/** What is on disk where a managed folder goes. */
export interface ObservedFolder {
  readonly kind: 'absent' | 'directory' | 'other';
  /** Contents of the files that exist, by path relative to the folder (at least the desired paths and the marker). */
  readonly files: ReadonlyMap<string, string>;
}

/** The plan for one folder. */
export interface FolderPlan {
  readonly action: InstallAction;
  /** Files to write, in order; the marker is last, so an interrupted update is finished by the next run. */
  readonly writes: readonly ManagedFile[];
  /** Set when `action` is `conflict`, or when `force` overrode one. */
  readonly conflict?: { readonly reason: ConflictReason; readonly files: readonly string[] };
}

/** SHA-256 hex of a file's content. */
export function contentDigest(content: string): string {
  return createHash('sha256').update(content, 'utf8').digest('hex');
}

/** The marker recording the digest of every file the install writes to a folder. */
export function markerFile(files: readonly ManagedFile[]): ManagedFile {
  const digests = Object.fromEntries(
    [...files].sort((a, b) => a.path.localeCompare(b.path)).map((f) => [f.path, `sha256:${contentDigest(f.content)}`]),
  );
  const marker = {
    managedBy: 'svc',
    note: 'Written by POST /api/observability/services/install; the install refuses to overwrite files whose digest differs from this list.',
    files: digests,
  };
  return { path: MARKER_FILE, content: `${JSON.stringify(marker, null, 2)}\n` };
}

/** The digests a marker lists; undefined when the marker is missing or unreadable. */
export function readMarker(content: string | undefined): ReadonlyMap<string, string> | undefined {
  if (content === undefined) return undefined;
  try {
    const parsed = JSON.parse(content) as { managedBy?: unknown; files?: unknown };
    if (parsed.managedBy !== 'svc' || parsed.files === null || typeof parsed.files !== 'object') return undefined;
    return new Map(
      Object.entries(parsed.files as Record<string, unknown>).filter(
        (e): e is [string, string] => typeof e[1] === 'string',
      ),
    );
  } catch {
    return undefined;
  }
}

/** The plan for one folder: `desired` are its files without the marker. */
export function planManagedFolder(
  desired: readonly ManagedFile[],
  observed: ObservedFolder,
  options: { readonly force?: boolean } = {},
): FolderPlan {
  const marker = markerFile(desired);
  const all = [...desired, marker];
  if (observed.kind === 'absent') return { action: InstallAction.create, writes: all };
  if (observed.kind === 'other')
    return {
      action: InstallAction.conflict,
      writes: [],
      conflict: { reason: ConflictReason.notADirectory, files: [] },
    };
  const differing = all.filter((file) => observed.files.get(file.path) !== file.content);
  if (differing.length === 0) return { action: InstallAction.unchanged, writes: [] };
  const recorded = readMarker(observed.files.get(MARKER_FILE));
  let conflict: FolderPlan['conflict'];
  if (recorded === undefined) {
    conflict = {
      reason: ConflictReason.unmanaged,
      files: desired.filter((f) => observed.files.has(f.path)).map((f) => f.path),
    };
  } else {
    // An operator's edit: a file whose content is neither what the install wrote nor what it would write now.
    const edited = desired
      .filter((file) => {
        const current = observed.files.get(file.path);
        if (current === undefined || current === file.content) return recorded.has(file.path) && current === undefined;
        return recorded.get(file.path) !== `sha256:${contentDigest(current)}`;
      })
      .map((f) => f.path);
    if (edited.length > 0) conflict = { reason: ConflictReason.modified, files: edited };
  }
  if (conflict !== undefined && !options.force) return { action: InstallAction.conflict, writes: [], conflict };
  return { action: InstallAction.update, writes: differing, ...(conflict === undefined ? {} : { conflict }) };
}
