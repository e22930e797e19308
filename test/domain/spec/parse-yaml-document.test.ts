// tier: quick
import test from 'ava';
import { FindingSeverity, LocateTarget, parseYamlDocument, SpecRule } from '../../../domain/spec/index.js';

const text = [
  'name: demo', //                 line 1
  'processes:', //                 line 2
  '  web:', //                     line 3
  '    port: 8080', //             line 4
  '    health:', //                line 5
  '      interval: "10"', //       line 6
  '    regions: [eu, us]', //      line 7
  'endpoints:', //                 line 8
  '  - url: a.example.test', //    line 9
  '  - url: b.example.test', //    line 10
  'env: &shared', //               line 11
  '  A: "1"', //                   line 12
  'copy: *shared', //              line 13
  'empty:', //                     line 14
  '',
].join('\n');

test('parseYamlDocument returns the plain value of YAML text', (t) => {
  const parsed = parseYamlDocument(text);
  t.true(parsed.readable);
  t.deepEqual(parsed.findings, []);
  t.deepEqual((parsed.value as { processes: unknown }).processes, {
    web: { port: 8080, health: { interval: '10' }, regions: ['eu', 'us'] },
  });
});

const positions: ReadonlyArray<[string, readonly (string | number)[], LocateTarget | undefined, [number, number]]> = [
  ['a scalar value points at the value', ['processes', 'web', 'health', 'interval'], undefined, [6, 17]],
  ['a map value points at its key', ['processes', 'web', 'health'], undefined, [5, 5]],
  ['a key target points at the key of a scalar', ['processes', 'web', 'port'], LocateTarget.key, [4, 5]],
  ['a value target points at the value of a map', ['processes', 'web', 'health'], LocateTarget.value, [6, 7]],
  ['a flow list item points at the item', ['processes', 'web', 'regions', 1], undefined, [7, 19]],
  ['a block list item field points at its value', ['endpoints', 1, 'url'], undefined, [10, 10]],
  [
    'a missing field points at its nearest existing ancestor key',
    ['processes', 'web', 'health', 'timeout'],
    undefined,
    [5, 5],
  ],
  ['a missing list item points at the list key', ['endpoints', 7, 'url'], undefined, [8, 1]],
  ['a path through an alias follows the anchored value', ['copy', 'A'], undefined, [12, 6]],
  ['a key with an empty value points at the key', ['empty'], undefined, [14, 1]],
  ['the document itself points at its first line', [], undefined, [1, 1]],
];

for (const [what, path, target, [line, column]] of positions) {
  test(`parseYamlDocument locate: ${what}`, (t) => {
    t.deepEqual(parseYamlDocument(text).locate(path, target), { line, column });
  });
}

test('parseYamlDocument takes an already-parsed value without positions', (t) => {
  const parsed = parseYamlDocument({ name: 'demo', processes: { web: { port: 80 } } });
  t.true(parsed.readable);
  t.deepEqual(parsed.value, { name: 'demo', processes: { web: { port: 80 } } });
  t.deepEqual(parsed.locate(['processes', 'web', 'port']), { line: null, column: null });
});

test('parseYamlDocument reports a YAML syntax error with its line and column', (t) => {
  const parsed = parseYamlDocument('name: demo\nprocesses:\n  web: [port, 80\n', { fileName: 'infraspec.yaml' });
  t.false(parsed.readable);
  t.true(parsed.findings.length > 0);
  const [first] = parsed.findings;
  t.is(first?.rule, SpecRule.yamlSyntax);
  t.is(first?.path, '');
  t.is(typeof first?.line, 'number');
  t.regex(first?.message ?? '', /^\(document\): YAML syntax error: .+ \(infraspec\.yaml, line \d+, column \d+\)$/);
});

test('parseYamlDocument rejects a stream of several documents', (t) => {
  const parsed = parseYamlDocument('name: a\n---\nname: b\n');
  t.false(parsed.readable);
  t.is(parsed.findings[0]?.rule, SpecRule.yamlSyntax);
  t.is(parsed.findings[0]?.line, 2);
});

test('parseYamlDocument reports YAML warnings as warning findings', (t) => {
  const parsed = parseYamlDocument('name: !custom demo\n');
  t.true(parsed.readable);
  t.is(parsed.findings[0]?.rule, SpecRule.yamlWarning);
  t.is(parsed.findings[0]?.severity, FindingSeverity.warning);
});

test('parseYamlDocument rejects text larger than the byte limit before parsing it', (t) => {
  const parsed = parseYamlDocument(`name: "${'é'.repeat(600_000)}"\n`);
  t.false(parsed.readable);
  t.deepEqual(
    parsed.findings.map((f) => [f.rule, f.path, f.line]),
    [[SpecRule.documentTooLarge, '', null]],
  );
});

test('parseYamlDocument rejects nesting deeper than the limit with the position of the deep collection', (t) => {
  const parsed = parseYamlDocument(`a: ${'['.repeat(100_000)}${']'.repeat(100_000)}\n`);
  t.false(parsed.readable);
  t.deepEqual(
    parsed.findings.map((f) => [f.rule, f.line, f.column]),
    [[SpecRule.documentTooDeep, 1, 4 + 63]],
  );
});

test('parseYamlDocument rejects a megabyte of opening brackets at the first collection too deep, reading no further', (t) => {
  const parsed = parseYamlDocument('['.repeat(1024 * 1024 - 1));
  t.deepEqual(
    parsed.findings.map((f) => [f.rule, f.line, f.column]),
    [[SpecRule.documentTooDeep, 1, 65]],
  );
});

test('parseYamlDocument counts no bracket of a quoted value or a comment as nesting', (t) => {
  const parsed = parseYamlDocument(`a: "${'['.repeat(100)}"\nb: '${'{'.repeat(100)}' # ${'['.repeat(100)}\n`);
  t.true(parsed.readable);
  t.deepEqual(parsed.value, { a: '['.repeat(100), b: '{'.repeat(100) });
});

test('parseYamlDocument accepts nesting exactly at the limit', (t) => {
  const parsed = parseYamlDocument(`${'['.repeat(64)}${']'.repeat(64)}`);
  t.true(parsed.readable);
});

test('parseYamlDocument stops alias bombs', (t) => {
  const lines = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
  for (let i = 1; i < 8; i += 1)
    lines.push(
      `${'abcdefgh'[i]}: &${'abcdefgh'[i]} [${Array(10)
        .fill(`*${'abcdefgh'[i - 1]}`)
        .join(', ')}]`,
    );
  const parsed = parseYamlDocument(lines.join('\n'));
  t.false(parsed.readable);
  t.deepEqual(
    parsed.findings.map((f) => [f.rule, f.line, f.column]),
    [[SpecRule.yamlAliases, 2, 8]],
  );
});

test('parseYamlDocument keeps a __proto__ key as a plain key', (t) => {
  const parsed = parseYamlDocument('__proto__:\n  polluted: true\n');
  const value = parsed.value as Record<string, unknown>;
  t.is(Object.getPrototypeOf(value), Object.prototype);
  t.deepEqual(Object.keys(value), ['__proto__']);
  t.is(({} as Record<string, unknown>).polluted, undefined);
});

test('parseYamlDocument reads an empty document as null', (t) => {
  const parsed = parseYamlDocument('# only a comment\n');
  t.true(parsed.readable);
  t.is(parsed.value, null);
});

test('parseYamlDocument stops at a cycle in an already-parsed value', (t) => {
  const cyclic: Record<string, unknown> = { name: 'demo' };
  cyclic.self = cyclic;
  const parsed = parseYamlDocument(cyclic);
  t.false(parsed.readable);
  t.is(parsed.findings[0]?.rule, SpecRule.documentTooDeep);
  t.true(parsed.findings[0]?.path.startsWith('self.self.self'));
});

test('parseYamlDocument reports values no spec can hold, with their path', (t) => {
  const parsed = parseYamlDocument({
    name: 'demo',
    processes: { web: { port: 10n, command: () => 'x', at: new Date(0), seen: new Map() } },
  });
  t.false(parsed.readable);
  t.deepEqual(
    parsed.findings.map((f) => [f.rule, f.path]),
    [
      [SpecRule.documentUnsupportedValue, 'processes.web.port'],
      [SpecRule.documentUnsupportedValue, 'processes.web.command'],
      [SpecRule.documentUnsupportedValue, 'processes.web.at'],
      [SpecRule.documentUnsupportedValue, 'processes.web.seen'],
    ],
  );
  t.regex(parsed.findings[2]?.message ?? '', /^processes\.web\.at: a date cannot appear in a spec$/);
});

test('parseYamlDocument reports an already-parsed value whose getter throws', (t) => {
  const hostile = {
    name: 'demo',
    get processes(): unknown {
      throw new Error('boom');
    },
  };
  const parsed = parseYamlDocument(hostile);
  t.false(parsed.readable);
  t.deepEqual(
    parsed.findings.map((f) => [f.rule, f.path]),
    [[SpecRule.documentUnreadable, 'processes']],
  );
});

test('parseYamlDocument caps the number of values in a document', (t) => {
  const shared = Array.from({ length: 10 }, () => 'x');
  let wide: unknown = shared;
  for (let i = 0; i < 6; i += 1) wide = Array.from({ length: 10 }, () => wide);
  const parsed = parseYamlDocument({ name: 'demo', wide });
  t.false(parsed.readable);
  t.is(parsed.findings[0]?.rule, SpecRule.documentTooLarge);
});

test('parseYamlDocument drops undefined fields and turns undefined list items into null', (t) => {
  const parsed = parseYamlDocument({ name: 'demo', gone: undefined, list: [1, undefined] });
  t.deepEqual(parsed.value, { name: 'demo', list: [1, null] });
});

test('parseYamlDocument rejects a map or list used as a key', (t) => {
  const parsed = parseYamlDocument('name: demo\n? [a, b]\n: value\n');
  t.false(parsed.readable);
  t.deepEqual(
    parsed.findings.map((f) => [f.rule, f.line, f.column]),
    [[SpecRule.documentUnsupportedValue, 2, 3]],
  );
});

test('parseYamlDocument names the first occurrence of a duplicate key', (t) => {
  const parsed = parseYamlDocument('name: a\nprocesses:\n  web: {}\nname: b\n');
  t.false(parsed.readable);
  t.deepEqual(
    parsed.findings.map((f) => [f.rule, f.line, f.column]),
    [[SpecRule.yamlSyntax, 4, 1]],
  );
  t.regex(parsed.findings[0]?.message ?? '', /Map keys must be unique; "name" is already set on line 1/);
});

test('parseYamlDocument reports at most 20 syntax errors of a document full of them', (t) => {
  const parsed = parseYamlDocument('{]'.repeat(200_000));
  t.false(parsed.readable);
  t.is(parsed.findings.length, 20);
  t.true(parsed.findings.every((f) => f.rule === SpecRule.yamlSyntax));
  t.deepEqual([parsed.findings[0]?.line, parsed.findings[0]?.column], [1, 4]);
});

test('parseYamlDocument composes only the first document of a long stream', (t) => {
  const parsed = parseYamlDocument('name: a\n'.concat('---\n'.repeat(100_000)));
  t.deepEqual(
    parsed.findings.map((f) => [f.rule, f.line]),
    [[SpecRule.yamlSyntax, 2]],
  );
});
