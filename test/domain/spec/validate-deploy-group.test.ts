// tier: quick
import test from 'ava';
import { SpecRule, validateDeployGroup } from '../../../domain/spec/index.js';

test('validateDeployGroup fills waitReady with false', (t) => {
  const result = validateDeployGroup('name: pair\napps:\n  - app: a\n  - app: b\n    waitReady: true\n');
  t.true(result.valid);
  t.deepEqual(result.group, {
    name: 'pair',
    apps: [
      { app: 'a', waitReady: false },
      { app: 'b', waitReady: true },
    ],
  });
});

test('validateDeployGroup names the path, line and column of a schema violation', (t) => {
  const result = validateDeployGroup('name: pair\napps:\n  - app: a\n    waitReady: "yes"\n  - application: b\n', {
    fileName: 'deploy-groups/pair.yaml',
  });
  t.false(result.valid);
  t.deepEqual(
    result.findings.map((f) => [f.rule, f.path, f.line, f.column]),
    [
      ['schema.type', 'apps[0].waitReady', 4, 16],
      ['schema.required', 'apps[1].app', 5, 5],
      ['schema.additionalProperties', 'apps[1].application', 5, 5],
    ],
  );
  t.is(
    result.findings[0]?.message,
    'apps[0].waitReady: "yes" is a string, expected a boolean (true or false) (deploy-groups/pair.yaml, line 4, column 16)',
  );
});

test('validateDeployGroup rejects an app listed twice', (t) => {
  const result = validateDeployGroup('name: pair\napps:\n  - app: a\n  - app: a\n');
  t.deepEqual(
    result.findings.map((f) => [f.rule, f.path, f.line, f.column]),
    [[SpecRule.deployGroupDuplicateApp, 'apps[1].app', 4, 10]],
  );
});

test('validateDeployGroup checks apps against the known apps when given', (t) => {
  const result = validateDeployGroup(
    { name: 'pair', apps: [{ app: 'a' }, { app: 'ghost' }] },
    { knownApps: ['a', 'b'] },
  );
  t.deepEqual(
    result.findings.map((f) => [f.rule, f.path, f.line]),
    [[SpecRule.deployGroupAppExists, 'apps[1].app', null]],
  );
});

test('validateDeployGroup requires at least one app', (t) => {
  const result = validateDeployGroup('name: empty\napps: []\n');
  t.deepEqual(
    result.findings.map((f) => [f.rule, f.path]),
    [['schema.minItems', 'apps']],
  );
});

test('validateDeployGroup never throws on malformed input', (t) => {
  for (const input of ['{', '- 1', 42, null, { apps: 'x' }, `${'['.repeat(500)}${']'.repeat(500)}`]) {
    const result = validateDeployGroup(input);
    t.false(result.valid);
    t.true(result.findings.length > 0);
  }
});
