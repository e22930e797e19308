// tier: quick
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { FindingSeverity, maxFindingsPerDocument, SpecRule, validateInfraspec } from '../../../domain/spec/index.js';
import { root } from './spec-fixtures.js';

const fixture = (name: string): string => fs.readFileSync(path.join(root, 'fixtures/specs', name), 'utf8');

test('validateInfraspec messages name the subject, the broken rule and the position', (t) => {
  const result = validateInfraspec(fixture('invalid/duration.go.yaml'));
  const finding = result.findings.find((f) => f.path === 'processes.web.health.interval');
  t.is(
    finding?.message,
    'processes.web.health.interval: "10" is not a Go duration: missing unit; write a number with a unit (ns, us, ms, s, m, h), for example 10s, 1m30s or 300ms (line 12, column 17)',
  );
});

test('validateInfraspec puts the file name in messages when given one', (t) => {
  const result = validateInfraspec('name: demo\nprocesses:\n  web:\n    port: "80"\n', {
    fileName: 'apps/demo/infraspec.yaml',
  });
  t.is(
    result.findings[0]?.message,
    'processes.web.port: "80" is a string, expected an integer (apps/demo/infraspec.yaml, line 4, column 11)',
  );
});

test('validateInfraspec gives findings of an already-parsed spec no line or column', (t) => {
  const result = validateInfraspec({ name: 'demo', processes: { web: { port: 'x' } } });
  t.false(result.valid);
  t.deepEqual(result.findings, [
    {
      path: 'processes.web.port',
      rule: 'schema.type',
      message: 'processes.web.port: "x" is a string, expected an integer',
      line: null,
      column: null,
      severity: 'error',
    },
  ]);
});

test('validateInfraspec returns the canonical spec only for a valid document', (t) => {
  const valid = validateInfraspec('name: demo\nprocesses:\n  web:\n    port: 80\n');
  t.true(valid.valid);
  t.is(valid.spec?.processes.web?.type, 'service');
  const invalid = validateInfraspec('name: demo\nprocesses:\n  web:\n    port: 0\n');
  t.false(invalid.valid);
  t.is(invalid.spec, undefined);
});

test('validateInfraspec reports a rule that is both a schema pattern and a semantic rule once', (t) => {
  const result = validateInfraspec(
    'name: demo\nprocesses:\n  web:\n    port: 80\ninfrastructure:\n  postgres:\n    database: 1abc\n',
  );
  t.deepEqual(
    result.findings.map((f) => [f.rule, f.path]),
    [[SpecRule.postgresDatabaseName, 'infrastructure.postgres.database']],
  );
});

test('validateInfraspec applies the semantic rules to a spec that also breaks the schema', (t) => {
  const result = validateInfraspec(
    'name: demo\nprocesses:\n  web:\n    port: "80"\n    health:\n      interval: 10x\n  worker:\n    command: x\n    health: {path: /h}\n',
  );
  t.deepEqual(
    result.findings.map((f) => f.rule),
    ['schema.type', SpecRule.durationGo, SpecRule.healthRequiresPort],
  );
});

const roots: ReadonlyArray<[string, unknown, string]> = [
  ['a number', 42, 'a map'],
  ['a string of plain text', 'just some text', 'a map'],
  ['a list', [1, 2], 'a map'],
  ['null', null, 'a map'],
];

for (const [what, input, expected] of roots) {
  test(`validateInfraspec rejects a document that is ${what}`, (t) => {
    const result = validateInfraspec(input);
    t.false(result.valid);
    t.deepEqual(
      result.findings.map((f) => [f.rule, f.path]),
      [['schema.type', '']],
    );
    t.regex(result.findings[0]?.message ?? '', new RegExp(`^\\(document\\): .* expected ${expected}`));
  });
}

test('validateInfraspec checks the legacy function form against its own fields', (t) => {
  const result = validateInfraspec(
    'app: resize\nrole: function\nfunction:\n  timeout: 30s\n  trigger: queue\nprocesses: {}\n',
  );
  t.deepEqual(
    result.findings.map((f) => [f.rule, f.path]),
    [
      ['schema.type', 'function.timeout'],
      ['schema.enum', 'function.trigger'],
      ['schema.additionalProperties', 'processes'],
    ],
  );
});

test('validateInfraspec keeps a spec with only warnings valid', (t) => {
  const result = validateInfraspec(fixture('invalid/tuning.modeReserved.yaml'));
  t.true(result.valid);
  t.is(result.spec?.processes.web?.tuning?.mode, 'auto');
  t.deepEqual(
    result.findings.map((f) => f.severity),
    [FindingSeverity.warning],
  );
});

test('validateInfraspec accepts a fleet document as an object and checks the node pool', (t) => {
  const spec = 'name: demo\nplacement:\n  nodePool: gpu\nprocesses:\n  web:\n    port: 8080\n';
  const fleetDocument = {
    apiVersion: 'svc.dev/v1',
    kind: 'Fleet',
    metadata: { name: 'home' },
    nodePools: [{ name: 'general' }],
  };
  // The kubernetes driver honours the node pool; the local driver would add its own warning.
  const missing = validateInfraspec(spec, { fleetDocument, driver: 'kubernetes' });
  t.deepEqual(
    missing.findings.map((f) => [f.rule, f.path, f.line, f.column]),
    [[SpecRule.placementNodePoolExists, 'placement.nodePool', 3, 13]],
  );
  t.regex(missing.findings[0]?.message ?? '', /"gpu" is not a node pool of fleet "home" \(node pools: general\)/);
  const present = validateInfraspec(spec, {
    fleetDocument: { ...fleetDocument, nodePools: [{ name: 'gpu' }] },
    driver: 'kubernetes',
  });
  t.true(present.valid);
});

test('validateInfraspec reports the fleet document own problems under fleetDocument', (t) => {
  const result = validateInfraspec('name: demo\nprocesses:\n  web:\n    port: 8080\n', {
    fleetDocument: { apiVersion: 'v1', kind: 'Fleets', metadata: {}, nodePools: [{ name: 'Bad Pool' }] },
  });
  t.false(result.valid);
  t.deepEqual(
    result.findings.map((f) => [f.rule, f.path]),
    [
      ['schema.const', 'fleetDocument.kind'],
      ['schema.required', 'fleetDocument.metadata.name'],
      ['schema.pattern', 'fleetDocument.nodePools[0].name'],
    ],
  );
});

test('validateInfraspec reports an unreadable fleet document under fleetDocument', (t) => {
  const result = validateInfraspec('name: demo\nprocesses:\n  web:\n    port: 8080\n', {
    fleetDocument: 'nodePools: [\n',
  });
  t.false(result.valid);
  t.true(result.findings.length > 0);
  t.true(result.findings.every((f) => f.rule === SpecRule.yamlSyntax && f.path === 'fleetDocument'));
});

test('validateInfraspec rejects a document over 1 MiB without parsing it', (t) => {
  const result = validateInfraspec(`name: demo\n# ${'x'.repeat(2 * 1024 * 1024)}\n`);
  t.deepEqual(
    result.findings.map((f) => f.rule),
    [SpecRule.documentTooLarge],
  );
});

test('validateInfraspec caps the number of findings and says how many were dropped', (t) => {
  const env = Array.from({ length: 700 }, (_, i) => `  V${i}: ${i}`).join('\n');
  const result = validateInfraspec(`name: demo\nprocesses:\n  web:\n    port: 80\nenv:\n${env}\n`);
  t.is(result.findings.length, maxFindingsPerDocument + 1);
  const last = result.findings.at(-1);
  t.is(last?.rule, SpecRule.findingsTruncated);
  t.is(last?.severity, FindingSeverity.warning);
  t.regex(last?.message ?? '', /200 more findings were not reported/);
});

test('validateInfraspec suggests the closest field name for an unknown field', (t) => {
  const result = validateInfraspec('name: demo\nprocesses:\n  web:\n    port: 80\n    scalling: {min: 2}\n');
  t.regex(
    result.findings[0]?.message ?? '',
    /processes\.web\.scalling: is not a field of Process; did you mean "scaling"\?/,
  );
});
