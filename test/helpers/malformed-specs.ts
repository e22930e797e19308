/**
 * Random malformed infraspec documents (fast-check): random YAML-ish text, random JSON values,
 * wrong types at real field paths, deep nesting. Used by the property test and bench/validate.
 */
import fc from 'fast-check';

const FIELD_PATHS = [
  ['name'],
  ['deploy'],
  ['processes'],
  ['processes', 'web'],
  ['processes', 'web', 'port'],
  ['processes', 'web', 'health'],
  ['processes', 'web', 'health', 'interval'],
  ['processes', 'web', 'scaling', 'min'],
  ['processes', 'web', 'schedulerVariables'],
  ['regions'],
  ['primaryRegion'],
  ['endpoints'],
  ['volumes'],
  ['infrastructure', 'postgres', 'database'],
  ['infrastructure', 'objectStorage', 'buckets'],
  ['placement', 'nodePool'],
  ['snapshots', 'keep'],
  ['role'],
];

function setPath(target: Record<string, unknown>, keys: readonly string[], value: unknown): Record<string, unknown> {
  let cursor: Record<string, unknown> = target;
  keys.forEach((key, index) => {
    if (index === keys.length - 1) cursor[key] = value;
    else {
      if (typeof cursor[key] !== 'object' || cursor[key] === null) cursor[key] = {};
      cursor = cursor[key] as Record<string, unknown>;
    }
  });
  return target;
}

const yamlish = fc.string({
  unit: fc.constantFrom(
    '{',
    '}',
    '[',
    ']',
    ':',
    '-',
    ' ',
    '  ',
    '\n',
    '"',
    "'",
    '&a ',
    '*a',
    '!!str ',
    '!!binary ',
    '#',
    '|',
    '>',
    '? ',
    'name',
    'processes',
    'port',
    '1',
    '%YAML 1.2\n',
    '---\n',
    '\t',
    '\u0000',
    '\uFEFF',
  ),
  maxLength: 300,
});

/** One malformed document: a string (YAML text) or a JSON value. */
export const malformedSpec: fc.Arbitrary<unknown> = fc.oneof(
  fc.string({ maxLength: 400 }),
  yamlish,
  fc.jsonValue({ maxDepth: 6 }),
  fc
    .tuple(fc.constantFrom(...FIELD_PATHS), fc.anything({ maxDepth: 3 }))
    .map(([keys, value]) => setPath({ name: 'demo', processes: { web: { port: 8080 } } }, keys, value)),
  fc.integer({ min: 1, max: 400 }).map((depth) => '['.repeat(depth) + ']'.repeat(depth)),
  fc
    .integer({ min: 1, max: 200 })
    .map((depth) => Array.from({ length: depth }, (_, i) => `${'  '.repeat(i)}k${i}:`).join('\n') + ' 1'),
);
