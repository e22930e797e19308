// tier: quick
import test from 'ava';
import { SpecRule, validateFleetDocument } from '../../../domain/spec/index.js';

const fleet = [
  'apiVersion: svc.dev/v1',
  'kind: Fleet',
  'metadata:',
  '  name: home',
  '  environment: development',
  'nodePools:',
  '  - name: general',
  '    description: Everything',
  '    datacenters: [dc1]',
  '',
].join('\n');

test('validateFleetDocument accepts a fleet document and lists its node pools', (t) => {
  const result = validateFleetDocument(fleet);
  t.true(result.valid);
  t.deepEqual(result.findings, []);
  t.deepEqual([...result.nodePools], ['general']);
  t.is(result.fleetName, 'home');
  t.is(result.fleet?.kind, 'Fleet');
});

test('validateFleetDocument requires DNS-compatible node pool names', (t) => {
  const result = validateFleetDocument(fleet.replace('name: general', 'name: General_Pool'));
  t.deepEqual(
    result.findings.map((f) => [f.rule, f.path, f.line, f.column]),
    [['schema.pattern', 'nodePools[0].name', 7, 11]],
  );
});

test('validateFleetDocument rejects a node pool declared twice', (t) => {
  const result = validateFleetDocument(`${fleet}  - name: general\n`);
  t.deepEqual(
    result.findings.map((f) => [f.rule, f.path, f.line]),
    [[SpecRule.fleetDuplicateNodePool, 'nodePools[1].name', 10]],
  );
});

test('validateFleetDocument lists the node pools of an invalid document too', (t) => {
  const result = validateFleetDocument({ kind: 'Fleet', nodePools: [{ name: 'a' }, { name: 'b', extra: true }] });
  t.false(result.valid);
  t.deepEqual([...result.nodePools], ['a', 'b']);
  t.deepEqual(
    result.findings.map((f) => [f.rule, f.path]),
    [
      ['schema.required', 'apiVersion'],
      ['schema.required', 'metadata'],
      ['schema.additionalProperties', 'nodePools[1].extra'],
    ],
  );
});

test('validateFleetDocument puts a path prefix before every finding path', (t) => {
  const result = validateFleetDocument('kind: Fleet\n', { pathPrefix: ['fleetDocument'] });
  t.true(result.findings.every((f) => f.path.startsWith('fleetDocument.')));
  t.regex(
    result.findings[0]?.message ?? '',
    /^fleetDocument\.apiVersion: is required but missing \(line 1, column 1\)$/,
  );
});
