// tier: quick
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import {
  generateInfraspecReference,
  infraspecFields,
  infraspecReferencePath,
  infraspecSchemaPath,
  renderInfraspecReference,
  runInfraspecReference,
  type SchemaNode,
} from '../../scripts/generate-infraspec-reference.js';

const schemaText = fs.readFileSync(infraspecSchemaPath, 'utf8');
const schema = JSON.parse(schemaText) as SchemaNode;

function tempPage(t: { teardown(fn: () => void): void }): string {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'infraspec-reference-'));
  t.teardown(() => fs.rmSync(folder, { recursive: true, force: true }));
  return path.join(folder, 'infraspec.md');
}

test('docs/reference/infraspec.md matches what the schema generates (run scripts/generate-infraspec-reference.ts)', async (t) => {
  t.is(fs.readFileSync(infraspecReferencePath, 'utf8'), await generateInfraspecReference());
});

test('the infraspec reference has a row for every property of every definition the spec reaches', (t) => {
  const { app, legacy } = infraspecFields(schema);
  const leaves = new Set([...app, ...legacy].map((row) => row.path.replace(/\[\]$/, '').split('.').at(-1)));
  const definitions = schema.definitions ?? {};
  const missing: string[] = [];
  for (const [name, definition] of Object.entries(definitions)) {
    for (const property of Object.keys(definition.properties ?? {})) {
      if (!leaves.has(property)) missing.push(`${name}.${property}`);
    }
  }
  t.deepEqual(missing, []);
  const page = renderInfraspecReference(schemaText);
  for (const row of [...app, ...legacy]) t.true(page.includes(`\`${row.path}\``), row.path);
});

test('the infraspec reference gives each field its type, default and description from the schema', (t) => {
  const { app } = infraspecFields(schema);
  const interval = app.find((row) => row.path === 'processes.<process>.health.interval');
  t.like(interval, { type: 'string (Go duration)', default: '`"10s"`', required: false });
  t.regex(interval?.description ?? '', /\S/);
  t.like(
    app.find((row) => row.path === 'endpoints[].url'),
    { required: true, type: 'string' },
  );
});

test('the infraspec reference takes what each driver honours from the driver rules', (t) => {
  const { app } = infraspecFields(schema);
  const drivers = (field: string) => app.find((row) => row.path === field)?.drivers;
  t.deepEqual(drivers('placement.nodePool'), { local: 'warning `driver.nodePool`', kubernetes: 'yes', swarm: 'yes' });
  t.deepEqual(drivers('volumes'), { local: 'yes', kubernetes: 'warning `driver.unsupported`', swarm: 'yes' });
  t.is(drivers('volumes[].mount')?.kubernetes, 'warning `driver.unsupported`');
  for (const driver of ['local', 'kubernetes', 'swarm'] as const) {
    t.is(drivers('regions.<region>.trafficWeight')?.[driver], 'warning `driver.trafficWeight`');
    t.is(drivers('endpoints[].region')?.[driver], 'warning `driver.endpointRegion`');
    t.is(drivers('processes.<process>.port')?.[driver], 'yes');
  }
});

test('a field added to the schema appears on the page, so a page generated before it is stale', (t) => {
  const changed = JSON.parse(schemaText) as { definitions: Record<string, { properties: Record<string, unknown> }> };
  changed.definitions.Health!.properties.grace = { type: 'string', description: 'A field only this test adds.' };
  const page = renderInfraspecReference(JSON.stringify(changed));
  t.true(page.includes('`processes.<process>.health.grace`'));
  t.true(page.includes('A field only this test adds.'));
  t.not(page, renderInfraspecReference(schemaText));
});

test('the generator in check mode fails on a stale or missing page, passes on a fresh one, and writes nothing', async (t) => {
  const page = tempPage(t);
  t.false(await runInfraspecReference({ check: true, page }));
  t.false(fs.existsSync(page));
  fs.writeFileSync(page, (await generateInfraspecReference()).replace('| `deploy` |', '| `deployed` |'));
  t.false(await runInfraspecReference({ check: true, page }));
  t.true(await runInfraspecReference({ check: false, page }));
  t.true(await runInfraspecReference({ check: true, page }));
});

test('npm test runs the infraspec reference check and reports it', (t) => {
  const script = fs.readFileSync(path.join(path.dirname(infraspecSchemaPath), '..', 'scripts', 'test.sh'), 'utf8');
  t.regex(script, /^check infraspec-reference node --import tsx scripts\/generate-infraspec-reference\.ts --check &$/m);
  t.regex(script, /^for name in .*\binfraspec-reference\b.*; do$/m);
});
