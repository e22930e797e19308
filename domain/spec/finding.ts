/**
 * Findings: the problems validation reports about a spec document, each tied to a field path, a rule id
 * and (for YAML text) a line and column.
 */

/** How bad a finding is: an error makes the document invalid, a warning does not. */
export const FindingSeverity = {
  error: 'error',
  warning: 'warning',
} as const;
export type FindingSeverity = (typeof FindingSeverity)[keyof typeof FindingSeverity];

/**
 * One problem in a spec document.
 *
 * `path` is the dotted field path (`processes.web.health.interval`, array items as `endpoints[0].url`,
 * keys that are not plain words quoted as `env["MY.VAR"]`, the document itself as `""`).
 * `message` names the subject and the broken rule and ends with the position when one is known:
 * `processes.web.health.interval: "10" is not a Go duration: missing unit (line 12, column 17)`.
 */
export interface Finding {
  readonly path: string;
  readonly rule: string;
  readonly message: string;
  /** 1-based line of the field in the YAML text; null when the input was an already-parsed value. */
  readonly line: number | null;
  /** 1-based column of the field in the YAML text; null when the input was an already-parsed value. */
  readonly column: number | null;
  readonly severity: FindingSeverity;
}

/** One step of a field path: a map key or an array index. */
export type PathSegment = string | number;

/** Where a field sits in the source text (1-based); both null when the source has no text. */
export interface SourcePosition {
  readonly line: number | null;
  readonly column: number | null;
}

/** A position for documents that were not parsed from text. */
export const noPosition: SourcePosition = Object.freeze({ line: null, column: null });

const plainKey = /^[A-Za-z0-9_-]+$/;

/** Renders path segments in finding notation: `processes.web.env["A.B"]`, `endpoints[0].url`. */
export function formatPath(segments: readonly PathSegment[]): string {
  let out = '';
  for (const segment of segments) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else if (plainKey.test(segment)) out += out === '' ? segment : `.${segment}`;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out;
}

/** What a finding is about, as written at the start of its message. */
export function findingSubject(path: string): string {
  return path === '' ? '(document)' : path;
}

/** Builds a finding whose message is `<path>: <detail> (<file>, line L, column C)`. */
export function createFinding(input: {
  readonly path: readonly PathSegment[] | string;
  readonly rule: string;
  readonly detail: string;
  readonly position: SourcePosition;
  readonly severity?: FindingSeverity;
  readonly fileName?: string | undefined;
}): Finding {
  const path = typeof input.path === 'string' ? input.path : formatPath(input.path);
  const where: string[] = [];
  if (input.fileName !== undefined && input.fileName !== '') where.push(input.fileName);
  if (input.position.line !== null) {
    where.push(
      input.position.column === null
        ? `line ${input.position.line}`
        : `line ${input.position.line}, column ${input.position.column}`,
    );
  }
  const suffix = where.length > 0 ? ` (${where.join(', ')})` : '';
  return {
    path,
    rule: input.rule,
    message: `${findingSubject(path)}: ${input.detail}${suffix}`,
    line: input.position.line,
    column: input.position.column,
    severity: input.severity ?? FindingSeverity.error,
  };
}

/** True when no finding is an error (warnings allowed). */
export function hasNoErrors(findings: readonly Finding[]): boolean {
  return findings.every((finding) => finding.severity !== FindingSeverity.error);
}

/** Orders findings by position (unpositioned last), then path and rule, so output is stable. */
export function compareFindings(a: Finding, b: Finding): number {
  const la = a.line ?? Number.MAX_SAFE_INTEGER;
  const lb = b.line ?? Number.MAX_SAFE_INTEGER;
  if (la !== lb) return la - lb;
  const ca = a.column ?? 0;
  const cb = b.column ?? 0;
  if (ca !== cb) return ca - cb;
  if (a.path !== b.path) return a.path < b.path ? -1 : 1;
  return a.rule < b.rule ? -1 : a.rule > b.rule ? 1 : 0;
}

/** Short human rendering of a value inside a message: strings quoted and cut, containers named. */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') {
    const cut = value.length > 60 ? `${value.slice(0, 57)}...` : value;
    return JSON.stringify(cut);
  }
  if (value === null) return 'null';
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a map';
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'bigint') return `${value.toString()}n`;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (typeof value === 'symbol') return value.toString();
  return typeof value;
}

/** The JSON type word of a value, with an article: `a string`, `an integer`, `a list`. */
export function describeKind(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  switch (typeof value) {
    case 'string':
      return 'a string';
    case 'boolean':
      return 'a boolean';
    case 'number':
      return Number.isInteger(value) ? 'an integer' : 'a number';
    case 'object':
      return 'a map';
    default:
      return `a ${typeof value}`;
  }
}
