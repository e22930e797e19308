/**
 * The validation pipeline shared by every spec document kind: read (with positions and limits), check the
 * JSON Schema, run the kind's semantic rules, and place the findings. Never throws.
 */
import type { ValidateFunction } from 'ajv';
import {
  compareFindings,
  createFinding,
  FindingSeverity,
  hasNoErrors,
  noPosition,
  type Finding,
  type PathSegment,
} from './finding.js';
import { parseYamlDocument, type DocumentLimits, type ParsedYamlDocument } from './yaml/parse-yaml-document.js';
import { placeFindings, type RawFinding } from './raw-finding.js';
import { schemaViolations } from './schema-violations.js';
import { SpecRule } from './rules/spec-rule.js';

/** Most findings reported for one document; the rest are summarized by one `findings.truncated` warning. */
export const maxFindingsPerDocument = 500;

/** Most raw findings given a position; beyond it findings are only counted. */
const maxRawFindings = 2 * maxFindingsPerDocument;

/** Options shared by the document validators. */
export interface CheckDocumentOptions {
  /** Name of the source, shown in messages. */
  readonly fileName?: string | undefined;
  /** Segments put before every finding path (for example `fleetDocument`). */
  readonly pathPrefix?: readonly PathSegment[] | undefined;
  /** Overrides of the reading limits. */
  readonly limits?: Partial<DocumentLimits> | undefined;
}

/** What checking a document found. */
export interface DocumentCheck {
  /** The read value (plain data); undefined when unreadable. */
  readonly value: unknown;
  /** True when the document was read, matches its schema and breaks no semantic rule with an error. */
  readonly valid: boolean;
  /** True when the document was read and matches its schema (semantic rules aside). */
  readonly schemaValid: boolean;
  readonly findings: Finding[];
  /** Findings found beyond the placing bound, reported only as a count (see {@link finishFindings}). */
  readonly unplaced: number;
  readonly parsed: ParsedYamlDocument | undefined;
}

/** Sorts findings and caps their number; `uncounted` findings were found but never placed. */
export function finishFindings(findings: Finding[], uncounted = 0): Finding[] {
  findings.sort(compareFindings);
  if (findings.length <= maxFindingsPerDocument && uncounted === 0) return findings;
  const dropped = findings.length - Math.min(findings.length, maxFindingsPerDocument) + uncounted;
  const kept = findings.slice(0, maxFindingsPerDocument);
  kept.push(
    createFinding({
      path: '',
      rule: SpecRule.findingsTruncated,
      detail: `${dropped} more findings were not reported; fix the ones above first`,
      position: noPosition,
      severity: FindingSeverity.warning,
    }),
  );
  return kept;
}

/** A finding for an unexpected failure inside validation (a bug, never the caller's fault alone). */
export function internalFailure(error: unknown, fileName?: string): Finding {
  let reason = 'unknown error';
  try {
    reason = error instanceof Error ? error.message : String(error);
  } catch {
    // keep the generic reason
  }
  return createFinding({
    path: '',
    rule: SpecRule.validatorInternal,
    detail: `validation stopped on an internal error (${reason}); the document is treated as invalid`,
    position: noPosition,
    fileName,
  });
}

/**
 * Reads and checks one document. Semantic findings come before schema findings so that, when both
 * report the same rule at the same path, the semantic message (the more specific one) is kept.
 */
export function checkDocument(
  input: unknown,
  validator: ValidateFunction,
  semanticRules: (value: unknown) => RawFinding[],
  options: CheckDocumentOptions = {},
): DocumentCheck {
  const parsed = parseYamlDocument(input, {
    fileName: options.fileName,
    limits: options.limits,
    pathPrefix: options.pathPrefix,
  });
  const findings = [...parsed.findings];
  if (!parsed.readable) {
    return { value: undefined, valid: false, schemaValid: false, findings, unplaced: 0, parsed };
  }
  const schema = schemaViolations(validator, parsed.value);
  const semantic = semanticRules(parsed.value);
  // Place a bounded number: the rest only count towards the truncation notice.
  const raw = [...semantic, ...schema];
  const placed = placeFindings(raw.slice(0, maxRawFindings), {
    locate: parsed.locate,
    fileName: options.fileName,
    pathPrefix: options.pathPrefix,
  });
  findings.push(...placed);
  const unplaced = raw.length - Math.min(raw.length, maxRawFindings);
  return {
    value: parsed.value,
    valid: hasNoErrors(findings) && unplaced === 0,
    schemaValid: schema.length === 0,
    findings,
    unplaced,
    parsed,
  };
}
