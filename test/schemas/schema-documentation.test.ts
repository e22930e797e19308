// tier: quick
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { InfraspecDefaults } from '../../domain/spec/index.js';
import { REPO_ROOT } from '../helpers/repo.js';

const root = REPO_ROOT;
type Schema = Record<string, unknown>;
const load = (name: string): Schema => JSON.parse(fs.readFileSync(path.join(root, 'schemas', name), 'utf8')) as Schema;
const schemas = { infraspec: load('infraspec.schema.json'), deployGroup: load('deploy-group.schema.json'), fleet: load('fleet.schema.json') };

/** Every property schema of every object in `schema`, with its JSON pointer. */
function properties(schema: Schema, pointer = '#'): Array<[string, Schema]> {
  const out: Array<[string, Schema]> = [];
  const visit = (node: unknown, at: string): void => {
    if (node === null || typeof node !== 'object') return;
    if (Array.isArray(node)) {
      node.forEach((item, index) => visit(item, `${at}/${index}`));
      return;
    }
    const record = node as Schema;
    if (record.properties !== undefined && typeof record.properties === 'object') {
      for (const [name, property] of Object.entries(record.properties as Schema)) out.push([`${at}/properties/${name}`, property as Schema]);
    }
    for (const [key, value] of Object.entries(record)) if (key !== 'properties') visit(value, `${at}/${key}`);
    if (record.properties !== undefined) for (const [name, value] of Object.entries(record.properties as Schema)) visit(value, `${at}/properties/${name}`);
  };
  visit(schema, pointer);
  return out;
}

function at(schema: Schema, pointer: string): Schema {
  return pointer
    .split('/')
    .slice(1)
    .reduce<Schema>((node, key) => node[key] as Schema, schema);
}

for (const [name, schema] of Object.entries(schemas)) {
  test(`the ${name} schema describes every property`, (t) => {
    // Conditions (`if`) are not fields users write, so they need no description.
    const undocumented = properties(schema)
      .filter(([pointer]) => !pointer.includes('/if/'))
      .filter(([, property]) => typeof property.description !== 'string' || property.description === '')
      .map(([pointer]) => pointer);
    t.deepEqual(undocumented, []);
  });
}

const documentedDefaults: ReadonlyArray<[string, unknown]> = [
  ['/definitions/AppSpec/properties/deploy', InfraspecDefaults.deploy],
  ['/definitions/RegionTarget/properties/datacenters', InfraspecDefaults.datacenters],
  ['/definitions/RegionTarget/properties/trafficWeight', InfraspecDefaults.trafficWeight],
  ['/definitions/Health/properties/interval', InfraspecDefaults.healthInterval],
  ['/definitions/Health/properties/timeout', InfraspecDefaults.healthTimeout],
  ['/definitions/Metrics/properties/enabled', InfraspecDefaults.metricsEnabled],
  ['/definitions/Metrics/properties/path', InfraspecDefaults.metricsPath],
  ['/definitions/Scaling/properties/min', InfraspecDefaults.scalingMin],
  ['/definitions/Drain/properties/signal', InfraspecDefaults.drainSignal],
  ['/definitions/Resources/properties/cpu', InfraspecDefaults.cpu],
  ['/definitions/Resources/properties/memory', InfraspecDefaults.memory],
  ['/definitions/TuningPolicy/properties/mode', InfraspecDefaults.tuningMode],
  ['/definitions/Process/properties/singleton', InfraspecDefaults.singleton],
  ['/definitions/Repo/properties/branch', InfraspecDefaults.repoBranch],
  ['/definitions/Repo/properties/autoDeploy', InfraspecDefaults.repoAutoDeploy],
  ['/definitions/Build/properties/dockerfile', InfraspecDefaults.dockerfile],
  ['/definitions/Bucket/properties/access', InfraspecDefaults.bucketAccess],
  ['/definitions/Bucket/properties/public', InfraspecDefaults.bucketPublic],
  ['/definitions/Volume/properties/readOnly', InfraspecDefaults.volumeReadOnly],
  ['/definitions/SnapshotPolicy/properties/keep', InfraspecDefaults.snapshotKeep],
  ['/definitions/SnapshotPolicy/properties/preRestore', InfraspecDefaults.snapshotPreRestore],
  ['/definitions/SnapshotPolicy/properties/retentionEnabled', InfraspecDefaults.snapshotRetentionEnabled],
  ['/definitions/DeployPolicy/properties/autoRollback', InfraspecDefaults.autoRollback],
  ['/definitions/LegacyFunction/properties/timeout', InfraspecDefaults.legacyFunctionTimeoutSeconds],
  ['/definitions/LegacyFunction/properties/trigger', InfraspecDefaults.legacyFunctionTrigger],
  ['/definitions/LegacyFunction/properties/memory', InfraspecDefaults.legacyFunctionMemory],
];

for (const [pointer, value] of documentedDefaults) {
  test(`the infraspec schema default at ${pointer} is the one canonicalization fills`, (t) => {
    t.deepEqual(at(schemas.infraspec, `#${pointer}`).default, value);
  });
}

test('the deploy group schema documents waitReady false by default', (t) => {
  t.is(at(schemas.deployGroup, '#/definitions/DeployGroupApp/properties/waitReady').default, false);
});

test('the schemas carry their $id and draft-07 $schema', (t) => {
  t.is(schemas.infraspec.$id, 'https://svc.dev/schemas/infraspec.schema.json');
  t.is(schemas.deployGroup.$id, 'https://svc.dev/schemas/deploy-group.schema.json');
  t.is(schemas.fleet.$id, 'https://svc.dev/schemas/fleet.schema.json');
  for (const schema of Object.values(schemas)) t.is(schema.$schema, 'http://json-schema.org/draft-07/schema#');
});
