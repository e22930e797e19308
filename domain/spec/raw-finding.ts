/**
 * Findings before they are placed: a rule broken at a field path, turned into a {@link Finding} (message,
 * line, column) once the document's positions are known.
 */
import { createFinding, formatPath, FindingSeverity, type Finding, type PathSegment } from './finding.js';
import type { Locate, LocateTarget } from './yaml/yaml-locator.js';

/** A broken rule at a field path, not yet positioned. */
export interface RawFinding {
  /** The field the finding is about. */
  readonly path: readonly PathSegment[];
  readonly rule: string;
  /** What is wrong, without the subject (the path is prepended). */
  readonly detail: string;
  readonly severity?: FindingSeverity;
  /** Where to point in the text when it differs from `path` (for example a missing field's sibling). */
  readonly at?: readonly PathSegment[];
  /** Which end of the `key: value` pair to point at. */
  readonly target?: LocateTarget;
}

/** How raw findings of one document are placed. */
export interface PlaceOptions {
  readonly locate: Locate;
  readonly fileName?: string | undefined;
  /** Segments put before every path in the report (for example `fleetDocument`); not used to locate. */
  readonly pathPrefix?: readonly PathSegment[];
}

/** Turns raw findings into findings, keeping one finding per rule and path (the first one wins). */
export function placeFindings(raw: readonly RawFinding[], options: PlaceOptions): Finding[] {
  const seen = new Set<string>();
  const out: Finding[] = [];
  const prefix = options.pathPrefix ?? [];
  for (const item of raw) {
    const path = [...prefix, ...item.path];
    const key = `${item.rule}\u0000${formatPath(path)}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(
      createFinding({
        path,
        rule: item.rule,
        detail: item.detail,
        position: options.locate(item.at ?? item.path, item.target),
        severity: item.severity ?? FindingSeverity.error,
        fileName: options.fileName,
      }),
    );
  }
  return out;
}
