// tier: quick
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { SpecRule, validateDeployGroup, validateFleetDocument, validateInfraspec } from '../../../domain/spec/index.js';
import { fixturesIn, readFixture, root, sampleApps } from './spec-fixtures.js';

const invalid = fixturesIn('fixtures/specs/invalid');
const valid = fixturesIn('fixtures/specs/valid');

for (const fixture of invalid) {
  test(`${fixture.name} yields exactly the findings its header expects`, (t) => {
    t.true(fixture.expected.length > 0, 'the fixture header lists at least one expectation');
    const result = validateInfraspec(fixture.text, {
      fileName: path.basename(fixture.file),
      fleetDocument: fixture.fleetText,
      driver: fixture.driver,
    });
    const actual = result.findings.map((f) => ({
      rule: f.rule,
      path: f.path,
      line: f.line,
      column: f.column,
      severity: f.severity,
    }));
    t.deepEqual(actual, [...fixture.expected], result.findings.map((f) => f.message).join('\n'));
  });
}

test('the invalid fixtures are named after the rule they break', (t) => {
  for (const fixture of invalid) {
    const rule = path.basename(fixture.file, '.yaml');
    t.true(
      fixture.expected.every((expectation) => expectation.rule === rule),
      `${fixture.name} expects only ${rule}`,
    );
  }
});

test('the invalid fixtures cover every semantic rule of an app spec', (t) => {
  const covered = new Set(invalid.map((fixture) => path.basename(fixture.file, '.yaml')));
  const appRules = Object.values(SpecRule).filter(
    (rule) =>
      !rule.startsWith('deployGroup.') &&
      ![
        'yaml.warning',
        'document.too_large',
        'document.unsupported_value',
        'document.unreadable',
        'validator.internal',
        'findings.truncated',
      ].includes(rule),
  );
  t.deepEqual(
    appRules.filter((rule) => !covered.has(rule)),
    [],
  );
  for (const keyword of ['type', 'required', 'additionalProperties'])
    t.true(covered.has(`schema.${keyword}`), `schema.${keyword} is covered`);
});

test('every spec fixture starts with the yaml-language-server schema modeline', (t) => {
  for (const fixture of [...invalid, ...valid]) {
    t.is(
      fixture.text.split('\n')[0],
      '# yaml-language-server: $schema=../../../schemas/infraspec.schema.json',
      fixture.name,
    );
  }
});

for (const fixture of valid) {
  test(`${fixture.name} validates with only the warnings its header expects (and the hostPort gap)`, (t) => {
    const result = validateInfraspec(fixture.text, {
      fileName: fixture.name,
      fleetDocument: fixture.fleetText,
      driver: fixture.driver,
    });
    t.deepEqual(
      result.findings
        .filter((f) => !(f.rule === 'hostPort.noOverlap' && f.severity === 'warning'))
        .map((f) => ({ rule: f.rule, path: f.path, line: f.line, column: f.column, severity: f.severity })),
      [...fixture.expected],
      result.findings.map((f) => f.message).join('\n'),
    );
    t.true(result.valid);
    t.truthy(result.spec);
  });
}

test('fixtures/specs/valid/large-200-lines.yaml is about 200 lines long', (t) => {
  const lines = readFixture(path.join(root, 'fixtures/specs/valid/large-200-lines.yaml')).text.split('\n').length;
  t.true(lines >= 190 && lines <= 220, `${lines} lines`);
});

for (const app of sampleApps) {
  test(`the sample app ${app} validates clean and has its Dockerfile and program`, (t) => {
    const folder = path.join(root, 'fixtures/apps', app);
    const text = fs.readFileSync(path.join(folder, 'infraspec.yaml'), 'utf8');
    t.is(text.split('\n')[0], '# yaml-language-server: $schema=../../../schemas/infraspec.schema.json');
    const result = validateInfraspec(text, { fileName: `${app}/infraspec.yaml` });
    t.deepEqual(result.findings, []);
    t.is(result.spec?.name, app);
    const dockerfile = fs.readFileSync(path.join(folder, 'Dockerfile'), 'utf8');
    t.regex(dockerfile, /^FROM node:20-(alpine|bookworm-slim)$/m);
    t.regex(dockerfile, /^WORKDIR \/app$/m);
    const program = /^CMD \["node", "([^"]+)"\]$/m.exec(dockerfile)?.[1];
    t.truthy(program, 'the Dockerfile runs a node program');
    t.true(fs.existsSync(path.join(folder, program!)), `${program} exists`);
  });
}

test('every sample app sets deploy true: each one deploys on the platform npm start runs', (t) => {
  const deployed = sampleApps.filter(
    (app) =>
      validateInfraspec(fs.readFileSync(path.join(root, 'fixtures/apps', app, 'infraspec.yaml'), 'utf8')).spec?.deploy,
  );
  t.deepEqual(deployed, sampleApps);
});

test('the sample apps cover the service, worker, periodic and function process types', (t) => {
  const types = new Set(
    sampleApps.flatMap((app) => {
      const spec = validateInfraspec(
        fs.readFileSync(path.join(root, 'fixtures/apps', app, 'infraspec.yaml'), 'utf8'),
      ).spec;
      return Object.values(spec?.processes ?? {}).map((process) => process.type);
    }),
  );
  t.deepEqual([...types].sort(), ['function', 'periodic', 'service', 'worker']);
});

test('the web-stack deploy group deploys ledger-api, then hello-web, each waiting until ready', (t) => {
  const text = fs.readFileSync(path.join(root, 'fixtures/apps/deploy-groups/web-stack.yaml'), 'utf8');
  const result = validateDeployGroup(text, { knownApps: sampleApps });
  t.deepEqual(result.findings, []);
  t.deepEqual(result.group, {
    name: 'web-stack',
    apps: [
      { app: 'ledger-api', waitReady: true },
      { app: 'hello-web', waitReady: true },
    ],
  });
});

test('the production fleet fixture is a valid fleet document', (t) => {
  const result = validateFleetDocument(
    fs.readFileSync(path.join(root, 'fixtures/specs/fleets/production.yaml'), 'utf8'),
  );
  t.deepEqual(result.findings, []);
  t.deepEqual([...result.nodePools].sort(), ['batch', 'general']);
});
