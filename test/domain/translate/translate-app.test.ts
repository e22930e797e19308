// tier: quick
import test from 'ava';
import type { AppSpec, Process } from '../../../schemas/types.generated.js';
import type { JobSpec, TaskGroupSpec } from '../../../domain/scheduler/index.js';
import { validateInfraspec, type CanonicalAppSpec } from '../../../domain/spec/index.js';
import { JobMetaKey, translateApp, type Translation, type TranslationInput } from '../../../domain/translate/index.js';

const release = {
  commit: 'c0ffee0000000000000000000000000000000000',
  workdir: '/srv/release/app',
  command: 'node server.mjs',
  env: { FROM_RELEASE: '1' },
};
const baseInput: TranslationInput = { release };

/** Validates a spec (failing the test when it is invalid) and returns the canonical form. */
function canonical(spec: AppSpec): CanonicalAppSpec {
  const result = validateInfraspec(spec);
  if (!result.valid || result.spec === undefined)
    throw new Error(result.findings.map((finding) => finding.message).join('\n'));
  return result.spec;
}

function translate(spec: AppSpec, input: Partial<TranslationInput> = {}): Translation {
  return translateApp(canonical(spec), { ...baseInput, ...input });
}

function app(processes: Record<string, Process>, extra: Partial<AppSpec> = {}): AppSpec {
  return { name: 'shop', processes, ...extra };
}

function job(translation: Translation, id: string): JobSpec {
  const found = translation.jobs.find((candidate) => candidate.id === id);
  if (found === undefined) throw new Error(`no job ${id} among ${translation.jobs.map((j) => j.id).join(', ')}`);
  return found;
}

function group(translation: Translation, id: string, name: string): TaskGroupSpec {
  const found = job(translation, id).taskGroups.find((candidate) => candidate.name === name);
  if (found === undefined) throw new Error(`job ${id} has no task group ${name}`);
  return found;
}

const twoRegions = { 'eu-west': { schedulerRegion: 'europe', datacenters: ['eu-1', 'eu-2'] }, 'us-east': {} };

// --- job types and naming -------------------------------------------------------------------------------

test('translateApp puts service and worker processes in one service job named after the app', (t) => {
  const out = translate(app({ web: { port: 8080 }, worker: { command: 'node w.mjs' } }));
  t.deepEqual(
    out.jobs.map((j) => [j.id, j.type]),
    [['shop', 'service']],
  );
  t.deepEqual(
    job(out, 'shop').taskGroups.map((g) => g.name),
    ['web', 'worker'],
  );
  t.is(job(out, 'shop').region, 'local');
  t.deepEqual(job(out, 'shop').datacenters, ['dc1']);
});

test('translateApp makes a periodic job <app>-<process> per scheduled process', (t) => {
  const out = translate(app({ nightly: { schedule: '0 2 * * *', command: 'node n.mjs' } }));
  const nightly = job(out, 'shop-nightly');
  t.is(nightly.type, 'periodic');
  t.deepEqual(nightly.periodic, { cron: '0 2 * * *' });
  t.is(nightly.meta?.[JobMetaKey.process], 'nightly');
});

test('translateApp makes a parameterized batch job <app>-<process> per function process', (t) => {
  const out = translate(
    app({ resize: { function: { timeout: '45s', memory: 512 }, resources: { memory: 64, cpu: 300 } } }),
  );
  const resize = job(out, 'shop-resize');
  t.is(resize.type, 'batch');
  t.deepEqual(resize.parameterized, { payload: 'optional' });
  t.deepEqual(group(out, 'shop-resize', 'resize').task.timeout, { milliseconds: 45_000 });
  t.deepEqual(group(out, 'shop-resize', 'resize').task.resources, { cpuMhz: 300, memoryMb: 512 });
});

test('translateApp gives a function without function.timeout the 30 second default and keeps resources.memory without function.memory', (t) => {
  const out = translate(app({ resize: { function: {}, resources: { memory: 96 } } }));
  t.deepEqual(group(out, 'shop-resize', 'resize').task.timeout, { milliseconds: 30_000 });
  t.is(group(out, 'shop-resize', 'resize').task.resources.memoryMb, 96);
});

test('translateApp emits no service job when every process is a batch process', (t) => {
  const out = translate(app({ nightly: { schedule: '0 2 * * *' }, resize: { function: {} } }));
  t.deepEqual(
    out.jobs.map((j) => j.id),
    ['shop-nightly', 'shop-resize'],
  );
});

test('translateApp records app, commit and region in job meta and leaves the generation to the caller', (t) => {
  const out = translate(app({ web: { port: 8080 } }));
  t.deepEqual(job(out, 'shop').meta, { 'svc.app': 'shop', 'svc.commit': release.commit, 'svc.region': 'local' });
});

test('translateApp suffixes job ids with @<region> and targets the region scheduler and datacenters', (t) => {
  const out = translate(app({ web: { port: 8080 }, resize: { function: {} } }, { regions: twoRegions }));
  t.deepEqual(
    out.jobs.map((j) => j.id),
    ['shop-resize@eu-west', 'shop-resize@us-east', 'shop@eu-west', 'shop@us-east'],
  );
  t.is(job(out, 'shop@eu-west').region, 'europe');
  t.deepEqual(job(out, 'shop@eu-west').datacenters, ['eu-1', 'eu-2']);
  t.is(job(out, 'shop@us-east').region, 'us-east');
  t.deepEqual(job(out, 'shop@us-east').datacenters, ['dc1']);
  t.is(job(out, 'shop@us-east').meta?.[JobMetaKey.region], 'us-east');
});

test('translateApp translates only the selected regions and warns about unknown ones', (t) => {
  const out = translate(app({ web: { port: 8080 } }, { regions: twoRegions }), { regions: ['us-east', 'mars'] });
  t.deepEqual(
    out.jobs.map((j) => j.id),
    ['shop@us-east'],
  );
  t.true(out.warnings.some((w) => w.path === 'regions' && w.message.includes('"mars"')));
});

test('translateApp sorts jobs by id, task groups by process name and env by key', (t) => {
  const out = translate(
    app({ zeta: { port: 1 }, alpha: { command: 'x' }, beta: { schedule: '* * * * *' } }, { env: { Z: '1', A: '2' } }),
  );
  t.deepEqual(
    out.jobs.map((j) => j.id),
    ['shop', 'shop-beta'],
  );
  t.deepEqual(
    job(out, 'shop').taskGroups.map((g) => g.name),
    ['alpha', 'zeta'],
  );
  t.deepEqual(Object.keys(group(out, 'shop', 'alpha').task.env), ['A', 'FROM_RELEASE', 'Z']);
});

// --- placement and scaling --------------------------------------------------------------------------------

test('translateApp places scheduled and singleton processes only in the primary region', (t) => {
  const out = translate(
    app(
      { web: { port: 8080 }, nightly: { schedule: '0 2 * * *' }, indexer: { command: 'x', singleton: true } },
      { regions: twoRegions, primaryRegion: 'us-east' },
    ),
  );
  t.deepEqual(
    out.jobs.map((j) => j.id),
    ['shop-nightly@us-east', 'shop@eu-west', 'shop@us-east'],
  );
  t.deepEqual(
    job(out, 'shop@eu-west').taskGroups.map((g) => g.name),
    ['web'],
  );
  t.deepEqual(
    job(out, 'shop@us-east').taskGroups.map((g) => g.name),
    ['indexer', 'web'],
  );
});

test('translateApp places a process with explicit regions only in those regions', (t) => {
  const out = translate(
    app(
      {
        web: { port: 8080, regions: ['eu-west'] },
        nightly: { schedule: '0 2 * * *', regions: ['eu-west', 'us-east'] },
      },
      { regions: twoRegions, primaryRegion: 'us-east' },
    ),
  );
  t.deepEqual(
    out.jobs.map((j) => j.id),
    ['shop-nightly@eu-west', 'shop-nightly@us-east', 'shop@eu-west'],
  );
});

const countCases: ReadonlyArray<[string, Process, Partial<AppSpec>, string, number]> = [
  ['scaling.min is the count without regions', { port: 1, scaling: { min: 3, per_region: 2 } }, {}, 'shop', 3],
  ['the count defaults to 1', { port: 1 }, {}, 'shop', 1],
  [
    'scaling.per_region is the count in a region',
    { port: 1, scaling: { min: 3, per_region: 2 } },
    { regions: twoRegions },
    'shop@eu-west',
    2,
  ],
  [
    'scaling.min is the count in a region without per_region',
    { port: 1, scaling: { min: 3 } },
    { regions: twoRegions },
    'shop@us-east',
    3,
  ],
];
for (const [what, process, extra, id, count] of countCases) {
  test(`translateApp scaling: ${what}`, (t) => {
    t.is(group(translate(app({ web: process }, extra)), id, 'web').count, count);
  });
}

test('translateApp passes canary.count as the group canary', (t) => {
  const out = translate(app({ web: { port: 8080, scaling: { min: 3 }, canary: { count: 1, evaluateAfter: '2m' } } }));
  t.is(group(out, 'shop', 'web').canary, 1);
  t.false('canary' in translate(app({ web: { port: 8080 } })).jobs[0]!.taskGroups[0]!);
});

test('translateApp sets placement.nodePool as the job node pool of every job', (t) => {
  const out = translate(
    app({ web: { port: 8080 }, nightly: { schedule: '0 * * * *' } }, { placement: { nodePool: 'batch' } }),
  );
  t.deepEqual(
    out.jobs.map((j) => j.nodePool),
    ['batch', 'batch'],
  );
  t.false('nodePool' in translate(app({ web: { port: 8080 } })).jobs[0]!);
});

// --- ports, health and metrics ------------------------------------------------------------------------------

const portCases: ReadonlyArray<[string, Process, Partial<AppSpec>, unknown]> = [
  ['a port is dynamic by default', { port: 8080 }, {}, [{ label: 'http' }]],
  [
    'a port stays dynamic when the app declares endpoints (a new allocation starts beside the old one)',
    { port: 8080 },
    { endpoints: [{ url: 'shop.example.test' }] },
    [{ label: 'http' }],
  ],
  ['a hostPort is the static port', { port: 8080, hostPort: 18080 }, {}, [{ label: 'http', static: 18080 }]],
  [
    'a hostPort wins over the endpoint static port',
    { port: 8080, hostPort: 18080 },
    { endpoints: [{ url: 'shop.example.test' }] },
    [{ label: 'http', static: 18080 }],
  ],
  ['a worker has no ports', { command: 'x' }, {}, []],
  [
    'a separate metrics port is dynamic even with endpoints',
    { port: 8080, metrics: { enabled: true, port: 9464 } },
    { endpoints: [{ url: 'shop.example.test' }] },
    [{ label: 'http' }, { label: 'metrics' }],
  ],
];
for (const [what, process, extra, ports] of portCases) {
  test(`translateApp ports: ${what}`, (t) => {
    t.deepEqual(translate(app({ web: process }, extra)).jobs[0]!.taskGroups[0]!.ports, ports);
  });
}

test('translateApp places several allocations of an app with endpoints without a warning (ports are dynamic)', (t) => {
  const out = translate(
    app({ web: { port: 8080, scaling: { min: 2 } } }, { endpoints: [{ url: 'shop.example.test' }] }),
  );
  t.deepEqual(out.warnings, []);
});

test('translateApp registers <app>-<process> with the HTTP check of health', (t) => {
  const out = translate(app({ web: { port: 8080, health: { path: '/healthz', interval: '15s', timeout: '1500ms' } } }));
  t.deepEqual(group(out, 'shop', 'web').services, [
    {
      name: 'shop-web',
      portLabel: 'http',
      check: { path: '/healthz', interval: { milliseconds: 15_000 }, timeout: { milliseconds: 1500 } },
    },
  ]);
});

test('translateApp fills the health interval and timeout defaults of 10s and 5s', (t) => {
  const out = translate(app({ web: { port: 8080, health: { path: '/h' } } }));
  t.deepEqual(group(out, 'shop', 'web').services[0]!.check, {
    path: '/h',
    interval: { milliseconds: 10_000 },
    timeout: { milliseconds: 5000 },
  });
});

test('translateApp registers a service without health with no check', (t) => {
  t.deepEqual(group(translate(app({ web: { port: 8080 } })), 'shop', 'web').services, [
    { name: 'shop-web', portLabel: 'http' },
  ]);
});

test('translateApp registers without a check and warns when health has no path', (t) => {
  const out = translate(app({ web: { port: 8080, health: { interval: '5s' } } }));
  t.deepEqual(group(out, 'shop', 'web').services, [{ name: 'shop-web', portLabel: 'http' }]);
  t.deepEqual(
    out.warnings.map((w) => w.path),
    ['processes.web.health.path'],
  );
});

test('translateApp tags the main service for metrics served on the process port', (t) => {
  const out = translate(app({ web: { port: 8080, metrics: { enabled: true, path: '/prom' } } }));
  t.deepEqual(group(out, 'shop', 'web').services, [
    { name: 'shop-web', portLabel: 'http', tags: ['metrics', 'metrics-path=/prom'] },
  ]);
});

test('translateApp registers a <app>-<process>-metrics companion on a separate metrics port', (t) => {
  const out = translate(app({ web: { port: 8080, metrics: { enabled: true, port: 9464 } } }));
  t.deepEqual(group(out, 'shop', 'web').services, [
    { name: 'shop-web', portLabel: 'http' },
    { name: 'shop-web-metrics', portLabel: 'metrics', tags: ['metrics', 'metrics-path=/metrics'] },
  ]);
});

test('translateApp treats a metrics port equal to the process port as the process port', (t) => {
  const out = translate(app({ web: { port: 8080, metrics: { enabled: true, port: 8080 } } }));
  t.deepEqual(group(out, 'shop', 'web').ports, [{ label: 'http' }]);
  t.deepEqual(group(out, 'shop', 'web').services, [
    { name: 'shop-web', portLabel: 'http', tags: ['metrics', 'metrics-path=/metrics'] },
  ]);
});

test('translateApp registers only the metrics companion of a worker with a metrics port', (t) => {
  const out = translate(app({ consumer: { command: 'x', metrics: { enabled: true, port: 9464 } } }));
  t.deepEqual(group(out, 'shop', 'consumer').ports, [{ label: 'metrics' }]);
  t.deepEqual(
    group(out, 'shop', 'consumer').services.map((s) => s.name),
    ['shop-consumer-metrics'],
  );
});

test('translateApp ignores disabled metrics', (t) => {
  const out = translate(app({ web: { port: 8080, metrics: { enabled: false, port: 9464 } } }));
  t.deepEqual(group(out, 'shop', 'web').services, [{ name: 'shop-web', portLabel: 'http' }]);
});

test('translateApp warns about metrics it cannot register', (t) => {
  const out = translate(
    app({
      consumer: { command: 'x', metrics: { enabled: true } },
      nightly: { schedule: '0 * * * *', metrics: { enabled: true } },
    }),
  );
  t.deepEqual(out.warnings.map((w) => w.path).sort(), ['processes.consumer.metrics', 'processes.nightly.metrics']);
  t.deepEqual(group(out, 'shop', 'consumer').services, []);
});

// --- drain, resources, command, volumes ---------------------------------------------------------------------

test('translateApp drains with the spec signal and timeout', (t) => {
  const out = translate(app({ web: { port: 1, drain: { signal: 'SIGINT', timeout: '45s' } } }));
  t.deepEqual(group(out, 'shop', 'web').drain, { signal: 'SIGINT', timeout: { milliseconds: 45_000 } });
});

test('translateApp drains with SIGTERM and 5s by default', (t) => {
  t.deepEqual(group(translate(app({ web: { port: 1 } })), 'shop', 'web').drain, {
    signal: 'SIGTERM',
    timeout: { milliseconds: 5000 },
  });
});

test('translateApp replaces an unknown drain signal with SIGTERM and warns', (t) => {
  const out = translate(app({ web: { port: 1, drain: { signal: 'SIGBOGUS' } } }));
  t.is(group(out, 'shop', 'web').drain.signal, 'SIGTERM');
  t.deepEqual(
    out.warnings.map((w) => w.path),
    ['processes.web.drain.signal'],
  );
});

test('translateApp maps resources cpu to cpuMhz and memory to memoryMb', (t) => {
  t.deepEqual(
    group(translate(app({ web: { port: 1, resources: { cpu: 250, memory: 300 } } })), 'shop', 'web').task.resources,
    { cpuMhz: 250, memoryMb: 300 },
  );
});

test('translateApp runs the process command instead of the release command', (t) => {
  const out = translate(app({ web: { port: 1, command: 'node web.mjs --fast' }, worker: {} }), {
    release: { ...release, command: ['node', 'server.mjs'] },
  });
  t.is(group(out, 'shop', 'web').task.command, 'node web.mjs --fast');
  t.deepEqual(group(out, 'shop', 'worker').task.command, ['node', 'server.mjs']);
  t.is(group(out, 'shop', 'worker').task.workdir, '/srv/release/app');
});

test('translateApp passes an image release through and leaves the command to the image', (t) => {
  const out = translate(app({ web: { port: 1 } }), {
    release: { commit: 'abc', env: {}, image: 'registry.example.test/shop@sha256:0123' },
  });
  const task = group(out, 'shop', 'web').task;
  t.is(task.image, 'registry.example.test/shop@sha256:0123');
  t.false('command' in task);
  t.false('workdir' in task);
});

test('translateApp mounts the app volumes into every task', (t) => {
  const out = translate(
    app(
      { web: { port: 1 }, nightly: { schedule: '0 * * * *' } },
      {
        volumes: [
          { name: 'files', mount: '/srv/files' },
          { name: 'certs', mount: '/etc/tls', readOnly: true },
        ],
      },
    ),
  );
  const expected = [
    { volume: 'files', destination: '/srv/files', readOnly: false },
    { volume: 'certs', destination: '/etc/tls', readOnly: true },
  ];
  t.deepEqual(group(out, 'shop', 'web').task.volumes, expected);
  t.deepEqual(group(out, 'shop-nightly', 'nightly').task.volumes, expected);
});
