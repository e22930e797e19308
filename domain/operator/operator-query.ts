/**
 * Query parameters of the operator views: one JSON Schema per view, validated with ajv, unknown
 * and repeated parameters refused, numbers parsed and range-checked, all as `ValidationError`
 * (400, code `invalid_query`).
 */
import { ValidationError } from '../errors.js';
import { compileValidator, type BodyValidator } from '../json-schema.js';

/** A parsed query string as the HTTP edge hands it over (a repeated parameter is an array). */
export type RawQuery = Readonly<Record<string, string | readonly string[] | undefined>>;

/** What a number parameter may hold. */
interface NumberRule {
  readonly min: number;
  readonly max: number;
  readonly fallback: number;
}

const APP = {
  type: 'string',
  minLength: 1,
  maxLength: 63,
  pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]*$',
  'x-hint': 'an app name (letters, digits, ".", "_", "-")',
} as const;
const NUMBER = { type: 'string', pattern: '^[0-9]{1,6}$' } as const;
const RISK = { enum: ['low', 'medium', 'high'], 'x-hint': 'one of low, medium, high' } as const;
const FLAG = { enum: ['true', 'false'], 'x-hint': 'true or false' } as const;

function query(properties: Record<string, object>): object {
  return { type: 'object', additionalProperties: false, properties };
}

/** The query schema of each operator view. */
export const OPERATOR_QUERY_SCHEMAS = {
  inbox: query({ app: APP, limit: NUMBER }),
  cron: query({ app: APP }),
  deployConfidence: query({ app: APP, limit: NUMBER }),
  authHints: query({}),
  actions: query({ risk: RISK, mobileReady: FLAG }),
  platform: query({}),
  secretsPlan: query({ app: APP }),
  productionReadiness: query({}),
  platformReleases: query({ limit: NUMBER }),
} as const;
export type OperatorView = keyof typeof OPERATOR_QUERY_SCHEMAS;

/** Ranges of the number parameters. */
const NUMBERS: Partial<Record<OperatorView, Record<string, NumberRule>>> = {
  inbox: { limit: { min: 1, max: 200, fallback: 50 } },
  deployConfidence: { limit: { min: 1, max: 50, fallback: 5 } },
  platformReleases: { limit: { min: 1, max: 500, fallback: 50 } },
};

const validators = new Map<OperatorView, BodyValidator<unknown>>();

function validatorOf(view: OperatorView): BodyValidator<unknown> {
  let validator = validators.get(view);
  if (!validator) {
    validator = compileValidator<unknown>(OPERATOR_QUERY_SCHEMAS[view], 'query');
    validators.set(view, validator);
  }
  return validator;
}

function hintOf(view: OperatorView, name: string): string | undefined {
  const rule = NUMBERS[view]?.[name];
  if (rule) return `a whole number from ${rule.min} to ${rule.max}`;
  const property = (OPERATOR_QUERY_SCHEMAS[view] as { properties: Record<string, { 'x-hint'?: string }> }).properties[
    name
  ];
  return property?.['x-hint'];
}

/** Parsed query of a view: strings as given, number parameters as numbers (defaults filled). */
export type ParsedQuery = Readonly<Record<string, string | number | undefined>>;

/**
 * Validates `raw` against the view's schema and parses its numbers.
 * @throws ValidationError (`invalid_query`) naming every bad parameter and what it must be.
 */
export function parseOperatorQuery(view: OperatorView, raw: RawQuery): ParsedQuery {
  const plain: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) if (value !== undefined) plain[key] = value;
  const problems = validatorOf(view)
    .check(plain)
    .map((problem) => {
      const name = problem.path.split(/[.[]/)[0] ?? problem.path;
      if (problem.keyword === 'additionalProperties')
        return { ...problem, message: `${name}: is not a parameter of this view` };
      if (Array.isArray(plain[name])) return { ...problem, message: `${name}: give it once` };
      const hint = hintOf(view, name);
      return hint === undefined ? problem : { ...problem, message: `${name}: must be ${hint}` };
    });
  const out: Record<string, string | number | undefined> = { ...(plain as Record<string, string>) };
  for (const [name, rule] of Object.entries(NUMBERS[view] ?? {})) {
    const given = plain[name];
    if (given === undefined || problems.some((p) => p.path.startsWith(name))) {
      out[name] = rule.fallback;
      continue;
    }
    const value = Number(given);
    if (value < rule.min || value > rule.max)
      problems.push({
        path: name,
        keyword: 'range',
        message: `${name}: must be a whole number from ${rule.min} to ${rule.max}`,
      });
    out[name] = value;
  }
  if (problems.length > 0) {
    const unique = [...new Map(problems.map((p) => [p.message, p])).values()];
    throw new ValidationError(`query is invalid: ${unique.map((p) => p.message).join('; ')}`, {
      code: 'invalid_query',
      details: { problems: unique },
    });
  }
  return out;
}
