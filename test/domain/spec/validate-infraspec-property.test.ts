// tier: full
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import fc from 'fast-check';
import { parse } from 'yaml';
import {
  FindingSeverity,
  validateDeployGroup,
  validateFleetDocument,
  validateInfraspec,
  type Finding,
} from '../../../domain/spec/index.js';
import { malformedSpec } from '../../helpers/malformed-specs.js';
import { root } from './spec-fixtures.js';

const largeText = fs.readFileSync(path.join(root, 'fixtures/specs/valid/large-200-lines.yaml'), 'utf8');
const largeSpec = parse(largeText) as Record<string, unknown>;
const findingKeys = ['column', 'line', 'message', 'path', 'rule', 'severity'];

/** Every field path of the large fixture (maps and lists included). */
function fieldPaths(value: unknown, prefix: Array<string | number> = []): Array<Array<string | number>> {
  if (value === null || typeof value !== 'object') return [prefix];
  const entries: Array<[string | number, unknown]> = Array.isArray(value)
    ? value.map((item, index) => [index, item])
    : Object.entries(value);
  return [prefix, ...entries.flatMap(([key, item]) => fieldPaths(item, [...prefix, key]))];
}
const realPaths = fieldPaths(largeSpec).filter((p) => p.length > 0);

function withValueAt(pathToSet: ReadonlyArray<string | number>, value: unknown): unknown {
  const copy = structuredClone(largeSpec) as Record<string | number, unknown>;
  let node = copy;
  pathToSet.forEach((key, index) => {
    if (index === pathToSet.length - 1) node[key] = value;
    else node = node[key] as Record<string | number, unknown>;
  });
  return copy;
}

function assertFindingShape(finding: Finding): void {
  if (JSON.stringify(Object.keys(finding).sort()) !== JSON.stringify(findingKeys))
    throw new Error(`finding keys ${Object.keys(finding).join(',')}`);
  if (typeof finding.path !== 'string' || typeof finding.rule !== 'string' || finding.rule === '')
    throw new Error('finding path or rule');
  if (
    typeof finding.message !== 'string' ||
    !finding.message.startsWith(finding.path === '' ? '(document): ' : `${finding.path}: `)
  ) {
    throw new Error(`message does not start with its subject: ${finding.message}`);
  }
  for (const position of [finding.line, finding.column]) {
    if (position !== null && !(Number.isInteger(position) && position >= 1))
      throw new Error(`position ${String(position)}`);
  }
  if ((finding.line === null) !== (finding.column === null))
    throw new Error('line and column must both be set or both be null');
  if (finding.severity !== FindingSeverity.error && finding.severity !== FindingSeverity.warning)
    throw new Error(`severity ${String(finding.severity)}`);
}

/** Validates and checks the result contract; returns false instead of throwing so fast-check can shrink. */
function holdsContract(input: unknown, options?: Parameters<typeof validateInfraspec>[1]): boolean {
  const result = validateInfraspec(input, options);
  if (!Array.isArray(result.findings)) return false;
  result.findings.forEach(assertFindingShape);
  const hasError = result.findings.some((f) => f.severity === FindingSeverity.error);
  if (result.valid === hasError) return false;
  if (result.valid !== (result.spec !== undefined)) return false;
  return true;
}

const yamlTokens = fc.constantFrom(
  'name: ',
  'processes:',
  '  web:',
  '    port: ',
  'health:',
  'interval: ',
  '- ',
  '? ',
  ': ',
  '{',
  '}',
  '[',
  ']',
  ',',
  '&a ',
  '*a',
  '!!binary ',
  '!!map ',
  '!!set ',
  '!custom ',
  '"',
  "'",
  '|',
  '>-',
  '#',
  '%YAML 1.1\n',
  '---\n',
  '...\n',
  '\n',
  '  ',
  '\t',
  '\r\n',
  '\u0000',
  '\uFEFF',
  '\u2028',
  '~',
  'null',
  '0x1F',
  '1e400',
  '-.inf',
  '.nan',
  '<<: *a',
  '@',
  '`',
  '\\',
  'é',
  '😀',
);

test('validateInfraspec returns findings for random YAML-ish text and never throws', (t) => {
  fc.assert(
    fc.property(
      fc.array(yamlTokens, { maxLength: 80 }).map((parts) => parts.join('')),
      (text) => holdsContract(text),
    ),
    { numRuns: 600 },
  );
  t.pass();
});

test('validateInfraspec returns findings for random strings and never throws', (t) => {
  fc.assert(
    fc.property(fc.oneof(fc.string({ maxLength: 300 }), fc.string({ unit: 'binary', maxLength: 300 })), (text) =>
      holdsContract(text),
    ),
    { numRuns: 400 },
  );
  t.pass();
});

test('validateInfraspec returns findings for random JavaScript values and never throws', (t) => {
  fc.assert(
    fc.property(
      fc.anything({
        maxDepth: 5,
        withBigInt: true,
        withDate: true,
        withMap: true,
        withSet: true,
        withTypedArray: true,
        withNullPrototype: true,
        withSparseArray: true,
      }),
      (value) => holdsContract(value),
    ),
    { numRuns: 400 },
  );
  t.pass();
});

test('validateInfraspec returns findings for a wrong value at any real field path and never throws', (t) => {
  fc.assert(
    fc.property(
      fc.constantFrom(...realPaths),
      fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.anything({ maxDepth: 2 })),
      (fieldPath, value) => holdsContract(withValueAt(fieldPath, value)),
    ),
    { numRuns: 600 },
  );
  t.pass();
});

test('validateInfraspec returns findings for randomly edited spec text and never throws', (t) => {
  const edit = fc.record({
    at: fc.nat({ max: largeText.length }),
    remove: fc.nat({ max: 20 }),
    insert: fc.oneof(fc.string({ maxLength: 8 }), yamlTokens),
  });
  fc.assert(
    fc.property(fc.array(edit, { minLength: 1, maxLength: 6 }), (edits) => {
      let text = largeText;
      for (const { at, remove, insert } of edits) text = text.slice(0, at) + insert + text.slice(at + remove);
      return holdsContract(text);
    }),
    { numRuns: 300 },
  );
  t.pass();
});

test('validateInfraspec returns findings for the shared malformed documents and random fleet documents', (t) => {
  fc.assert(
    fc.property(malformedSpec, fc.option(malformedSpec), (spec, fleet) =>
      holdsContract(spec, fleet === null ? {} : { fleetDocument: fleet }),
    ),
    { numRuns: 400 },
  );
  t.pass();
});

const deepInputs: ReadonlyArray<[string, () => unknown]> = [
  ['a 2 MB string', () => 'x'.repeat(2 * 1024 * 1024)],
  ['a 2 MB YAML document', () => `name: demo\nprocesses:\n  web:\n    port: 80\nenv:\n${'  K: v\n'.repeat(300_000)}`],
  ['1 MiB of opening brackets', () => '['.repeat(1024 * 1024 - 1)],
  ['a block sequence nested 10000 deep on one line', () => `${'- '.repeat(10_000)}x`],
  [
    'maps nested 200 deep by indentation',
    () => Array.from({ length: 200 }, (_, i) => `${'  '.repeat(i)}k${i}:`).join('\n') + ' 1',
  ],
  [
    'an object nested 100000 deep',
    () => {
      let value: unknown = 'leaf';
      for (let i = 0; i < 100_000; i += 1) value = { next: value };
      return value;
    },
  ],
  [
    'an object that contains itself',
    () => {
      const value: Record<string, unknown> = { name: 'demo' };
      value.processes = { web: value };
      return value;
    },
  ],
  [
    'an alias bomb',
    () =>
      [
        'a: &a [x, x, x, x, x, x, x, x, x]',
        'b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]',
        'c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]',
        'd: [*c, *c, *c, *c, *c, *c, *c, *c, *c]',
      ].join('\n'),
  ],
  [
    'a revoked proxy',
    () => {
      const { proxy, revoke } = Proxy.revocable({}, {});
      revoke();
      return proxy;
    },
  ],
  [
    'a proxy whose traps throw',
    () =>
      new Proxy(
        {},
        {
          ownKeys: () => {
            throw new Error('no keys');
          },
        },
      ),
  ],
];

for (const [what, make] of deepInputs) {
  test(`validateInfraspec answers with findings for ${what}`, (t) => {
    const input = make();
    t.true(holdsContract(input));
    const result = validateInfraspec(input);
    t.false(result.valid);
    t.true(result.findings.length > 0);
  });
}

test('validateDeployGroup and validateFleetDocument never throw on the shared malformed documents', (t) => {
  fc.assert(
    fc.property(malformedSpec, (input) => {
      const group = validateDeployGroup(input);
      const fleet = validateFleetDocument(input);
      group.findings.forEach(assertFindingShape);
      fleet.findings.forEach(assertFindingShape);
      return Array.isArray(group.findings) && Array.isArray(fleet.findings);
    }),
    { numRuns: 300 },
  );
  t.pass();
});
