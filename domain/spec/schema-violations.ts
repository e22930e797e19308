/**
 * Schema violations: checking a document against its JSON Schema (schemas/*.schema.json, compiled once)
 * and describing each ajv error as a raw finding with rule `schema.<keyword>`, or with the rule id a schema
 * node names in its `x-svc-rule` annotation (so a rule also expressed as a pattern keeps one rule id).
 */
import type { ErrorObject, ValidateFunction } from 'ajv';
import * as compiled from '../../schemas/validators.generated.js';
import { describeKind, describeValue, type PathSegment } from './finding.js';
import { LocateTarget } from './yaml/yaml-locator.js';
import type { RawFinding } from './raw-finding.js';
import { schemaRule } from './rules/spec-rule.js';
import { isRecord } from './raw-fields.js';

// The validators are compiled ahead of time (scripts/generate-schema-validators.ts, ADR 0156) with
// Ajv's options allErrors, verbose and strict, and the annotation keywords `x-svc-rule` (read by this
// module) and `patternErrorMessage` (shown by editors through yaml-language-server).

/** Validator of infraspec.yaml documents (schemas/infraspec.schema.json). */
export const infraspecSchemaValidator = compiled.infraspec as ValidateFunction;
/** Validator of deploy group files (schemas/deploy-group.schema.json). */
export const deployGroupSchemaValidator = compiled.deployGroup as ValidateFunction;
/** Validator of fleet documents (schemas/fleet.schema.json). */
export const fleetSchemaValidator = compiled.fleet as ValidateFunction;

/** Keywords whose failure is the rule a schema node names in `x-svc-rule`. */
const annotatedKeywords = new Set([
  'pattern',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'minLength',
  'maxLength',
  'required',
]);

type SchemaNode = Record<string, unknown>;

/** Splits an ajv instance path into segments, numbering the ones that index a list in `root`. */
function segmentsOf(instancePath: string, root: unknown): PathSegment[] {
  if (instancePath === '') return [];
  const out: PathSegment[] = [];
  let node = root;
  for (const raw of instancePath.slice(1).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(node) && /^\d+$/.test(key)) {
      out.push(Number(key));
      node = node[Number(key)];
    } else {
      out.push(key);
      node = isRecord(node) ? node[key] : undefined;
    }
  }
  return out;
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i += 1) {
    let diagonal = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j += 1) {
      const above = row[j]!;
      row[j] = Math.min(above + 1, row[j - 1]! + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length]!;
}

/** The known field closest to a misspelt one, if any is close. */
function closestField(name: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(name.length / 3)) + 1;
  for (const candidate of known) {
    const distance = candidate.toLowerCase() === name.toLowerCase() ? 0 : editDistance(name, candidate);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

function plural(count: number, one: string, many: string): string {
  return `${count} ${count === 1 ? one : many}`;
}

function typeWords(type: unknown): string {
  const words: Record<string, string> = {
    string: 'a string',
    integer: 'an integer',
    number: 'a number',
    boolean: 'a boolean (true or false)',
    object: 'a map',
    array: 'a list',
    null: 'null',
  };
  const list = Array.isArray(type) ? type : [type];
  return list.map((t) => words[String(t)] ?? String(t)).join(' or ');
}

/** Says what is wrong for one ajv error, given the pattern message of a failing property name if any. */
function detailOf(error: ErrorObject, nameProblem: string | undefined): string {
  const params = error.params as Record<string, unknown>;
  const parent = (error.parentSchema ?? {}) as SchemaNode;
  const data: unknown = error.data;
  switch (error.keyword) {
    case 'type':
      return `${describeValue(data)} is ${describeKind(data)}, expected ${typeWords(params.type)}`;
    case 'required':
      return 'is required but missing';
    case 'additionalProperties': {
      const known = isRecord(parent.properties) ? Object.keys(parent.properties) : [];
      const owner = typeof parent.title === 'string' ? parent.title : 'this map';
      const suggestion = closestField(String(params.additionalProperty), known);
      const hint =
        suggestion !== undefined
          ? `; did you mean "${suggestion}"?`
          : known.length > 0
            ? `; known fields: ${known.join(', ')}`
            : '';
      return `is not a field of ${owner}${hint}`;
    }
    case 'enum':
      return `${describeValue(data)} is not one of ${(params.allowedValues as unknown[]).map((v) => String(v)).join(', ')}`;
    case 'const':
      return `${describeValue(data)} must be ${JSON.stringify(params.allowedValue)}`;
    case 'pattern': {
      const message =
        typeof parent.patternErrorMessage === 'string'
          ? parent.patternErrorMessage
          : `must match the pattern ${String(params.pattern)}`;
      return `${describeValue(data)} ${message}`;
    }
    case 'minimum':
    case 'exclusiveMinimum':
      return `${describeValue(data)} is below the ${error.keyword === 'minimum' ? 'minimum' : 'exclusive minimum'} of ${String(params.limit)}`;
    case 'maximum':
    case 'exclusiveMaximum':
      return `${describeValue(data)} is above the ${error.keyword === 'maximum' ? 'maximum' : 'exclusive maximum'} of ${String(params.limit)}`;
    case 'minLength':
      return params.limit === 1
        ? 'must not be empty'
        : `${describeValue(data)} is shorter than ${plural(Number(params.limit), 'character', 'characters')}`;
    case 'maxLength':
      return `${describeValue(data)} is longer than ${plural(Number(params.limit), 'character', 'characters')}`;
    case 'minItems':
      return `must have at least ${plural(Number(params.limit), 'item', 'items')}`;
    case 'maxItems':
      return `must have at most ${plural(Number(params.limit), 'item', 'items')}`;
    case 'minProperties':
      return `must have at least ${plural(Number(params.limit), 'entry', 'entries')}`;
    case 'uniqueItems':
      return `lists the same value twice (items ${String(params.j)} and ${String(params.i)})`;
    case 'propertyNames':
      return `${JSON.stringify(String(params.propertyName))} is not an accepted name${nameProblem !== undefined ? `: ${nameProblem}` : ''}`;
    default:
      return error.message ?? `breaks the schema keyword ${error.keyword}`;
  }
}

/**
 * Checks `value` against a compiled schema and describes every violation as a raw finding.
 * `if` errors are dropped (the failing `then`/`else` branch reports the real problem).
 */
export function schemaViolations(validate: ValidateFunction, value: unknown): RawFinding[] {
  if (validate(value)) return [];
  const errors = validate.errors ?? [];
  // Errors of a property name come twice: the failing keyword (tagged propertyName), then propertyNames.
  const nameProblems = new Map<string, string>();
  for (const error of errors) {
    const name = (error as ErrorObject & { propertyName?: string }).propertyName;
    if (name === undefined) continue;
    const parent = (error.parentSchema ?? {}) as SchemaNode;
    const message =
      typeof parent.patternErrorMessage === 'string' ? parent.patternErrorMessage : (error.message ?? error.keyword);
    nameProblems.set(`${error.instancePath}\u0000${name}`, message);
  }
  const out: RawFinding[] = [];
  for (const error of errors) {
    if (error.keyword === 'if') continue;
    if ((error as ErrorObject & { propertyName?: string }).propertyName !== undefined) continue;
    const params = error.params as Record<string, unknown>;
    const path = segmentsOf(error.instancePath, value);
    let target: LocateTarget = LocateTarget.auto;
    let nameProblem: string | undefined;
    if (error.keyword === 'required') path.push(String(params.missingProperty));
    if (error.keyword === 'additionalProperties') {
      path.push(String(params.additionalProperty));
      target = LocateTarget.key;
    }
    if (error.keyword === 'propertyNames') {
      const name = String(params.propertyName);
      nameProblem = nameProblems.get(`${error.instancePath}\u0000${name}`);
      path.push(name);
      target = LocateTarget.key;
    }
    const parent = (error.parentSchema ?? {}) as SchemaNode;
    const annotated = parent['x-svc-rule'];
    const rule =
      annotatedKeywords.has(error.keyword) && typeof annotated === 'string' ? annotated : schemaRule(error.keyword);
    out.push({ path, rule, detail: detailOf(error, nameProblem), target });
  }
  return out;
}
