/**
 * JSON Schema validation (ajv) for request bodies and documents: compile once, validate many,
 * and report problems as `{ path, keyword, message }` with a JSON-pointer-free dotted path.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { ValidationError } from './errors.js';

// ajv-formats is CommonJS; its default export arrives wrapped under NodeNext.
const addFormats = (addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule;

/** One schema violation. */
export interface SchemaProblem {
  readonly path: string;
  readonly keyword: string;
  readonly message: string;
}

/** Shared ajv instance: all errors, defaults not applied (canonicalization is explicit). */
export const ajv = new Ajv({ allErrors: true, strict: false, allowUnionTypes: true });
(addFormats as unknown as (a: Ajv) => void)(ajv);

/** Converts ajv's `instancePath` (`/a/0/b`) into `a[0].b`. */
export function instancePathToDotted(instancePath: string, extra?: string): string {
  const parts = instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (extra !== undefined) parts.push(extra);
  let out = '';
  for (const part of parts) {
    if (/^\d+$/.test(part)) out += `[${part}]`;
    else out += out === '' ? part : `.${part}`;
  }
  return out;
}

function problemOf(error: ErrorObject): SchemaProblem {
  const params = error.params as Record<string, unknown>;
  const extra =
    error.keyword === 'required'
      ? String(params.missingProperty)
      : error.keyword === 'additionalProperties'
        ? String(params.additionalProperty)
        : undefined;
  const path = instancePathToDotted(error.instancePath, extra);
  const message =
    error.keyword === 'additionalProperties'
      ? `${path}: unknown field`
      : error.keyword === 'required'
        ? `${path}: is required`
        : `${path || '(body)'}: ${error.message ?? 'is invalid'}`;
  return { path, keyword: error.keyword, message };
}

/** A compiled validator that returns the value typed as `T` or throws a `ValidationError`. */
export interface BodyValidator<T> {
  (value: unknown): T;
  readonly check: (value: unknown) => SchemaProblem[];
  /** The schema it validates with: the OpenAPI documents publish it as the request body's schema. */
  readonly schema: object;
}

/** Compiles `schema`; the returned function throws `ValidationError` (code `invalid_request`) listing every problem. */
export function compileValidator<T>(schema: object, subject = 'request body'): BodyValidator<T> {
  const validate: ValidateFunction = ajv.compile(schema);
  const check = (value: unknown): SchemaProblem[] => (validate(value) ? [] : (validate.errors ?? []).map(problemOf));
  const fn = ((value: unknown): T => {
    const problems = check(value);
    if (problems.length > 0) {
      throw new ValidationError(`${subject} is invalid: ${problems.map((p) => p.message).join('; ')}`, {
        code: 'invalid_request',
        details: { problems },
      });
    }
    return value as T;
  }) as BodyValidator<T>;
  return Object.assign(fn, { check, schema });
}
