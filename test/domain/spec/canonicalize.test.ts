// tier: quick
import test from 'ava';
import type { AppSpec, InfraSpec } from '../../../schemas/types.generated.js';
import {
  bucketEnvAlias,
  canonicalizeInfraspec,
  legacyMemoryToMegabytes,
  ProcessType,
  SpecForm,
  validateInfraspec,
} from '../../../domain/spec/index.js';

const minimal: AppSpec = { name: 'demo', processes: { web: { port: 8080 } } };

function pick(value: unknown, path: readonly (string | number)[]): unknown {
  return path.reduce<unknown>((node, key) => (node as Record<string | number, unknown> | undefined)?.[key], value);
}

/** [what, input spec, path in the canonical spec, expected value] */
const defaults: ReadonlyArray<[string, InfraSpec, readonly (string | number)[], unknown]> = [
  ['deploy is false', minimal, ['deploy'], false],
  ['resources.cpu is 100', minimal, ['processes', 'web', 'resources', 'cpu'], 100],
  ['resources.memory is 128', minimal, ['processes', 'web', 'resources', 'memory'], 128],
  [
    'health.interval is 10s',
    { name: 'demo', processes: { web: { port: 80, health: { path: '/h' } } } },
    ['processes', 'web', 'health', 'interval'],
    '10s',
  ],
  [
    'health.timeout is 5s',
    { name: 'demo', processes: { web: { port: 80, health: { path: '/h' } } } },
    ['processes', 'web', 'health', 'timeout'],
    '5s',
  ],
  ['scaling.min is 1', minimal, ['processes', 'web', 'scaling', 'min'], 1],
  ['metrics.enabled is false', minimal, ['processes', 'web', 'metrics', 'enabled'], false],
  [
    'metrics.path is /metrics',
    { name: 'demo', processes: { web: { port: 80, metrics: { enabled: true } } } },
    ['processes', 'web', 'metrics', 'path'],
    '/metrics',
  ],
  ['drain.signal is SIGTERM', minimal, ['processes', 'web', 'drain', 'signal'], 'SIGTERM'],
  ['singleton is false', minimal, ['processes', 'web', 'singleton'], false],
  ['process env is empty', minimal, ['processes', 'web', 'env'], {}],
  [
    'tuning.mode is advisory',
    { name: 'demo', processes: { web: { port: 80, tuning: { cooldown: '1h' } } } },
    ['processes', 'web', 'tuning', 'mode'],
    'advisory',
  ],
  ['repo.branch is main', { ...minimal, repo: { url: 'https://git.example.test/a.git' } }, ['repo', 'branch'], 'main'],
  [
    'repo.autoDeploy is false',
    { ...minimal, repo: { url: 'https://git.example.test/a.git' } },
    ['repo', 'autoDeploy'],
    false,
  ],
  ['build.dockerfile is Dockerfile', minimal, ['build', 'dockerfile'], 'Dockerfile'],
  ['snapshots.keep is 3', minimal, ['snapshots', 'keep'], 3],
  ['snapshots.preRestore is false', minimal, ['snapshots', 'preRestore'], false],
  ['snapshots.retentionEnabled is false', minimal, ['snapshots', 'retentionEnabled'], false],
  ['deployPolicy.autoRollback is true when deployPolicy is absent', minimal, ['deployPolicy', 'autoRollback'], true],
  [
    'deployPolicy.autoRollback is true when deployPolicy is empty',
    { ...minimal, deployPolicy: {} },
    ['deployPolicy', 'autoRollback'],
    true,
  ],
  ['regions are empty when omitted', minimal, ['regions'], {}],
  [
    'a region datacenters list is [dc1]',
    { ...minimal, regions: { eu: {} } },
    ['regions', 'eu', 'datacenters'],
    ['dc1'],
  ],
  [
    'a region schedulerRegion is its key',
    { ...minimal, regions: { eu: {} } },
    ['regions', 'eu', 'schedulerRegion'],
    'eu',
  ],
  ['a region trafficWeight is 100', { ...minimal, regions: { eu: {} } }, ['regions', 'eu', 'trafficWeight'], 100],
  [
    'primaryRegion is the first region in lexical order',
    { ...minimal, regions: { 'us-east': {}, 'eu-west': {} } },
    ['primaryRegion'],
    'eu-west',
  ],
  ['primaryRegion is absent without regions', minimal, ['primaryRegion'], undefined],
  [
    'a volume readOnly is false',
    { ...minimal, volumes: [{ name: 'data', mount: '/data' }] },
    ['volumes', 0, 'readOnly'],
    false,
  ],
  [
    'a bucket access is readWrite',
    { ...minimal, infrastructure: { objectStorage: { buckets: [{ name: 'my-bucket' }] } } },
    ['infrastructure', 'objectStorage', 'buckets', 0, 'access'],
    'readWrite',
  ],
  [
    'a bucket public is false',
    { ...minimal, infrastructure: { objectStorage: { buckets: [{ name: 'my-bucket' }] } } },
    ['infrastructure', 'objectStorage', 'buckets', 0, 'public'],
    false,
  ],
  [
    'a bucket env is derived from its name',
    { ...minimal, infrastructure: { objectStorage: { buckets: [{ name: 'my.bucket-1' }] } } },
    ['infrastructure', 'objectStorage', 'buckets', 0, 'env'],
    'MY_BUCKET_1',
  ],
  ['services, secrets, env, endpoints and volumes are empty lists or maps', minimal, ['services'], []],
  ['a legacy function timeout is 30 seconds', { app: 'fn', role: 'function' }, ['legacyFunction', 'timeout'], 30],
  ['a legacy function trigger is http', { app: 'fn', role: 'function' }, ['legacyFunction', 'trigger'], 'http'],
  ['a legacy function memory is 256m', { app: 'fn', role: 'function' }, ['legacyFunction', 'memory'], '256m'],
  [
    'a legacy function process times out after 30s',
    { app: 'fn', role: 'function' },
    ['processes', 'function', 'function', 'timeout'],
    '30s',
  ],
  [
    'a legacy function process has 256 MB',
    { app: 'fn', role: 'function' },
    ['processes', 'function', 'function', 'memory'],
    256,
  ],
];

for (const [what, input, path, expected] of defaults) {
  test(`canonicalizeInfraspec fills the default: ${what}`, (t) => {
    t.deepEqual(pick(canonicalizeInfraspec(input), path), expected);
  });
}

test('canonicalizeInfraspec keeps values the spec sets instead of defaults', (t) => {
  const spec = canonicalizeInfraspec({
    name: 'demo',
    deploy: true,
    regions: { eu: { schedulerRegion: 'europe', datacenters: ['a', 'b'], trafficWeight: 0 } },
    processes: {
      web: {
        port: 80,
        resources: { cpu: 300, memory: 512 },
        health: { path: '/h', interval: '1m', timeout: '2s' },
        drain: { signal: 'SIGINT' },
      },
    },
    snapshots: { keep: 9 },
    deployPolicy: { autoRollback: false },
  });
  t.true(spec.deploy);
  t.deepEqual(spec.regions.eu, { schedulerRegion: 'europe', datacenters: ['a', 'b'], trafficWeight: 0 });
  t.deepEqual(spec.processes.web?.resources, { cpu: 300, memory: 512 });
  t.deepEqual(spec.processes.web?.health, { path: '/h', interval: '1m', timeout: '2s' });
  t.is(spec.processes.web?.drain.signal, 'SIGINT');
  t.is(spec.snapshots.keep, 9);
  t.false(spec.deployPolicy.autoRollback);
});

const types: ReadonlyArray<[string, AppSpec['processes'][string], ProcessType]> = [
  ['a process with a port is a service', { port: 8080 }, ProcessType.service],
  ['a process with a schedule is periodic', { schedule: '0 2 * * *' }, ProcessType.periodic],
  ['a process with a function is a function', { function: { timeout: '30s' } }, ProcessType.function],
  ['a process with none of them is a worker', { command: 'node worker.mjs' }, ProcessType.worker],
];

for (const [what, process, type] of types) {
  test(`canonicalizeInfraspec types processes: ${what}`, (t) => {
    t.is(canonicalizeInfraspec({ name: 'demo', processes: { p: process! } }).processes.p?.type, type);
  });
}

test('canonicalizeInfraspec places periodic and singleton processes in the primary region, others in every region', (t) => {
  const spec = canonicalizeInfraspec({
    name: 'demo',
    regions: { 'us-east': {}, 'eu-west': {} },
    primaryRegion: 'us-east',
    processes: {
      web: { port: 80 },
      cron: { schedule: '0 * * * *' },
      leader: { command: 'x', singleton: true },
      pinned: { command: 'y', regions: ['eu-west'] },
    },
  });
  t.deepEqual(spec.processes.web?.regions, ['eu-west', 'us-east']);
  t.deepEqual(spec.processes.cron?.regions, ['us-east']);
  t.deepEqual(spec.processes.leader?.regions, ['us-east']);
  t.deepEqual(spec.processes.pinned?.regions, ['eu-west']);
});

test('canonicalizeInfraspec turns the legacy function form into an app with one function process', (t) => {
  const spec = canonicalizeInfraspec({
    app: 'resize',
    role: 'function',
    build: { dockerfile: 'fn.Dockerfile' },
    function: { timeout: 60, memory: '1g' },
  });
  t.is(spec.form, SpecForm.legacyFunction);
  t.is(spec.name, 'resize');
  t.deepEqual(Object.keys(spec.processes), ['function']);
  t.is(spec.processes.function?.type, ProcessType.function);
  t.deepEqual(spec.processes.function?.function, { timeout: '60s', memory: 1024 });
  t.is(spec.build.dockerfile, 'fn.Dockerfile');
  t.deepEqual(spec.legacyFunction, { timeout: 60, trigger: 'http', memory: '1g' });
});

test('canonicalizeInfraspec marks app specs with the app form and no legacy block', (t) => {
  const spec = canonicalizeInfraspec(minimal);
  t.is(spec.form, SpecForm.app);
  t.false('legacyFunction' in spec);
});

test('canonicalizeInfraspec does not change its input', (t) => {
  const input: AppSpec = { name: 'demo', processes: { web: { port: 80, health: { path: '/h' } } } };
  const before = structuredClone(input);
  canonicalizeInfraspec(input);
  t.deepEqual(input, before);
});

test('canonicalizeInfraspec output is itself a valid app spec that canonicalizes to itself', (t) => {
  const once = validateInfraspec(
    'name: demo\nregions: {eu: {}}\nprocesses:\n  web: {port: 80, health: {path: /h}}\n  cron: {schedule: "0 1 * * *"}\n',
  ).spec!;
  const { form: _form, ...asAppSpec } = once;
  // The canonical type is assignable to the generated AppSpec type (checked by tsc).
  const typed: AppSpec = asAppSpec;
  const processes = Object.fromEntries(
    Object.entries(typed.processes).map(([name, p]) => [name, { ...p, type: undefined }]),
  );
  const again = validateInfraspec(JSON.parse(JSON.stringify({ ...typed, processes })) as unknown);
  t.deepEqual(again.findings, []);
  t.deepEqual(again.spec, once);
});

test('legacyMemoryToMegabytes reads k, m and g sizes, rounding up', (t) => {
  t.is(legacyMemoryToMegabytes('256m'), 256);
  t.is(legacyMemoryToMegabytes('2G'), 2048);
  t.is(legacyMemoryToMegabytes('512k'), 1);
  t.is(legacyMemoryToMegabytes('1536K'), 2);
  t.throws(() => legacyMemoryToMegabytes('256'), {
    instanceOf: RangeError,
    message: '"256" is not a memory size such as 256m',
  });
});

test('bucketEnvAlias uppercases a bucket name and replaces other characters with underscores', (t) => {
  t.is(bucketEnvAlias('media.thumbnails-v2'), 'MEDIA_THUMBNAILS_V2');
});
